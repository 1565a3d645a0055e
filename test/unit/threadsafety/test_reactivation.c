/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * Selective reactivation (USC and KSC counters) under an external lock.
 *
 * A small model of a progress engine: each thread posts operations (under
 * the lock) and then waits for them like MPI_Wait/MPI_Waitall; a "NIC"
 * marks operations as arrived; a poll under the lock completes arrived
 * operations and signals their counters. Waiting threads follow the
 * protocol of cx_reactivation.h: one server polls, the others sleep.
 *
 *     test_reactivation unit
 *     test_reactivation usc|ksc      scripted hand-overs, nested waits, a
 *                                    stalled server + stress
 *     test_reactivation idle         the server's move to SCHED_IDLE and back
 *
 * Nested waits: an operation may carry a completion callback that makes a
 * blocking wait of its own from inside the poll that completed it, on the
 * polling thread (MPICH's schedule callbacks do: MPI_Comm_idup's context id
 * comes from a blocking MPI_Allreduce run inside whoever's poll), with the
 * same progress loop; cx_reactivation_enter tells that loop it is nested,
 * so it polls and never sleeps, even in the server's thread.
 *
 * usc runs with CLHub as the external lock (acquire / acquire_low), ksc with
 * a pthread mutex; both also run the stress with a ticket lock.
 */
#define _GNU_SOURCE     /* SCHED_IDLE, SCHED_BATCH */
#include "test_common.h"
#include "cx_reactivation.h"
#include <linux/capability.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "cx_clhub.h"
#include "cx_ticket.h"

/* ---- external locks ---- */

typedef struct {
    const char *name;
    void (*lock)(void *);
    void (*lock_low)(void *);
    void (*unlock)(void *);
    void *ctx;
} ext_lock_t;

static pthread_mutex_t ext_mutex = PTHREAD_MUTEX_INITIALIZER;
static cx_clhub_lock_t ext_clhub;
static cx_ticket_lock_t ext_ticket;

static void mutex_lock(void *p)
{
    pthread_mutex_lock(p);
}

static void mutex_unlock(void *p)
{
    pthread_mutex_unlock(p);
}

static void clhub_lock(void *p)
{
    cx_clhub_acquire(p);
}

static void clhub_lock_low(void *p)
{
    cx_clhub_acquire_low(p);
}

static void clhub_unlock(void *p)
{
    cx_clhub_release(p);
}

static void ticket_lock(void *p)
{
    cx_ticket_acquire(p);
}

static void ticket_unlock(void *p)
{
    cx_ticket_release(p);
}

static const ext_lock_t lock_mutex = { "mutex", mutex_lock, mutex_lock, mutex_unlock, &ext_mutex };
static const ext_lock_t lock_clhub =
    { "clhub", clhub_lock, clhub_lock_low, clhub_unlock, &ext_clhub };
static const ext_lock_t lock_ticket =
    { "ticket", ticket_lock, ticket_lock, ticket_unlock, &ext_ticket };

static const ext_lock_t *X;     /* the external lock in use */

/* ---- the model (everything but `posted`/`arrived` under the lock) ---- */

#define MAXT 16
#define MAXOPS 3

typedef struct {
    atomic_int posted;          /* owner, under the lock; read by the NIC */
    atomic_int arrived;         /* NIC */
    bool complete;
    bool running;               /* its completion callback runs (nests) */
    bool nests;                 /* completing it waits for the owner's inner op */
    cx_scount_t *sc;
} op_t;

typedef struct {
    op_t ops[MAXOPS];
    int nops;
    cx_scount_t sc;
    op_t inner;                 /* what a nesting callback waits for */
    cx_scount_t inner_sc;       /* never armed: a nested wait never sleeps */
    bool elected;
    int wait_returns;           /* scount_wait returns in the current wait */
    atomic_int in_wait;         /* 1 while inside the progress loop */
    atomic_int done_rounds;
    int rounds;
    int kind;
    int waitall_every;          /* stress: every n-th round waits for 3 ops */
    int nest_every;             /* stress: every n-th round's op nests */
    bool timed;                 /* waiters sleep with a limit and watch the server */
    t_thread_t th;
} actor_t;

static actor_t A[MAXT];
static int nactors;
static cx_reactivation_t R;
static int nservers;            /* under the lock: must stay <= 1 */
static atomic_int stop_nic;
static _Thread_local cx_reactivation_self_t self;
/* nested loops seen, by kind (under the lock); sleeps of a nested loop */
static unsigned long nested_polls, nested_serves, nested_sleeps;
static atomic_int server_stuck; /* scripted: the server stops polling */
static atomic_int server_is_stuck;
static double stalled_took_ms;  /* stalled_server: W's completion took */

#define TIMED_NS 1000000L       /* timed sleeps: 1 ms, as CX_SCOUNT_KSC_HANDOVER_NS */

static void progress_loop(actor_t * a, op_t * ops, int nops, cx_scount_t * sc);

/* lock held; a nesting op's callback runs a blocking wait on the polling
 * thread, as MPICH's schedule callbacks do */
static bool poll_network(void)
{
    bool made = false;
    for (int t = 0; t < nactors; t++) {
        for (int k = 0; k <= A[t].nops; k++) {
            op_t *op = k < A[t].nops ? &A[t].ops[k] : &A[t].inner;
            if (atomic_load(&op->posted) && atomic_load(&op->arrived) && !op->complete &&
                !op->running) {
                if (op->nests) {
                    op_t *in = &A[t].inner;
                    op->running = true;
                    in->complete = false;
                    in->sc = &A[t].inner_sc;
                    atomic_store(&in->arrived, 0);
                    atomic_store(&in->posted, 1);
                    progress_loop(&A[t], in, 1, &A[t].inner_sc);
                    op->running = false;
                }
                op->complete = true;
                atomic_store(&op->posted, 0);
                /* completion callback: counted signal */
                cx_reactivation_signal(&R, op->sc);
                made = true;
            }
        }
    }
    return made;
}

static int pending_of(op_t * ops, int nops)
{
    int n = 0;
    for (int k = 0; k < nops; k++)
        n += !ops[k].complete;
    return n;
}

/* post nops operations (lock held) */
static void post_ops(actor_t * a, int nops, bool nests)
{
    a->nops = nops;
    for (int k = 0; k < nops; k++) {
        a->ops[k].complete = false;
        a->ops[k].running = false;
        a->ops[k].nests = nests && k == 0;
        a->ops[k].sc = &a->sc;
        atomic_store(&a->ops[k].arrived, 0);
        atomic_store(&a->ops[k].posted, 1);
    }
}

/* MPI_Wait / MPI_Waitall, and a nested wait: lock held on entry and exit.
 * Only the outermost loop of a thread may elect itself, sleep or resign;
 * a nested one polls (poll_network polls for everyone, as a serving
 * nested loop must). */
static void progress_loop(actor_t * a, op_t * ops, int nops, cx_scount_t * sc)
{
    cx_nest_t nest = cx_reactivation_enter(&self);
    if (nest != CX_NEST_OUTER) {
        if (nest == CX_NEST_SERVE)
            nested_serves++;
        else
            nested_polls++;
        CHECK(self.serving == (nest == CX_NEST_SERVE), "nested %d in a thread serving %d", nest,
              self.serving);
        while (pending_of(ops, nops) > 0) {
            if (poll_network())
                continue;
            CHECK(!cx_reactivation_try_elect_as(&R, &self), "a nested loop took the server role");
            X->unlock(X->ctx);
            sched_yield();
            X->lock_low(X->ctx);
        }
        cx_reactivation_leave(&self);
        return;
    }
    cx_server_watch_t watch;
    cx_server_watch_start(&R, &watch);
    a->elected = false;
    a->wait_returns = 0;
    atomic_store(&a->in_wait, 1);
    bool poll = true;           /* not after a timed sleep: that is the server's job */
    while (pending_of(ops, nops) > 0) {
        if ((poll || a->elected) && poll_network()) {
            if (a->elected)
                cx_reactivation_polled(&R);
            continue;
        }
        poll = true;
        if (!a->elected && cx_reactivation_try_elect_as(&R, &self)) {
            a->elected = true;
            nservers++;
            CHECK(nservers == 1, "%d servers at once", nservers);
        }
        if (a->elected) {
            cx_reactivation_polled(&R);
            X->unlock(X->ctx);
            sched_yield();
            while (atomic_load(&server_stuck)) {        /* blocked elsewhere */
                atomic_store(&server_is_stuck, 1);
                sched_yield();
            }
            atomic_store(&server_is_stuck, 0);
            X->lock_low(X->ctx);
        } else {
            if (self.depth != 1)
                nested_sleeps++;
            cx_scount_arm(sc, pending_of(ops, nops));
            cx_reactivation_add_waiter(&R, sc);
            bool woken = cx_scount_wait_timed(sc, X->unlock, X->lock_low, X->ctx,
                                              a->timed ? TIMED_NS : 0);
            a->wait_returns++;
            if (!woken) {
                cx_reactivation_remove_waiter(&R, sc);
                poll = false;
                if (cx_server_watch_stalled(&R, &watch))
                    poll_network();     /* in place of the server */
            }
        }
    }
    cx_reactivation_remove_waiter(&R, sc);
    if (a->elected) {
        nservers--;
        cx_reactivation_resign_as(&R, &self, false);
    } else {
        cx_reactivation_wake_next(&R);
    }
    CHECK(!self.serving, "still serving after the wait");
    atomic_store(&a->in_wait, 0);
    cx_reactivation_leave(&self);
}

static void progress_wait(actor_t * a)
{
    progress_loop(a, a->ops, a->nops, &a->sc);
}

static void *actor_thread(void *p)
{
    t_thread_t *t = p;
    actor_t *a = &A[t->id];
    uint32_t seed = 12345u + (uint32_t) t->id * 7919u;
    for (int r = 0; r < a->rounds; r++) {
        int nops = (a->waitall_every && r % a->waitall_every == 0) ? 3 : 1;
        bool nests = a->nest_every && r % a->nest_every == a->nest_every - 1;
        X->lock(X->ctx);
        post_ops(a, nops, nests);
        X->unlock(X->ctx);
        if (t_rand(&seed) % 4 == 0)
            sched_yield();
        X->lock(X->ctx);
        progress_wait(a);
        X->unlock(X->ctx);
        atomic_store(&a->done_rounds, r + 1);
    }
    return NULL;
}

static void *nic_thread(void *p)
{
    (void) p;
    uint32_t seed = 4242;
    while (!atomic_load(&stop_nic)) {
        for (int t = 0; t < nactors; t++) {
            for (int k = 0; k <= MAXOPS; k++) {
                op_t *op = k < MAXOPS ? &A[t].ops[k] : &A[t].inner;
                if (atomic_load(&op->posted) && !atomic_load(&op->arrived) &&
                    t_rand(&seed) % 3 == 0)
                    atomic_store(&op->arrived, 1);
            }
        }
        sched_yield();
    }
    return NULL;
}

static void world_init(int n, int kind)
{
    R = (cx_reactivation_t) {
    0};
    nservers = 0;
    nactors = n;
    nested_polls = nested_serves = nested_sleeps = 0;
    atomic_store(&server_stuck, 0);
    for (int i = 0; i < MAXT; i++) {
        memset(&A[i].ops, 0, sizeof(A[i].ops));
        memset(&A[i].inner, 0, sizeof(A[i].inner));
        A[i].nops = 0;
        A[i].nest_every = 0;
        A[i].timed = false;
        A[i].elected = false;
        A[i].wait_returns = 0;
        atomic_store(&A[i].in_wait, 0);
        atomic_store(&A[i].done_rounds, 0);
        A[i].rounds = 1;
        A[i].kind = kind;
        A[i].waitall_every = 0;
        cx_scount_init(&A[i].sc, kind);
        cx_scount_init(&A[i].inner_sc, kind);
    }
}

static void world_check_idle(void)
{
    X->lock(X->ctx);
    CHECK(nservers == 0 && !R.server_present, "a server is left");
    CHECK(R.head == NULL && R.tail == NULL, "waiters are left in the list");
    X->unlock(X->ctx);
    for (int i = 0; i < MAXT; i++) {
        cx_scount_destroy(&A[i].sc);
        cx_scount_destroy(&A[i].inner_sc);
    }
}

/* read something under the external lock */
#define LOCKED(expr) ({ X->lock(X->ctx); __typeof__(expr) v_ = (expr); X->unlock(X->ctx); v_; })

/* ---- scripted scenarios ---- */

enum { S_ = 0, W_ = 1 };

/* start actor i for one round with nops operations; wait until it sits in
 * the progress loop as server (want_server) or as a listed waiter */
static void start_actor(int i, int nops, bool want_server)
{
    A[i].rounds = 1;
    A[i].waitall_every = nops == 3 ? 1 : 0;
    t_start(&A[i].th, i, actor_thread, NULL);
    if (want_server)
        WAIT_UNTIL(LOCKED(A[i].elected && atomic_load(&A[i].in_wait)));
    else
        WAIT_UNTIL(LOCKED(A[i].sc.in_list));
}

static void arrive(int i, int k)
{
    atomic_store(&A[i].ops[k].arrived, 1);
    WAIT_UNTIL(LOCKED(A[i].ops[k].complete));
}

/* Hazard (a): W waits for 3 operations while S serves. Partial completions
 * must leave W in the waiter list, unsignalled; when S leaves, it
 * force-wakes W, which becomes the server and finishes. */
static void waitall_handover(int kind)
{
    world_init(2, kind);
    start_actor(S_, 1, true);
    start_actor(W_, 3, false);
    for (int k = 0; k < 2; k++) {
        arrive(W_, k);
        CHECK(LOCKED(A[W_].sc.in_list && A[W_].sc.count == 2 - k &&
                     !atomic_load(&A[W_].sc.signaled) && A[W_].wait_returns == 0),
              "Waitall waiter left the list or was woken after %d of 3 completions", k + 1);
    }
    unsigned long forced = LOCKED(R.forced_wakeups);
    arrive(S_, 0);
    t_join(&A[S_].th);
    /* W was force-woken and took over as server */
    WAIT_UNTIL(LOCKED(A[W_].elected));
    CHECK(LOCKED(R.forced_wakeups) == forced + 1, "the leaving server did not force-wake W");
    arrive(W_, 2);
    t_join(&A[W_].th);
    CHECK(A[W_].wait_returns == 1, "W returned from wait %d times", A[W_].wait_returns);
    world_check_idle();
}

/* A Waitall counter armed to 3 wakes its owner once, at the 3rd signal. */
static void waitall_counted(int kind)
{
    world_init(2, kind);
    start_actor(S_, 1, true);
    start_actor(W_, 3, false);
    for (int k = 0; k < 2; k++)
        arrive(W_, k);
    /* give a wrong early wake-up time to show */
    t_sleep_ms(20);
    CHECK(LOCKED(A[W_].wait_returns == 0 && A[W_].sc.in_list), "woken before the 3rd completion");
    unsigned long counted = LOCKED(R.counted_wakeups);
    arrive(W_, 2);
    t_join(&A[W_].th);
    CHECK(A[W_].wait_returns == 1, "W returned from wait %d times", A[W_].wait_returns);
    CHECK(LOCKED(R.counted_wakeups) == counted + 1, "counted wake-ups %lu", R.counted_wakeups);
    arrive(S_, 0);
    t_join(&A[S_].th);
    world_check_idle();
}

/* KSC: condition-variable wake-ups without a signal must not end the wait. */
static void ksc_spurious(void)
{
    world_init(2, CX_SCOUNT_KSC);
    start_actor(S_, 1, true);
    start_actor(W_, 1, false);
    for (int i = 0; i < 5; i++) {
        pthread_mutex_lock(&A[W_].sc.m);
        pthread_cond_broadcast(&A[W_].sc.cv);
        pthread_mutex_unlock(&A[W_].sc.m);
        t_sleep_ms(5);
    }
    CHECK(LOCKED(A[W_].wait_returns == 0 && A[W_].sc.in_list), "spurious wake-up ended the wait");
    arrive(W_, 0);
    t_join(&A[W_].th);
    CHECK(A[W_].wait_returns == 1, "W returned from wait %d times", A[W_].wait_returns);
    arrive(S_, 0);
    t_join(&A[S_].th);
    world_check_idle();
}

/* The server's poll completes an operation whose callback waits for
 * another one (a nested loop on the server's thread, as MPICH's schedule
 * callbacks run blocking calls inside the poll): the nested loop must poll
 * for everyone (W, asleep, is woken by its polls) and never sleep, and the
 * role stays with S, elected once, resigned once.  A nested loop that
 * behaved as an outermost one would sleep as a waiter of a server that is
 * its own thread, and nobody would poll: W's completion would time out. */
static void nested_server(int kind)
{
    world_init(2, kind);
    A[S_].nest_every = 1;
    start_actor(S_, 1, true);
    start_actor(W_, 1, false);
    atomic_store(&A[S_].ops[0].arrived, 1);
    WAIT_UNTIL(LOCKED(A[S_].ops[0].running && atomic_load(&A[S_].inner.posted)));
    arrive(W_, 0);
    t_join(&A[W_].th);
    CHECK(LOCKED(nested_serves == 1 && nested_polls == 0 && nested_sleeps == 0 &&
                 R.server_present && A[S_].elected && R.elections == 1 && A[W_].wait_returns == 1),
          "nested loop in the server: %lu serving, %lu polling, %lu sleeps, server %d, "
          "%lu elections, W woken %d times", nested_serves, nested_polls, nested_sleeps,
          R.server_present, R.elections, A[W_].wait_returns);
    atomic_store(&A[S_].inner.arrived, 1);
    t_join(&A[S_].th);
    CHECK(R.elections == 1 && A[S_].wait_returns == 0, "%lu elections, S slept %d times",
          R.elections, A[S_].wait_returns);
    world_check_idle();
}

/* A server that stops polling (blocked elsewhere: on a lock that a thread
 * asleep as a waiter holds, say): W, sleeping with a time limit, polls in
 * its place after CX_SERVER_STALL_TIMEOUTS sleeps with no poll of the
 * server, and completes. */
static void stalled_server(int kind)
{
    world_init(2, kind);
    A[W_].timed = true;
    start_actor(S_, 1, true);
    start_actor(W_, 1, false);
    /* some 20 timed sleeps of W while S polls (a poll of W in between
     * would mean S got no core for 2 ms: possible on a loaded machine, so
     * not checked here; the unit test checks the rule) */
    t_sleep_ms(20);
    atomic_store(&server_stuck, 1);
    WAIT_UNTIL(atomic_load(&server_is_stuck));
    double t0 = t_now();
    arrive(W_, 0);
    t_join(&A[W_].th);
    double took = t_now() - t0;
    unsigned long stalls = LOCKED(R.stall_polls);
    CHECK(stalls >= 1 && atomic_load(&server_is_stuck), "W completed with %lu polls in place "
          "of the stalled server", stalls);
    atomic_store(&server_stuck, 0);
    arrive(S_, 0);
    t_join(&A[S_].th);
    world_check_idle();
    stalled_took_ms = 1e3 * took;
}

/* ---- stress: many rounds, random arrivals; any lost wake-up hangs ---- */

/* nest_every: every n-th round's first op nests (0: none); timed: waiters
 * sleep with a limit and watch the server */
static void stress_as(int kind, const ext_lock_t * lock, int nthreads, int rounds, int nest_every,
                      bool timed)
{
    t_thread_t nic;
    double t0 = t_now();
    X = lock;
    world_init(nthreads, kind);
    atomic_store(&stop_nic, 0);
    t_start(&nic, 0, nic_thread, NULL);
    for (int i = 0; i < nthreads; i++) {
        A[i].rounds = rounds;
        A[i].waitall_every = 3;
        A[i].nest_every = nest_every;
        A[i].timed = timed;
        t_start(&A[i].th, i, actor_thread, NULL);
    }
    for (int i = 0; i < nthreads; i++) {
        /* fails (no hang) if a waiter is never woken */
        WAIT_UNTIL(atomic_load(&A[i].done_rounds) == rounds);
        t_join(&A[i].th);
    }
    atomic_store(&stop_nic, 1);
    t_join(&nic);
    printf("reactivation stress %s/%s%s%s: %d threads x %d rounds: %lu elections, %lu counted and "
           "%lu forced wake-ups, %lu nested loops serving and %lu polling, %lu stall polls: ok "
           "(%.2fs)\n", kind == CX_SCOUNT_USC ? "usc" : "ksc", lock->name,
           nest_every ? ", nested" : "", timed ? ", timed" : "", nthreads, rounds, R.elections,
           R.counted_wakeups, R.forced_wakeups, nested_serves, nested_polls, R.stall_polls,
           t_now() - t0);
    CHECK(R.elections > 0 && R.counted_wakeups > 0, "no election or no counted wake-up happened");
    CHECK(nested_sleeps == 0, "nested loops slept %lu times", nested_sleeps);
    if (nest_every)
        CHECK(nested_serves + nested_polls > 0, "no nested loop ran");
    world_check_idle();
}

static void stress(int kind, const ext_lock_t * lock, int nthreads, int rounds)
{
    stress_as(kind, lock, nthreads, rounds, 0, false);
}

/* ---- single-threaded unit checks ---- */

static void unit_test(void)
{
    cx_reactivation_t r;
    cx_scount_t c[3];

    r = (cx_reactivation_t) {
    0};
    for (int i = 0; i < 3; i++)
        cx_scount_init(&c[i], i == 1 ? CX_SCOUNT_KSC : CX_SCOUNT_USC);

    /* election */
    CHECK(cx_reactivation_try_elect(&r) && !cx_reactivation_try_elect(&r), "one server only");
    CHECK(r.elections == 1, "elections");

    /* list: idempotent add, FIFO, remove of an absent counter is a no-op */
    for (int i = 0; i < 3; i++) {
        cx_scount_arm(&c[i], 1);
        cx_reactivation_add_waiter(&r, &c[i]);
        cx_reactivation_add_waiter(&r, &c[i]);
    }
    CHECK(r.head == &c[0] && c[0].next == &c[1] && c[1].next == &c[2] && c[2].next == NULL &&
          r.tail == &c[2] && c[2].prev == &c[1], "waiter list after duplicate adds");
    cx_reactivation_remove_waiter(&r, &c[1]);
    cx_reactivation_remove_waiter(&r, &c[1]);
    CHECK(r.head == &c[0] && c[0].next == &c[2] && c[2].prev == &c[0] && !c[1].in_list,
          "remove from the middle");

    /* wake_next does nothing while a server is present */
    cx_reactivation_wake_next(&r);
    CHECK(r.forced_wakeups == 0 && c[0].in_list, "forced wake-up with a server present");
    /* resign: force-wake the oldest waiter, removed from the list */
    cx_reactivation_resign(&r);
    CHECK(!r.server_present && r.forced_wakeups == 1 && !c[0].in_list && atomic_load(&c[0].signaled)
          && r.head == &c[2], "resign did not force-wake the first waiter");

    /* counted signal: Waitall of 3 stays listed until the 3rd */
    cx_scount_arm(&c[1], 3);
    cx_reactivation_add_waiter(&r, &c[1]);
    for (int k = 0; k < 2; k++) {
        cx_reactivation_signal(&r, &c[1]);
        CHECK(c[1].in_list && !atomic_load(&c[1].signaled), "woken after %d of 3", k + 1);
    }
    cx_reactivation_signal(&r, &c[1]);
    CHECK(!c[1].in_list && atomic_load(&c[1].signaled) && r.counted_wakeups == 1, "3rd signal");

    /* signals to an unarmed counter (completed before its owner waited) do
     * nothing; arming clears an old flag */
    cx_reactivation_signal(&r, &c[1]);
    CHECK(c[1].count == 0 && r.counted_wakeups == 1, "signal to an unarmed counter counted");
    cx_scount_arm(&c[1], 1);
    CHECK(!atomic_load(&c[1].signaled), "arm did not clear the flag");

    /* signal before wait: the waiter returns at once (KSC and USC) */
    cx_reactivation_signal(&r, &c[1]);
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&m);
    cx_scount_wait(&c[1], mutex_unlock, mutex_lock, &m);
    pthread_mutex_unlock(&m);
    CHECK(!atomic_load(&c[1].signaled), "wait did not clear the flag");
    cx_scount_arm(&c[2], 1);
    cx_reactivation_signal(&r, &c[2]);
    pthread_mutex_lock(&m);
    cx_scount_wait(&c[2], mutex_unlock, mutex_lock, &m);
    pthread_mutex_unlock(&m);

    /* timed KSC wait: false after its time limit with no wake, true at
     * once when signaled first; a lazy resign wakes nobody */
    CHECK(r.head == NULL && r.tail == NULL, "list not empty");
    cx_scount_arm(&c[1], 1);
    cx_reactivation_add_waiter(&r, &c[1]);
    CHECK(cx_reactivation_try_elect(&r), "election after resign");
    cx_reactivation_resign_lazy(&r);
    CHECK(!r.server_present && c[1].in_list && !atomic_load(&c[1].signaled) &&
          r.forced_wakeups == 1, "resign_lazy woke a waiter");
    pthread_mutex_lock(&m);
    double t0 = t_now();
    bool woken = cx_scount_wait_timed(&c[1], mutex_unlock, mutex_lock, &m, 20000000L);
    double waited = t_now() - t0;
    pthread_mutex_unlock(&m);
    CHECK(!woken && waited >= 0.019, "timed wait: woken %d after %.4f s of 0.02", woken, waited);
    cx_reactivation_signal(&r, &c[1]);
    pthread_mutex_lock(&m);
    t0 = t_now();
    woken = cx_scount_wait_timed(&c[1], mutex_unlock, mutex_lock, &m, 10L * 1000000000L);
    waited = t_now() - t0;
    pthread_mutex_unlock(&m);
    CHECK(woken && waited < 5.0, "timed wait after a signal: woken %d after %.2f s", woken, waited);
    CHECK(r.head == NULL && r.tail == NULL, "list not empty");

    /* USC waits keep a time limit too (checked between yields, after the
     * spins) */
    cx_scount_arm(&c[0], 1);
    pthread_mutex_lock(&m);
    t0 = t_now();
    woken = cx_scount_wait_timed(&c[0], mutex_unlock, mutex_lock, &m, 20000000L);
    waited = t_now() - t0;
    pthread_mutex_unlock(&m);
    CHECK(!woken && waited >= 0.019 &&
          waited < 5.0, "USC timed wait: woken %d after %.4f s of 0.02", woken, waited);
    cx_reactivation_signal(&r, &c[0]);
    pthread_mutex_lock(&m);
    woken = cx_scount_wait_timed(&c[0], mutex_unlock, mutex_lock, &m, 10L * 1000000000L);
    pthread_mutex_unlock(&m);
    CHECK(woken && !atomic_load(&c[0].signaled), "USC timed wait after a signal");

    /* nesting: only a thread's outermost loop elects itself and resigns; a
     * loop nested in it is told to poll, for everyone if the outer serves */
    cx_reactivation_self_t s = { 0 };
    unsigned long elections = r.elections;
    CHECK(cx_reactivation_enter(&s) == CX_NEST_OUTER, "first loop not outermost");
    CHECK(cx_reactivation_enter(&s) == CX_NEST_POLL, "nested in a non-server: not told to poll");
    CHECK(!cx_reactivation_try_elect_as(&r, &s) && !r.server_present && r.elections == elections,
          "a nested loop elected itself");
    cx_reactivation_leave(&s);
    CHECK(cx_reactivation_try_elect_as(&r, &s) && s.serving && r.server_present,
          "the outermost loop did not become the server");
    CHECK(!cx_reactivation_try_elect_as(&r, &s) && r.elections == elections + 1,
          "a server elected itself again");
    CHECK(cx_reactivation_enter(&s) == CX_NEST_SERVE && cx_reactivation_enter(&s) == CX_NEST_SERVE,
          "nested in the server: not told to serve (depth 2 and 3)");
    CHECK(!cx_reactivation_try_elect_as(&r, &s) && s.serving && r.server_present,
          "a nested loop changed the role");
    cx_reactivation_leave(&s);
    cx_reactivation_leave(&s);
    CHECK(s.depth == 1 && s.serving && r.server_present, "leaving nested loops lost the role");
    cx_reactivation_resign_as(&r, &s, true);
    CHECK(!s.serving && !r.server_present, "resign_as");
    cx_reactivation_leave(&s);
    CHECK(s.depth == 0 && cx_reactivation_enter(&s) == CX_NEST_OUTER, "a new wait not outermost");
    cx_reactivation_leave(&s);

    /* watching the server: a waiter polls itself after two timed sleeps in
     * a row with a server present that polled nothing, not before, not
     * with no server (it elects itself then), not once the server polled */
    cx_server_watch_t w;
    cx_server_watch_start(&r, &w);
    CHECK(!cx_server_watch_stalled(&r, &w) && !cx_server_watch_stalled(&r, &w),
          "stalled with no server present");
    CHECK(cx_reactivation_try_elect(&r), "election");
    CHECK(!cx_server_watch_stalled(&r, &w), "stalled after one sleep");
    cx_reactivation_polled(&r);
    CHECK(!cx_server_watch_stalled(&r, &w) && !cx_server_watch_stalled(&r, &w),
          "stalled though the server polled in between");
    CHECK(cx_server_watch_stalled(&r, &w) && r.stall_polls == 1, "not stalled after %d sleeps",
          CX_SERVER_STALL_TIMEOUTS);
    CHECK(!cx_server_watch_stalled(&r, &w) && cx_server_watch_stalled(&r, &w) && r.stall_polls == 2,
          "a second stall not after %d more sleeps", CX_SERVER_STALL_TIMEOUTS);
    cx_reactivation_resign(&r);

    for (int i = 0; i < 3; i++)
        cx_scount_destroy(&c[i]);
    /* auto's crowding limit: per core the rank may run on, at most its
     * share of the node's, at least one core */
    CHECK(cx_crowd_limit(2, 2, 2) == CX_CROWD_PER_CORE, "2 ranks on 2 cores, unbound");
    CHECK(cx_crowd_limit(2, 1, 2) == CX_CROWD_PER_CORE, "2 ranks on 2 cores, bound");
    CHECK(cx_crowd_limit(64, 64, 1) == 64 * CX_CROWD_PER_CORE, "1 rank on 64 cores");
    CHECK(cx_crowd_limit(64, 8, 2) == 8 * CX_CROWD_PER_CORE, "bound to 8 of 64 cores");
    CHECK(cx_crowd_limit(2, 2, 16) == CX_CROWD_PER_CORE, "more ranks than cores");
    CHECK(cx_crowd_limit(4, 4, 0) == 4 * CX_CROWD_PER_CORE, "local size unknown");
    printf("reactivation unit: election, list, counted/forced signals, early signals, "
           "timed waits (KSC and USC) and lazy resign, nesting, a stalled server, crowding "
           "limit: ok\n");
}

