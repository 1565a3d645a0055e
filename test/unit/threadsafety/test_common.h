/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * Shared helpers of the threadsafety unit tests: checks, bounded waits,
 * thread start/join, and generic lock tests (mutual exclusion, nesting, FIFO)
 * driven through a table of lock operations.
 */
#ifndef TEST_COMMON_H_INCLUDED
#define TEST_COMMON_H_INCLUDED

#include "cx_sync_common.h"
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ThreadSanitizer slows everything down 5-20x: scale the loop counts. */
#ifdef __SANITIZE_THREAD__
#define T_SCALE 8
#else
#define T_SCALE 1
#endif

/* A bounded wait that expires means a hang: fail instead of stalling. */
#define T_WAIT_LIMIT_S 20.0

/* A broken lock hangs inside its own spin loop, out of reach of WAIT_UNTIL:
 * a whole-process watchdog turns that into a quick failure. */
#define T_WATCHDOG_S (30 * (T_SCALE > 1 ? 2 : 1))

static void t_watchdog_fired(int sig)
{
    static const char msg[] = "FAIL: watchdog: the test hung (deadlock or lost wake-up)\n";
    (void) sig;
    if (write(2, msg, sizeof(msg) - 1) < 0) {
        /* nothing more to do */
    }
    _exit(3);
}

__attribute__((constructor))
static void t_watchdog_start(void)
{
    signal(SIGALRM, t_watchdog_fired);
    alarm(T_WATCHDOG_S);
}

static inline double t_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void t_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 3, 4)));
static void t_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "FAIL %s:%d: ", file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
    exit(1);
}

#define CHECK(cond, ...) \
    do { if (!(cond)) t_fail(__FILE__, __LINE__, __VA_ARGS__); } while (0)

