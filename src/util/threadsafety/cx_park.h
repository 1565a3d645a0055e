/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * MPICH-CX thread synchronization library: parking a polling thread until a
 * core goes idle (MPICH-CX's). The parked thread sleeps until a sentinel thread
 * at SCHED_IDLE runs, most likely on a core with nothing else to do; a park
 * that times out starts a backoff in which the poller yields instead. No
 * privilege needed; Linux only. Design: doc/design/reactivation.md.
 */
#ifndef CX_PARK_H_INCLUDED
#define CX_PARK_H_INCLUDED

#include "cx_sync_common.h"
#include <pthread.h>
#include <time.h>

enum { CX_PARK_OFF, CX_PARK_STARTING, CX_PARK_ON, CX_PARK_FAILED };

typedef struct {
    CX_CACHE_ALIGNED atomic_int parked; /* futex: 1 while parked and not rung */
    atomic_int requests;        /* futex of the sentinel: bumped by every park and by stop */
    atomic_int state;           /* CX_PARK_*; also a futex for the start handshake */
    atomic_bool stop;
    atomic_llong backoff_until; /* CLOCK_MONOTONIC ns: no park before */
    atomic_ulong parks, rings, timeouts;
    long timeout_ns, backoff_ns;
    pthread_t thread;
    bool joinable;              /* thread was created (under m) */
    atomic_int sentinel_tid;    /* its Linux thread id, once running */
    pthread_t last_parker;      /* whose CPUs the sentinel runs on (the parker's) */
    bool has_parker;
    pthread_mutex_t m;          /* start and stop */
} cx_park_t;

#define CX_PARK_INITIALIZER(timeout_ns_, backoff_ns_) \
    { .timeout_ns = (timeout_ns_), .backoff_ns = (backoff_ns_), .m = PTHREAD_MUTEX_INITIALIZER }

static inline long long cx_park_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long) t.tv_sec * 1000000000LL + t.tv_nsec;
}

#ifdef __linux__
#include <linux/futex.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#ifndef SCHED_IDLE
#define SCHED_IDLE 5    /* Linux's value; <sched.h> shows it with _GNU_SOURCE */
#endif

/* Sleeps while *w == v, at most ns (0: no limit). */
static inline void cx_park__futex_wait(atomic_int * w, int v, long long ns)
{
    struct timespec t = { (time_t) (ns / 1000000000LL), (long) (ns % 1000000000LL) };
    syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, v, ns > 0 ? &t : NULL, NULL, 0);
}

static inline void cx_park__futex_wake(atomic_int * w)
{
    syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* The calling thread to the lowest priority it may take: SCHED_IDLE, or
 * failing that (a seccomp filter, say) nice 19. */
static inline bool cx_park__lower_self(void)
{
    struct sched_param sp = { 0 };
    if (sched_setscheduler(0, SCHED_IDLE, &sp) == 0)
        return true;
    return setpriority(PRIO_PROCESS, (id_t) syscall(SYS_gettid), 19) == 0;
}

static inline void *cx_park__sentinel(void *arg)
{
    cx_park_t *p = arg;
    atomic_store(&p->sentinel_tid, (int) syscall(SYS_gettid));
    int ok = cx_park__lower_self()? CX_PARK_ON : CX_PARK_FAILED;
    atomic_store(&p->state, ok);
    cx_park__futex_wake(&p->state);
    if (ok != CX_PARK_ON)
        return NULL;
    for (;;) {
        int seen = atomic_load(&p->requests);
        if (atomic_load(&p->stop))
            break;
        int one = 1;
        /* we run: nothing else wanted this core; ring */
        if (atomic_compare_exchange_strong(&p->parked, &one, 0))
            cx_park__futex_wake(&p->parked);
        cx_park__futex_wait(&p->requests, seen, 0);
    }
    return NULL;
}

/* Starts the sentinel once (any thread may call it); false if it cannot be
 * created or lowered, and then nobody may park. */
static inline bool cx_park_start(cx_park_t * p)
{
    int s = atomic_load_explicit(&p->state, memory_order_acquire);
    if (s == CX_PARK_ON || s == CX_PARK_FAILED)
        return s == CX_PARK_ON;
    pthread_mutex_lock(&p->m);
    if (atomic_load(&p->state) == CX_PARK_OFF) {
        atomic_store(&p->stop, false);
        atomic_store(&p->state, CX_PARK_STARTING);
        p->has_parker = false;
        /* no application signal is ever delivered to the sentinel */
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, &old);
        p->joinable = pthread_create(&p->thread, NULL, cx_park__sentinel, p) == 0;
        if (!p->joinable)
            atomic_store(&p->state, CX_PARK_FAILED);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        /* a sentinel that could not lower itself says so and returns */
        while (atomic_load(&p->state) == CX_PARK_STARTING)
            cx_park__futex_wait(&p->state, CX_PARK_STARTING, 0);
    }
    pthread_mutex_unlock(&p->m);
    return atomic_load(&p->state) == CX_PARK_ON;
}