/* ---- the server at SCHED_IDLE ---- */

/* CAP_SYS_NICE in the effective set, asked of the kernel directly. */
static bool has_cap_sys_nice(void)
{
    struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
    struct __user_cap_data_struct d[2];
    if (syscall(SYS_capget, &h, d) != 0)
        return false;
    return (d[CAP_SYS_NICE / 32].effective >> (CAP_SYS_NICE % 32)) & 1;
}

/* What Linux allows (kernel/sched/syscalls.c, is_nice_reduction): back from
 * SCHED_IDLE to SCHED_OTHER at nice n with CAP_SYS_NICE or RLIMIT_NICE >= 20 - n. */
static bool may_leave_idle(int nice)
{
    struct rlimit r;
    CHECK(getrlimit(RLIMIT_NICE, &r) == 0, "getrlimit");
    return has_cap_sys_nice() || r.rlim_cur >= (rlim_t) (20 - nice);
}

/* The kernel's word (glibc's pthread_getschedparam may answer from a cache). */
static int policy_now(void)
{
    int policy = sched_getscheduler(0);
    CHECK(policy >= 0, "sched_getscheduler");
    return policy;
}

/* In a thread of its own: the moves the probe promised. */
static void *idle_moves(void *arg)
{
    int nice = *(int *) arg;
    cx_server_sched_t s;
    CHECK(!cx_server_sched_check(&s, nice + 1), "a thread whose nice is below the limit may move");
    CHECK(!cx_server_sched_idle(&s), "moved a thread found not eligible");
    CHECK(policy_now() == SCHED_OTHER && !s.idle, "policy changed though not eligible");
    CHECK(cx_server_sched_restore(&s), "restore without a move");
    CHECK(cx_server_sched_check(&s, nice), "a SCHED_OTHER thread at the probe's nice may not move");
    for (int i = 0; i < 3; i++) {       /* a server moves once per empty poll */
        CHECK(cx_server_sched_idle(&s), "move to SCHED_IDLE refused");
        CHECK(policy_now() == SCHED_IDLE, "not SCHED_IDLE after the move");
        CHECK(cx_server_sched_restore(&s), "move back refused");
        CHECK(policy_now() == SCHED_OTHER, "not back to SCHED_OTHER");
    }
    /* a thread under another policy is left alone */
    struct sched_param p = { 0 };
    CHECK(sched_setscheduler(0, SCHED_BATCH, &p) == 0, "SCHED_BATCH");
    CHECK(!cx_server_sched_check(&s, nice) &&
          !cx_server_sched_idle(&s), "moved a SCHED_BATCH thread");
    CHECK(policy_now() == SCHED_BATCH, "SCHED_BATCH thread changed");
    return NULL;
}