/* Spin (yielding) until expr holds; fail after T_WAIT_LIMIT_S. */
#define WAIT_UNTIL(expr) \
    do { \
        double t_deadline_ = t_now() + T_WAIT_LIMIT_S; \
        while (!(expr)) { \
            if (t_now() > t_deadline_) \
                t_fail(__FILE__, __LINE__, "timed out waiting for: %s", #expr); \
            sched_yield(); \
        } \
    } while (0)

static inline void t_sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (long) (ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

/* xorshift, per thread */
static inline uint32_t t_rand(uint32_t * s)
{
    uint32_t x = *s;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *s = x;
}

typedef struct {
    pthread_t tid;
    int id;
    void *arg;
} t_thread_t;

static inline void t_start(t_thread_t * t, int id, void *(*fn)(void *), void *arg)
{
    t->id = id;
    t->arg = arg;
    int err = pthread_create(&t->tid, NULL, fn, t);
    CHECK(err == 0, "pthread_create: %s", strerror(err));
}

static inline void t_join(t_thread_t * t)
{
    pthread_join(t->tid, NULL);
}

/* A thread that computes (spins) until t_hog_stop: keeps a core busy. */
typedef struct {
    pthread_t tid;
    atomic_bool stop;
} t_hog_t;

static void *t_hog_main(void *arg)
{
    t_hog_t *h = arg;
    volatile unsigned long n = 0;
    while (!atomic_load(&h->stop))
        n++;
    return NULL;
}

static inline void t_hog_start(t_hog_t * h)
{
    atomic_store(&h->stop, false);
    CHECK(pthread_create(&h->tid, NULL, t_hog_main, h) == 0, "hog thread");
}

static inline void t_hog_stop(t_hog_t * h)
{
    atomic_store(&h->stop, true);
    pthread_join(h->tid, NULL);
}

#ifdef CPU_ZERO /* _GNU_SOURCE */
/* The first CPU the caller may run on; *mask gets its whole mask. */
static inline int t_first_cpu(cpu_set_t * mask)
{
    CHECK(sched_getaffinity(0, sizeof(*mask), mask) == 0, "getaffinity");
    int cpu = 0;
    while (!CPU_ISSET(cpu, mask))
        cpu++;
    return cpu;
}

/* Pins the caller, and the threads it creates from now on, to its first
 * CPU; *old gets the mask that t_unpin restores. */
static inline int t_pin_first_cpu(cpu_set_t * old)
{
    cpu_set_t one;
    int cpu = t_first_cpu(old);
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    CHECK(sched_setaffinity(0, sizeof(one), &one) == 0, "setaffinity");
    return cpu;
}

static inline void t_unpin(const cpu_set_t * old)
{
    CHECK(sched_setaffinity(0, sizeof(*old), old) == 0, "setaffinity back");
}
#endif

/* ---- generic lock tests ---- */

typedef struct {
    const char *name;
    void (*acquire)(void *l);
    void (*release)(void *l);
    bool (*tryacquire)(void *l);        /* NULL: none */
    void (*acquire_low)(void *l);       /* NULL: none */
     uintptr_t(*queue_token) (void *l); /* changes when a waiter enqueues; NULL: no FIFO test */
} t_lock_ops_t;

/* Shared data of one critical section: a plain counter updated with a
 * deliberately slow read-modify-write, and an occupancy flag that catches
 * two threads inside at once. */
typedef struct {
    CX_CACHE_ALIGNED atomic_int occupied;
    long counter;
} t_cs_t;

static inline void t_cs_enter(t_cs_t * cs)
{
    CHECK(atomic_exchange(&cs->occupied, 1) == 0, "mutual exclusion violated");
    long v = cs->counter;
    cx_cpu_relax();
    cs->counter = v + 1;
}

static inline void t_cs_exit(t_cs_t * cs)
{
    atomic_store(&cs->occupied, 0);
}

/* Stress runs stop at a deadline as well as after max_iters, so that a
 * loaded or oversubscribed machine (FIFO locks convoy when the next waiter
 * is descheduled) bounds the time, not the verdict: the counter must equal
 * the number of critical sections the threads report, whatever that is. */
#ifndef T_STRESS_SECONDS
#define T_STRESS_SECONDS (0.25 * (T_SCALE > 1 ? 3 : 1))
#endif

typedef struct {
    const t_lock_ops_t *ops;
    void *lock, *lock2;
    t_cs_t *cs, *cs2;
    int iters;
    bool mix;                   /* use acquire_low / tryacquire as well */
    pthread_barrier_t *start;
    atomic_int stop, finished;
    long done[64];              /* per thread: iterations completed */
    long both[64];              /* nested: iterations that took both locks */
} t_mutex_arg_t;

/* Acquire with the i-th way of this thread: normal, low priority, or a
 * tryacquire loop. */
static inline void t_acquire_mixed(const t_lock_ops_t * ops, void *l, int way)
{
    if (way == 1 && ops->acquire_low) {
        ops->acquire_low(l);
    } else if (way == 2 && ops->tryacquire) {
        unsigned spins = 0;
        while (!ops->tryacquire(l))
            cx_spin_pause(&spins);
    } else {
        ops->acquire(l);
    }
}

static void *t_mutex_thread(void *p)
{
    t_thread_t *t = p;
    t_mutex_arg_t *a = t->arg;
    int i;
    pthread_barrier_wait(a->start);
    for (i = 0; i < a->iters && !atomic_load_explicit(&a->stop, memory_order_relaxed); i++) {
        int way = a->mix ? (t->id + i) % 3 : 0;
        t_acquire_mixed(a->ops, a->lock, way);
        t_cs_enter(a->cs);
        t_cs_exit(a->cs);
        a->ops->release(a->lock);
    }
    a->done[t->id] = i;
    atomic_fetch_add(&a->finished, 1);
    return NULL;
}

/* Run nthreads copies of fn until they finish or the deadline passes. */
static inline void t_run_stress(t_mutex_arg_t * a, int nthreads, void *(*fn)(void *))
{
    t_thread_t th[64];
    pthread_barrier_t start;
    double deadline;

    CHECK(nthreads <= 64, "too many threads");
    a->start = &start;
    atomic_init(&a->stop, 0);
    atomic_init(&a->finished, 0);
    pthread_barrier_init(&start, NULL, (unsigned) nthreads);
    for (int i = 0; i < nthreads; i++)
        t_start(&th[i], i, fn, a);
    deadline = t_now() + T_STRESS_SECONDS;
    while (atomic_load(&a->finished) < nthreads && t_now() < deadline)
        t_sleep_ms(2);
    atomic_store(&a->stop, 1);
    for (int i = 0; i < nthreads; i++)
        t_join(&th[i]);
    pthread_barrier_destroy(&start);
}

/* N threads x up to iters acquisitions; the counter must come out exact. */
static inline void t_mutex_test(const t_lock_ops_t * ops, void *lock, int nthreads, int iters,
                                bool mix)
{
    t_cs_t cs = { 0 };
    t_mutex_arg_t a = { 0 };
    long total = 0;
    double t0 = t_now();

    a.ops = ops;
    a.lock = lock;
    a.cs = &cs;
    a.iters = iters;
    a.mix = mix;
    t_run_stress(&a, nthreads, t_mutex_thread);
    for (int i = 0; i < nthreads; i++)
        total += a.done[i];
    CHECK(cs.counter == total, "%s: counter %ld, expected %ld", ops->name, cs.counter, total);
    printf("%s mutex%s: %d threads: %ld acquisitions: ok (%.3fs)\n", ops->name,
           mix ? " (mixed)" : "", nthreads, total, t_now() - t0);
}

static void *t_nested_thread(void *p)
{
    t_thread_t *t = p;
    t_mutex_arg_t *a = t->arg;
    long both = 0;
    int i;
    pthread_barrier_wait(a->start);
    for (i = 0; i < a->iters && !atomic_load_explicit(&a->stop, memory_order_relaxed); i++) {
        int way = a->mix ? (t->id + i) % 3 : 0;
        /* always A before B: no deadlock; B alone sometimes */
        bool take_a = (i % 4) != 3;
        if (take_a) {
            t_acquire_mixed(a->ops, a->lock, way);
            t_cs_enter(a->cs);
            both++;
        }
        t_acquire_mixed(a->ops, a->lock2, (way + 1) % 3);
        t_cs_enter(a->cs2);
        t_cs_exit(a->cs2);
        if (take_a && (i & 1)) {
            /* release in acquisition order, not LIFO */
            t_cs_exit(a->cs);
            a->ops->release(a->lock);
            a->ops->release(a->lock2);
        } else {
            a->ops->release(a->lock2);
            if (take_a) {
                t_cs_exit(a->cs);
                a->ops->release(a->lock);
            }
        }
    }
    a->done[t->id] = i;
    a->both[t->id] = both;
    atomic_fetch_add(&a->finished, 1);
    return NULL;
}

/* Each thread holds two locks of the same type at once. */
static inline void t_nested_test(const t_lock_ops_t * ops, void *la, void *lb, int nthreads,
                                 int iters, bool mix)
{
    t_cs_t csa = { 0 }, csb = { 0 };
    t_mutex_arg_t a = { 0 };
    long both = 0, total = 0;

    a.ops = ops;
    a.lock = la;
    a.lock2 = lb;
    a.cs = &csa;
    a.cs2 = &csb;
    a.iters = iters;
    a.mix = mix;
    t_run_stress(&a, nthreads, t_nested_thread);
    for (int i = 0; i < nthreads; i++) {
        total += a.done[i];
        both += a.both[i];
    }
    CHECK(csa.counter == both, "%s nested: outer counter %ld, expected %ld",
          ops->name, csa.counter, both);
    CHECK(csb.counter == total, "%s nested: inner counter %ld, expected %ld",
          ops->name, csb.counter, total);
    printf("%s nested: %d threads: %ld/%ld acquisitions: ok\n", ops->name, nthreads, total, both);
}

typedef struct {
    const t_lock_ops_t *ops;
    void *lock;
    atomic_int pos;
    int order[64];
} t_fifo_arg_t;

static void *t_fifo_thread(void *p)
{
    t_thread_t *t = p;
    t_fifo_arg_t *a = t->arg;
    a->ops->acquire(a->lock);
    a->order[atomic_fetch_add(&a->pos, 1)] = t->id;
    a->ops->release(a->lock);
    return NULL;
}

/* The main thread holds the lock; threads 0..n-1 enqueue one at a time (the
 * next starts only once the previous one is seen in the queue); they must
 * be served in that order. */
static inline void t_fifo_test(const t_lock_ops_t * ops, void *lock, int nthreads, int rounds)
{
    t_thread_t th[64];
    t_fifo_arg_t a;

    for (int r = 0; r < rounds; r++) {
        a.ops = ops;
        a.lock = lock;
        atomic_init(&a.pos, 0);
        ops->acquire(lock);
        for (int i = 0; i < nthreads; i++) {
            uintptr_t before = ops->queue_token(lock);
            t_start(&th[i], i, t_fifo_thread, &a);
            WAIT_UNTIL(ops->queue_token(lock) != before);
        }
        ops->release(lock);
        for (int i = 0; i < nthreads; i++)
            t_join(&th[i]);
        for (int i = 0; i < nthreads; i++)
            CHECK(a.order[i] == i, "%s fifo round %d: position %d served thread %d",
                  ops->name, r, i, a.order[i]);
    }
    printf("%s fifo: %d threads x %d rounds: ok\n", ops->name, nthreads, rounds);
}

/* tryacquire must fail while another thread holds the lock, succeed when free. */
typedef struct {
    const t_lock_ops_t *ops;
    void *lock;
    atomic_int held, done;
} t_try_arg_t;

static void *t_try_holder(void *p)
{
    t_thread_t *t = p;
    t_try_arg_t *a = t->arg;
    a->ops->acquire(a->lock);
    atomic_store(&a->held, 1);
    WAIT_UNTIL(atomic_load(&a->done));
    a->ops->release(a->lock);
    return NULL;
}

static inline void t_try_test(const t_lock_ops_t * ops, void *lock)
{
    t_thread_t th;
    t_try_arg_t a = { ops, lock, 0, 0 };

    CHECK(ops->tryacquire(lock), "%s: tryacquire of a free lock failed", ops->name);
    CHECK(!ops->tryacquire(lock), "%s: tryacquire of a lock we hold succeeded", ops->name);
    ops->release(lock);
    t_start(&th, 0, t_try_holder, &a);
    WAIT_UNTIL(atomic_load(&a.held));
    for (int i = 0; i < 1000; i++)
        CHECK(!ops->tryacquire(lock), "%s: tryacquire succeeded while another thread holds it",
              ops->name);
    atomic_store(&a.done, 1);
    t_join(&th);
    CHECK(ops->tryacquire(lock), "%s: tryacquire failed after the holder released", ops->name);
    ops->release(lock);
    printf("%s try: ok\n", ops->name);
}

#endif /* TEST_COMMON_H_INCLUDED */
