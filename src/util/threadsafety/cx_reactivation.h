/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * MPICH-CX thread synchronization library: selective reactivation with
 * synchronization counters (Dang et al., "Advanced Thread Synchronization for
 * Multithreaded MPI Implementations", Figs. 6 and 7): one blocked thread, the
 * server, polls; waiters sleep on counters their completions signal. Also the
 * lazy hand-over, nested waits, the crowding limit of `auto` and the idle-
 * priority server. Usage, rules and hazards fixed: doc/design/reactivation.md.
 */
#ifndef CX_REACTIVATION_H_INCLUDED
#define CX_REACTIVATION_H_INCLUDED

#include "cx_sync_common.h"
#include <errno.h>
#include <pthread.h>
#include <time.h>

#define CX_SCOUNT_USC 0 /* user-level: the waiter spins, then yields */
#define CX_SCOUNT_KSC 1 /* kernel-level: mutex + condition variable */

/* USC: relax iterations before the waiter starts yielding the CPU */
#ifndef CX_SCOUNT_USC_SPINS
#define CX_SCOUNT_USC_SPINS 1024
#endif

/* KSC: the longest a waiter sleeps before it looks for a vacant server role
 * itself (cx_scount_wait_timed, cx_reactivation_resign_lazy). */
#define CX_SCOUNT_KSC_HANDOVER_NS 1000000L

typedef struct cx_scount {
    int count;                  /* pending operations (external lock) */
    atomic_int signaled;        /* set by the waker, cleared by the waiter */
    int kind;                   /* CX_SCOUNT_USC or CX_SCOUNT_KSC */
    bool in_list;               /* in the waiter list (external lock) */
    struct cx_scount *prev, *next;
    pthread_mutex_t m;          /* KSC only */
    pthread_cond_t cv;          /* KSC only */
} cx_scount_t;

typedef struct {
    bool server_present;
    cx_scount_t *head, *tail;   /* waiters, FIFO */
    unsigned long elections;    /* try_elect successes */
    unsigned long counted_wakeups;      /* wakes by a completion (count reached 0) */
    unsigned long forced_wakeups;       /* wakes to hand over the server role */
    unsigned long handover_timeouts;    /* timed waits that ended without a wake */
    unsigned long server_polls; /* polls of the server (cx_reactivation_polled) */
    unsigned long stall_polls;  /* waiters that polled for a stalled server */
} cx_reactivation_t;

static inline void cx_scount_init(cx_scount_t * c, int kind)
{
    c->count = 0;
    atomic_init(&c->signaled, 0);
    c->kind = kind;
    c->in_list = false;
    c->prev = c->next = NULL;
    if (kind == CX_SCOUNT_KSC) {
        pthread_mutex_init(&c->m, NULL);
        /* timed waits measure on the monotonic clock: a step of the wall
         * clock must not stretch the 1 ms a vacant server role can wait */
        pthread_condattr_t a;
        pthread_condattr_init(&a);
        pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
        pthread_cond_init(&c->cv, &a);
        pthread_condattr_destroy(&a);
    }
}

static inline void cx_scount_destroy(cx_scount_t * c)
{
    if (c->kind == CX_SCOUNT_KSC) {
        pthread_cond_destroy(&c->cv);
        pthread_mutex_destroy(&c->m);
    }
}

/* Under the external lock, before waiting: n operations still pending
 * (computed after the last poll). Starts a new round: a flag left over from
 * an earlier wake is cleared. */
static inline void cx_scount_arm(cx_scount_t * c, int n)
{
    c->count = n;
    atomic_store_explicit(&c->signaled, 0, memory_order_relaxed);
}

static inline void cx_scount__wake(cx_scount_t * c)
{
    if (c->kind == CX_SCOUNT_KSC) {
        /* under m: the waiter checks the flag under m before sleeping */
        pthread_mutex_lock(&c->m);
        atomic_store_explicit(&c->signaled, 1, memory_order_relaxed);
        pthread_cond_signal(&c->cv);
        pthread_mutex_unlock(&c->m);
    } else {
        atomic_store_explicit(&c->signaled, 1, memory_order_release);
    }
}

/* Called with the external lock held; returns with it held again (taken
 * with lock_low). Returns after a wake, counted or forced, or (timeout_ns >
 * 0) once timeout_ns passed without one: false then (a USC waiter looks at
 * the clock only once its spins are over, between yields). The caller
 * re-checks its requests either way. */
static inline bool cx_scount_wait_timed(cx_scount_t * c, void (*unlock)(void *),
                                        void (*lock_low)(void *), void *lockctx, long timeout_ns)
{
    bool woken = true;
    unlock(lockctx);
    if (c->kind == CX_SCOUNT_KSC) {
        struct timespec until;
        if (timeout_ns > 0) {
            clock_gettime(CLOCK_MONOTONIC, &until);
            until.tv_sec += (until.tv_nsec + timeout_ns) / 1000000000L;
            until.tv_nsec = (until.tv_nsec + timeout_ns) % 1000000000L;
        }
        pthread_mutex_lock(&c->m);
        /* loop: condvars wake spuriously */
        while (!atomic_load_explicit(&c->signaled, memory_order_relaxed)) {
            if (timeout_ns <= 0)
                pthread_cond_wait(&c->cv, &c->m);
            else if (pthread_cond_timedwait(&c->cv, &c->m, &until) == ETIMEDOUT) {
                woken = atomic_load_explicit(&c->signaled, memory_order_relaxed);
                break;
            }
        }
        atomic_store_explicit(&c->signaled, 0, memory_order_relaxed);
        pthread_mutex_unlock(&c->m);
    } else {
        /* the time limit is read only once spinning is over */
        unsigned spins = 0;
        bool timing = false;
        struct timespec until, now;
        while (!atomic_load_explicit(&c->signaled, memory_order_acquire)) {
            if (spins < CX_SCOUNT_USC_SPINS) {
                spins++;
                cx_cpu_relax();
                continue;
            }
            if (timeout_ns > 0) {
                clock_gettime(CLOCK_MONOTONIC, &now);
                if (!timing) {
                    timing = true;
                    until.tv_sec = now.tv_sec + (now.tv_nsec + timeout_ns) / 1000000000L;
                    until.tv_nsec = (now.tv_nsec + timeout_ns) % 1000000000L;
                } else if (now.tv_sec > until.tv_sec ||
                           (now.tv_sec == until.tv_sec && now.tv_nsec >= until.tv_nsec)) {
                    woken = atomic_load_explicit(&c->signaled, memory_order_acquire);
                    break;
                }
            }
            sched_yield();
        }
        atomic_store_explicit(&c->signaled, 0, memory_order_relaxed);
    }
    lock_low(lockctx);
    return woken;
}

static inline void cx_scount_wait(cx_scount_t * c, void (*unlock)(void *),
                                  void (*lock_low)(void *), void *lockctx)
{
    cx_scount_wait_timed(c, unlock, lock_low, lockctx, 0);
}

/* No server: the caller becomes it. */
static inline bool cx_reactivation_try_elect(cx_reactivation_t * r)
{
    if (r->server_present)
        return false;
    r->server_present = true;
    r->elections++;
    return true;
}

/* Idempotent (hazard b). */
static inline void cx_reactivation_add_waiter(cx_reactivation_t * r, cx_scount_t * c)
{
    if (c->in_list)
        return;
    c->next = NULL;
    c->prev = r->tail;
    if (r->tail != NULL)
        r->tail->next = c;
    else
        r->head = c;
    r->tail = c;
    c->in_list = true;
}

/* No-op when c is not in the list (hazard b). */
static inline void cx_reactivation_remove_waiter(cx_reactivation_t * r, cx_scount_t * c)
{
    if (!c->in_list)
        return;
    if (c->prev != NULL)
        c->prev->next = c->next;
    else
        r->head = c->next;
    if (c->next != NULL)
        c->next->prev = c->prev;
    else
        r->tail = c->prev;
    c->prev = c->next = NULL;
    c->in_list = false;
}

/* No server and somebody waiting: force-wake the oldest waiter so that it
 * re-enters and can elect itself. Any thread leaving the progress loop calls
 * this (a non-server too: the thread a resigning server woke may complete
 * and leave without ever becoming server). */
static inline void cx_reactivation_wake_next(cx_reactivation_t * r)
{
    cx_scount_t *c = r->head;
    if (r->server_present || c == NULL)
        return;
    cx_reactivation_remove_waiter(r, c);
    r->forced_wakeups++;
    cx_scount__wake(c);
}

/* The server leaves. */
static inline void cx_reactivation_resign(cx_reactivation_t * r)
{
    r->server_present = false;
    cx_reactivation_wake_next(r);
}

/* The server leaves without waking a successor: for waiters that sleep at
 * most CX_SCOUNT_KSC_HANDOVER_NS (cx_scount_wait_timed) and then take the
 * vacant role themselves.  A thread that leaves the server role usually
 * comes back to wait within microseconds (it issues its next operations)
 * and takes the role again; the forced wake-up, a context switch to a
 * thread that then mostly polls in its place, cost more than it saved when
 * threads outnumber cores (doc/design/reactivation.md). */
static inline void cx_reactivation_resign_lazy(cx_reactivation_t * r)
{
    r->server_present = false;
}

/* Counted signal from a completion callback (under the external lock). The
 * waiter is woken, and leaves the list, only when its last pending operation
 * completes (hazard a). Harmless on a counter nobody armed (hazard c). */
static inline void cx_reactivation_signal(cx_reactivation_t * r, cx_scount_t * c)
{
    if (c->count <= 0)
        return;
    if (--c->count > 0)
        return;
    cx_reactivation_remove_waiter(r, c);
    r->counted_wakeups++;
    cx_scount__wake(c);
}

/* ---- nesting (see the top of this file) ---- */

/* One per thread. */
typedef struct {
    int depth;                  /* progress loops entered and not left */
    bool serving;               /* the outermost one holds the server role */
} cx_reactivation_self_t;

typedef enum {
    CX_NEST_OUTER,              /* outermost loop: elect, sleep, resign as usual */
    CX_NEST_POLL,               /* nested: poll only, never sleep */
    CX_NEST_SERVE               /* nested in the server: poll for everyone, never sleep */
} cx_nest_t;

/* At the start of a loop (no lock needed: thread-local); every enter is
 * matched by a cx_reactivation_leave. */
static inline cx_nest_t cx_reactivation_enter(cx_reactivation_self_t * s)
{
    if (s->depth++ == 0)
        return CX_NEST_OUTER;
    return s->serving ? CX_NEST_SERVE : CX_NEST_POLL;
}

static inline void cx_reactivation_leave(cx_reactivation_self_t * s)
{
    s->depth--;
}

/* try_elect for the loop s is in: only an outermost loop may become the
 * server, and its thread then serves until cx_reactivation_resign_as. */
static inline bool cx_reactivation_try_elect_as(cx_reactivation_t * r, cx_reactivation_self_t * s)
{
    if (s->depth != 1 || s->serving || !cx_reactivation_try_elect(r))
        return false;
    s->serving = true;
    return true;
}

/* The outermost loop of the server leaves (lazy: cx_reactivation_resign_lazy). */
static inline void cx_reactivation_resign_as(cx_reactivation_t * r, cx_reactivation_self_t * s,
                                             bool lazy)
{
    s->serving = false;
    if (lazy)
        cx_reactivation_resign_lazy(r);
    else
        cx_reactivation_resign(r);
}

/* ---- a waiter watching the server (see the top of this file) ---- */

/* Timed sleeps in a row, with no poll of the server in between, after which
 * a waiter polls itself: 2 so that a server parked for its longest park
 * (as long as one sleep) is not taken for stalled. */
#define CX_SERVER_STALL_TIMEOUTS 2

typedef struct {
    unsigned long polls;        /* server_polls when last seen to move */
    int quiet;                  /* timed sleeps since */
} cx_server_watch_t;

/* The server after each of its polls (under the external lock). */
static inline void cx_reactivation_polled(cx_reactivation_t * r)
{
    r->server_polls++;
}

/* A waiter, when its wait begins (under the external lock). */
static inline void cx_server_watch_start(cx_reactivation_t * r, cx_server_watch_t * w)
{
    w->polls = r->server_polls;
    w->quiet = 0;
}

/* A waiter whose timed sleep ended without a wake (under the external
 * lock): true when it should poll once itself, the server having polled
 * nothing for CX_SERVER_STALL_TIMEOUTS sleeps in a row. */
static inline bool cx_server_watch_stalled(cx_reactivation_t * r, cx_server_watch_t * w)
{
    if (!r->server_present || r->server_polls != w->polls) {
        w->polls = r->server_polls;
        w->quiet = 0;
        return false;
    }
    if (++w->quiet < CX_SERVER_STALL_TIMEOUTS)
        return false;
    w->quiet = 0;
    r->stall_polls++;
    return true;
}

/* Waiting that adapts to crowding (MPICH-CX's MPIR_CVAR_CH4_CX_WAIT=auto):
 * blocked threads poll, as MPICH's do, while at most CX_CROWD_PER_CORE
 * of them per core wait; beyond, selective reactivation.  The cores a rank
 * can count on: those it may run on, and no more than its share of the
 * node's when local_ranks share the node (at least one). */
#define CX_CROWD_PER_CORE 2

static inline int cx_crowd_limit(int node_cpus, int affinity_cpus, int local_ranks)
{
    int cores = affinity_cpus;
    if (local_ranks < 1)
        local_ranks = 1;
    if (node_cpus / local_ranks < cores)
        cores = node_cpus / local_ranks;
    if (cores < 1)
        cores = 1;
    return CX_CROWD_PER_CORE * cores;
}

/* The server at idle scheduling priority (MPICH-CX's, not the paper's;
 * MPIR_CVAR_CH4_CX_SERVER_IDLE).  With more threads than cores, a server
 * that polls and yields still takes its fair share of a core, and a thread it
 * wakes, or any thread with work, waits behind it.  At SCHED_IDLE
 * the server runs only while no other thread wants its core, and a wake-up
 * preempts it at once.  Linux lets a thread move itself to SCHED_IDLE, but
 * back to SCHED_OTHER only with CAP_SYS_NICE or an RLIMIT_NICE that allows
 * its nice value (20 - nice or more): cx_server_sched_probe tries both
 * moves in a throwaway thread first, so no thread of ours is left idle. */
#ifdef __linux__
#include <sched.h>
#include <sys/resource.h>
#ifndef SCHED_IDLE
#define SCHED_IDLE 5    /* Linux's value; <sched.h> shows it with _GNU_SOURCE */
#endif
#endif

typedef struct {
    int policy;                 /* the thread's own, restored on leaving */
    struct sched_param param;
    bool eligible;              /* cx_server_sched_check: it may move */
    bool idle;                  /* moved to SCHED_IDLE by cx_server_sched_idle */
} cx_server_sched_t;

/* No nice value: getpriority failed, or not Linux. */
#define CX_SERVER_SCHED_NO_NICE (-1000)

/* The calling thread's nice value (Linux: per thread). */
static inline int cx_server_sched_nice(void)
{
#ifdef __linux__
    errno = 0;
    int n = getpriority(PRIO_PROCESS, 0);
    return (n == -1 && errno) ? CX_SERVER_SCHED_NO_NICE : n;
#else
    return CX_SERVER_SCHED_NO_NICE;
#endif
}

/* Reads the calling thread's policy once (a server moves many times per
 * wait): it may move when it runs SCHED_OTHER at a nice value of at least
 * min_nice (the probe's: one it may return from).  Threads under a
 * real-time or batch policy are left alone. */
static inline bool cx_server_sched_check(cx_server_sched_t * s, int min_nice)
{
    s->idle = s->eligible = false;
#ifdef __linux__
    /* Linux's calls on thread 0 act on the calling thread; glibc's pthread_*
     * ones would cache a policy the watchdog below changes behind them */
    s->policy = sched_getscheduler(0);
    s->eligible = s->policy == SCHED_OTHER && sched_getparam(0, &s->param) == 0 &&
        cx_server_sched_nice() >= min_nice;
#endif
    return s->eligible;
}

/* Moves a thread cx_server_sched_check found eligible to SCHED_IDLE; true
 * when it did. */
static inline bool cx_server_sched_idle(cx_server_sched_t * s)
{
#ifdef __linux__
    struct sched_param p = { 0 };
    s->idle = s->eligible && sched_setscheduler(0, SCHED_IDLE, &p) == 0;
#endif
    return s->idle;
}

/* Back to the policy cx_server_sched_check found; false if Linux refused. */
static inline bool cx_server_sched_restore(cx_server_sched_t * s)
{
    if (!s->idle)
        return true;
    s->idle = false;
#ifdef __linux__
    return sched_setscheduler(0, s->policy, &s->param) == 0;
#else
    return false;
#endif
}

typedef struct {
    int nice;
    bool ok;
} cx_server_sched_probe_t;

static inline void *cx_server_sched__probe(void *arg)
{
    cx_server_sched_probe_t *p = arg;
    cx_server_sched_t s;
    p->nice = cx_server_sched_nice();
    p->ok = p->nice != CX_SERVER_SCHED_NO_NICE && cx_server_sched_check(&s, p->nice) &&
        cx_server_sched_idle(&s) && cx_server_sched_restore(&s);
    return NULL;
}

/* Whether a thread like the caller (a new thread inherits its policy and
 * nice value) can move to SCHED_IDLE and back; *nice: that thread's nice
 * value, the least at which cx_server_sched_check lets a thread move. */
static inline bool cx_server_sched_probe(int *nice)
{
    cx_server_sched_probe_t p = { CX_SERVER_SCHED_NO_NICE, false };
    pthread_t t;
    if (pthread_create(&t, NULL, cx_server_sched__probe, &p) != 0)
        return false;
    pthread_join(t, NULL);
    *nice = p.nice;
    return p.ok;
}

/* A thread at SCHED_IDLE runs only when no other thread wants its core:
 * threads that compute outside MPI can keep it off for a second or more
 * (its weight is 3 against their 1024).
 * The watchdog bounds that: while a thread is armed (at SCHED_IDLE or about
 * to be), a helper thread wakes every period and moves it back to
 * SCHED_OTHER if it is still idle; it is a normal thread waking from sleep,
 * so it gets a core even when every other thread computes.  It sleeps on a
 * condition variable once nobody was armed for CX_IDLE_WATCHDOG_QUIET_TICKS
 * periods, so an application with no idle server sees no wake-ups. */
#define CX_IDLE_WATCHDOG_QUIET_TICKS 16

typedef struct {
    atomic_int tid;             /* armed thread (Linux thread id), 0: none */
    atomic_bool asleep;         /* the helper waits on cv for an arm */
    atomic_bool started;
    atomic_ulong kicks;         /* armed threads moved back to SCHED_OTHER */
    long period_ns;
    bool stop;                  /* under m */
    pthread_t thread;
    pthread_mutex_t m;
    pthread_cond_t cv;
} cx_idle_watchdog_t;

/* A static watchdog, not started, waking every period_ns once started. */
#define CX_IDLE_WATCHDOG_INITIALIZER(period_ns_) \
    { .period_ns = (period_ns_), .m = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER }

#ifdef __linux__
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

static inline int cx_idle_watchdog_gettid(void)
{
    return (int) syscall(SYS_gettid);
}

/* Moves thread tid back to SCHED_OTHER if it is at SCHED_IDLE (its nice
 * value is kept). */
static inline bool cx_idle_watchdog__kick(int tid)
{
    struct sched_param p = { 0 };
    return sched_getscheduler(tid) == SCHED_IDLE && sched_setscheduler(tid, SCHED_OTHER, &p) == 0;
}

static inline void *cx_idle_watchdog__main(void *arg)
{
    cx_idle_watchdog_t *w = arg;
    int quiet = 0;
    pthread_mutex_lock(&w->m);
    while (!w->stop) {
        if (quiet >= CX_IDLE_WATCHDOG_QUIET_TICKS) {
            /* an arm after this store sees asleep, and signals under m */
            atomic_store(&w->asleep, true);
            if (atomic_load(&w->tid) == 0)
                pthread_cond_wait(&w->cv, &w->m);
            atomic_store(&w->asleep, false);
            quiet = 0;
            continue;
        }
        pthread_mutex_unlock(&w->m);
        struct timespec t = { 0, w->period_ns };
        nanosleep(&t, NULL);
        int tid = atomic_load(&w->tid);
        if (tid == 0)
            quiet++;
        else {
            quiet = 0;
            if (cx_idle_watchdog__kick(tid))
                atomic_fetch_add_explicit(&w->kicks, 1, memory_order_relaxed);
        }
        pthread_mutex_lock(&w->m);
    }
    pthread_mutex_unlock(&w->m);
    return NULL;
}

/* Starts the helper once (any thread may call it); false if it could not
 * be created, and then nobody may be armed. */
static inline bool cx_idle_watchdog_start(cx_idle_watchdog_t * w)
{
    if (atomic_load_explicit(&w->started, memory_order_acquire))
        return true;
    pthread_mutex_lock(&w->m);
    if (!atomic_load(&w->started)) {
        /* no application signal is ever delivered to the helper */
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, &old);
        if (pthread_create(&w->thread, NULL, cx_idle_watchdog__main, w) == 0)
            atomic_store_explicit(&w->started, true, memory_order_release);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    pthread_mutex_unlock(&w->m);
    return atomic_load(&w->started);
}

/* Before the calling thread moves itself to SCHED_IDLE (one at a time). */
static inline void cx_idle_watchdog_arm(cx_idle_watchdog_t * w, int tid)
{
    atomic_store(&w->tid, tid);
    if (atomic_load(&w->asleep)) {
        pthread_mutex_lock(&w->m);
        pthread_cond_signal(&w->cv);
        pthread_mutex_unlock(&w->m);
    }
}

/* After it moved back. */
static inline void cx_idle_watchdog_disarm(cx_idle_watchdog_t * w)
{
    atomic_store_explicit(&w->tid, 0, memory_order_release);
}

/* Stops and joins the helper (nobody armed); a later start starts anew. */
static inline void cx_idle_watchdog_stop(cx_idle_watchdog_t * w)
{
    pthread_mutex_lock(&w->m);
    w->stop = true;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->m);
    if (atomic_load(&w->started))
        pthread_join(w->thread, NULL);
    pthread_mutex_lock(&w->m);
    atomic_store(&w->started, false);
    w->stop = false;
    pthread_mutex_unlock(&w->m);
}
#else /* no SCHED_IDLE: no watchdog, and nobody idles */
static inline int cx_idle_watchdog_gettid(void)
{
    return 0;
}

static inline bool cx_idle_watchdog_start(cx_idle_watchdog_t * w)
{
    (void) w;
    return false;
}

static inline void cx_idle_watchdog_arm(cx_idle_watchdog_t * w, int tid)
{
    (void) w;
    (void) tid;
}

static inline void cx_idle_watchdog_disarm(cx_idle_watchdog_t * w)
{
    (void) w;
}

static inline void cx_idle_watchdog_stop(cx_idle_watchdog_t * w)
{
    (void) w;
}
#endif /* __linux__ */

#endif /* CX_REACTIVATION_H_INCLUDED */