/* In a child without CAP_SYS_NICE and with RLIMIT_NICE 0: the probe must
 * say no, and a thread moved anyway cannot come back. */
static int idle_denied_child(void)
{
    struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
    struct __user_cap_data_struct d[2];
    CHECK(syscall(SYS_capget, &h, d) == 0, "capget");
    d[CAP_SYS_NICE / 32].effective &= ~(1u << (CAP_SYS_NICE % 32));
    d[CAP_SYS_NICE / 32].permitted &= ~(1u << (CAP_SYS_NICE % 32));
    d[CAP_SYS_NICE / 32].inheritable &= ~(1u << (CAP_SYS_NICE % 32));
    CHECK(syscall(SYS_capset, &h, d) == 0, "capset");
    struct rlimit r;
    CHECK(getrlimit(RLIMIT_NICE, &r) == 0, "getrlimit");
    r.rlim_cur = 0;
    CHECK(setrlimit(RLIMIT_NICE, &r) == 0, "setrlimit");
    CHECK(!has_cap_sys_nice() && !may_leave_idle(cx_server_sched_nice()), "privilege not dropped");
    int nice;
    CHECK(!cx_server_sched_probe(&nice), "probe says yes without the privilege");
    cx_server_sched_t s;
    CHECK(cx_server_sched_check(&s, nice) && cx_server_sched_idle(&s),
          "move to SCHED_IDLE (always allowed) refused");
    CHECK(!cx_server_sched_restore(&s), "restore succeeded without the privilege");
    CHECK(policy_now() == SCHED_IDLE, "left SCHED_IDLE without the privilege");
    return 0;
}