/* Whether parking may help now: not within backoff_ns of a time-out. */
static inline bool cx_park_due(cx_park_t * p)
{
    long long until = atomic_load_explicit(&p->backoff_until, memory_order_relaxed);
    return until == 0 || cx_park_now_ns() >= until;
}

/* Parks the caller (after cx_park_start succeeded) until the sentinel rings
 * or timeout_ns passed; false on a time-out, which starts the backoff. */
static inline bool cx_park(cx_park_t * p)
{
    atomic_fetch_add_explicit(&p->parks, 1, memory_order_relaxed);
    pthread_t self = pthread_self();
    if (!p->has_parker || !pthread_equal(self, p->last_parker)) {
        /* a new parker: the sentinel moves to its CPUs (best effort) */
        cpu_set_t cpus;
        if (pthread_getaffinity_np(self, sizeof(cpus), &cpus) == 0)
            sched_setaffinity(atomic_load(&p->sentinel_tid), sizeof(cpus), &cpus);
        p->last_parker = self;
        p->has_parker = true;
    }
    long long deadline = cx_park_now_ns() + p->timeout_ns;
    atomic_store(&p->parked, 1);
    atomic_fetch_add(&p->requests, 1);
    cx_park__futex_wake(&p->requests);
    while (atomic_load(&p->parked) == 1) {
        long long left = deadline - cx_park_now_ns();
        if (left <= 0)
            break;
        cx_park__futex_wait(&p->parked, 1, left);       /* spurious returns loop */
    }
    int one = 1;
    if (!atomic_compare_exchange_strong(&p->parked, &one, 0)) {
        atomic_fetch_add_explicit(&p->rings, 1, memory_order_relaxed);
        return true;
    }
    atomic_fetch_add_explicit(&p->timeouts, 1, memory_order_relaxed);
    atomic_store_explicit(&p->backoff_until, cx_park_now_ns() + p->backoff_ns,
                          memory_order_relaxed);
    return false;
}

/* Stops and joins the sentinel (nobody parked); a later start starts anew. */
static inline void cx_park_stop(cx_park_t * p)
{
    pthread_mutex_lock(&p->m);
    if (p->joinable) {
        atomic_store(&p->stop, true);
        atomic_fetch_add(&p->requests, 1);
        cx_park__futex_wake(&p->requests);
        pthread_join(p->thread, NULL);
        p->joinable = false;
    }
    atomic_store(&p->state, CX_PARK_OFF);
    atomic_store(&p->backoff_until, 0);
    pthread_mutex_unlock(&p->m);
}

#else /* no futexes or SCHED_IDLE: nobody parks */
static inline bool cx_park_start(cx_park_t * p)
{
    (void) p;
    return false;
}

static inline bool cx_park_due(cx_park_t * p)
{
    (void) p;
    return false;
}

static inline bool cx_park(cx_park_t * p)
{
    (void) p;
    return false;
}

static inline void cx_park_stop(cx_park_t * p)
{
    (void) p;
}
#endif

#endif /* CX_PARK_H_INCLUDED */