/* The watchdog: on one core with a thread that computes, a thread at
 * SCHED_IDLE would wait about a second; the watchdog moves it back within a
 * few periods. */
static cx_idle_watchdog_t wd = CX_IDLE_WATCHDOG_INITIALIZER(1000000);

static void *kicked_fn(void *arg)
{
    double *took = arg;
    cx_server_sched_t s;
    CHECK(cx_server_sched_check(&s, cx_server_sched_nice()), "not eligible");
    usleep(20000);      /* the hog is running */
    double t0 = t_now();
    cx_idle_watchdog_arm(&wd, cx_idle_watchdog_gettid());
    CHECK(cx_server_sched_idle(&s), "move to SCHED_IDLE refused");
    while (policy_now() == SCHED_IDLE && t_now() - t0 < 5.0)
        sched_yield();
    *took = t_now() - t0;
    cx_idle_watchdog_disarm(&wd);
    CHECK(cx_server_sched_restore(&s), "restore after the kick");
    return NULL;
}

static void watchdog_test(void)
{
    cpu_set_t old;
    t_pin_first_cpu(&old);      /* the threads below inherit it */
    CHECK(cx_idle_watchdog_start(&wd), "watchdog thread");
    double took[3];
    for (int i = 0; i < 3; i++) {
        pthread_t k;
        t_hog_t hog;
        t_hog_start(&hog);
        CHECK(pthread_create(&k, NULL, kicked_fn, &took[i]) == 0, "idle thread");
        pthread_join(k, NULL);
        t_hog_stop(&hog);
        CHECK(took[i] < 0.2, "a thread at SCHED_IDLE beside a hog waited %.3f s for the watchdog",
              took[i]);
        usleep(30000);  /* the watchdog goes to sleep in between: it must wake */
    }
    unsigned long kicks = atomic_load(&wd.kicks);
    CHECK(kicks >= 3, "%lu kicks for 3 idle threads", kicks);
    cx_idle_watchdog_stop(&wd);
    t_unpin(&old);
    printf("reactivation idle watchdog: an idle thread beside a hog on one core moved back after "
           "%.1f, %.1f, %.1f ms: ok\n", 1e3 * took[0], 1e3 * took[1], 1e3 * took[2]);
}

static void idle_test(void)
{
    int nice, self = cx_server_sched_nice();
    bool ok = cx_server_sched_probe(&nice);
    CHECK(nice == self, "probe thread's nice %d, caller's %d", nice, self);
    CHECK(ok == may_leave_idle(nice), "probe says %d, the privileges say %d", ok,
          may_leave_idle(nice));
    if (ok) {
        pthread_t t;
        CHECK(pthread_create(&t, NULL, idle_moves, &nice) == 0, "pthread_create");
        pthread_join(t, NULL);
        watchdog_test();
    }
    CHECK(policy_now() == SCHED_OTHER, "the caller's policy changed");
    fflush(stdout);     /* the child must not print it again */
    pid_t pid = fork();
    CHECK(pid >= 0, "fork");
    if (pid == 0)
        _exit(idle_denied_child());
    int st;
    CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0,
          "the unprivileged child failed (status %d)", st);
    printf("reactivation idle: probe %s here (nice %d, CAP_SYS_NICE %d), moves and restores; "
           "refused without the privilege: ok\n", ok ? "yes" : "no", nice, has_cap_sys_nice());
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s unit|usc|ksc|idle\n", argv[0]);
        return 2;
    }
    CHECK(cx_clhub_init(&ext_clhub) == 0, "clhub init");
    cx_ticket_init(&ext_ticket);
    if (!strcmp(argv[1], "unit")) {
        unit_test();
        return 0;
    }
    if (!strcmp(argv[1], "idle")) {
        idle_test();
        return 0;
    }
    int kind;
    if (!strcmp(argv[1], "usc")) {
        kind = CX_SCOUNT_USC;
        X = &lock_clhub;
    } else if (!strcmp(argv[1], "ksc")) {
        kind = CX_SCOUNT_KSC;
        X = &lock_mutex;
    } else {
        fprintf(stderr, "unknown test %s\n", argv[1]);
        return 2;
    }
    for (int i = 0; i < 5; i++) {
        waitall_handover(kind);
        waitall_counted(kind);
    }
    if (kind == CX_SCOUNT_KSC)
        ksc_spurious();
    for (int i = 0; i < 3; i++)
        nested_server(kind);
    stalled_server(kind);
    printf("reactivation scripted %s/%s: Waitall hand-over, counted Waitall wake-up%s, a nested "
           "wait in the server polling for a sleeper, a stalled server's waiter polling itself "
           "(after %.1f ms): ok\n", argv[1], X->name,
           kind == CX_SCOUNT_KSC ? ", spurious wake-ups" : "", stalled_took_ms);
    const ext_lock_t *main_lock = X;
    stress(kind, main_lock, 4, 3000 / T_SCALE);
    stress(kind, main_lock, 12, 1000 / T_SCALE);
    stress(kind, &lock_ticket, 6, 1500 / T_SCALE);
    stress_as(kind, main_lock, 4, 2000 / T_SCALE, 4, false);
    stress_as(kind, main_lock, 8, 600 / T_SCALE, 3, true);
    return 0;
}
