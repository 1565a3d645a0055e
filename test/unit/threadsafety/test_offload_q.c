/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * The offload model's command queue (cx_offload_q.h, MECOM's tail with an
 * "executor alive" bit):
 *   basic    FIFO, the alive bit (START once, QUEUED while an executor
 *            lives, START again after it retired), full, bad sizes
 *   dynamic  requesters start executors on demand; executors retire when
 *            the queue is empty: every command taken once, in each
 *            requester's order, never two executors at once, none alive at
 *            the end
 *   stopped  a requester stopped between its reservation and its
 *            publication holds the executor (no retirement, later commands
 *            wait behind it, in order)
 *   race     a requester that reserves between the executor's read of the
 *            tail and its retiring CAS (test hook): the CAS fails, the
 *            executor takes the command; nothing is lost
 *   static   a queue created with a live executor: requesters never start one
 *   waiters  threads that need progress but queue nothing (a blocked wait):
 *            each counts itself a sleeper, then sets the alive bit itself
 *            if clear (cx_offload_q_revive) and starts an executor; an
 *            executor retires only with no sleeper counted and takes the
 *            bit back if one counted during its CAS. Every waiter sees an
 *            executor poll while it waits, never two executors at once
 *
 *     test_offload_q basic|dynamic|stopped|race|static|waiters
 */
#include "test_common.h"
#include "cx_offload_q.h"

void (*cx_offload_q_test_hook)(void);

#define ITEM(p, s) ((void *) (((uintptr_t) (p) << 32) | (uintptr_t) ((s) + 1)))
#define ITEM_PRODUCER(d) ((int) ((uintptr_t) (d) >> 32))
#define ITEM_SEQ(d) ((long) ((uintptr_t) (d) & 0xffffffffu) - 1)

/* reserve and publish, retrying while full; the reservation's answer */
static int push(cx_offload_q_t * q, void *item)
{
    uint64_t ticket;
    int r;
    while ((r = cx_offload_q_reserve(q, &ticket)) == CX_OFFLOAD_Q_FULL)
        sched_yield();
    cx_offload_q_publish(q, ticket, item);
    return r;
}

static void basic_test(void)
{
    cx_offload_q_t q;
    bool pending;
    uint64_t ticket;

    CHECK(cx_offload_q_init(&q, 6, false) == EINVAL, "size not a power of two accepted");
    CHECK(cx_offload_q_init(&q, 0, false) == EINVAL, "size 0 accepted");
    CHECK(cx_offload_q_init(&q, 8, false) == 0, "init");
    CHECK(!cx_offload_q_alive(&q) && cx_offload_q_is_empty(&q), "new queue");
    CHECK(cx_offload_q_take(&q, &pending) == NULL && !pending, "take from an empty queue");
    for (int round = 0; round < 3; round++) {
        CHECK(push(&q, ITEM(round, 0)) == CX_OFFLOAD_Q_START, "first command: start an executor");
        CHECK(cx_offload_q_alive(&q), "alive bit not set");
        for (int i = 1; i < 8; i++)
            CHECK(push(&q, ITEM(round, i)) == CX_OFFLOAD_Q_QUEUED, "command %d: executor alive", i);
        CHECK(cx_offload_q_reserve(&q, &ticket) == CX_OFFLOAD_Q_FULL, "9th of 8 slots reserved");
        CHECK(!cx_offload_q_retire(&q), "retired with commands queued");
        for (int i = 0; i < 8; i++) {
            void *d = cx_offload_q_take(&q, &pending);
            CHECK(d == ITEM(round, i), "got seq %ld, expected %d", ITEM_SEQ(d), i);
        }
        CHECK(cx_offload_q_take(&q, &pending) == NULL && !pending, "extra command");
        CHECK(cx_offload_q_retire(&q) && !cx_offload_q_alive(&q), "retire from an empty queue");
        CHECK(!cx_offload_q_retire(&q), "retired twice");
    }
    cx_offload_q_destroy(&q);
    printf("offload_q basic: ok\n");
}

/* ---- requesters starting executors on demand ---- */

static struct {
    cx_offload_q_t q;
    int per_producer;
    long next[32];              /* plain: only the executor of the moment writes */
    long got;
    atomic_int executors;       /* alive now */
    atomic_long starts, retirements;
    pthread_barrier_t start, pause;
} D;

static void *executor_main(void *arg)
{
    (void) arg;
    CHECK(atomic_fetch_add(&D.executors, 1) == 0, "two executors at once");
    for (;;) {
        bool pending;
        void *d;
        int idle = 0;
        while ((d = cx_offload_q_take(&D.q, &pending)) == NULL) {
            if (pending || ++idle < 50) {
                sched_yield();
                continue;
            }
            atomic_fetch_sub(&D.executors, 1);  /* before: a successor may start at once */
            if (cx_offload_q_retire(&D.q)) {
                atomic_fetch_add(&D.retirements, 1);
                return NULL;
            }
            CHECK(atomic_fetch_add(&D.executors, 1) == 0, "two executors at once");
            idle = 0;
        }
        int p = ITEM_PRODUCER(d);
        CHECK(ITEM_SEQ(d) == D.next[p], "requester %d: got seq %ld, expected %ld (lost, "
              "duplicated or reordered)", p, ITEM_SEQ(d), D.next[p]);
        D.next[p]++;
        D.got++;
    }
}

/* an executor thread that nobody joins (it retires on its own) */
static void start_detached(void *(*fn)(void *), atomic_long * starts)
{
    pthread_t th;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    CHECK(pthread_create(&th, &attr, fn, NULL) == 0, "executor start");
    pthread_attr_destroy(&attr);
    atomic_fetch_add(starts, 1);
}

static void start_executor(void)
{
    start_detached(executor_main, &D.starts);
}

static void *requester(void *p)
{
    t_thread_t *t = p;
    pthread_barrier_wait(&D.start);
    for (int i = 0; i < D.per_producer; i++) {
        if (push(&D.q, ITEM(t->id, i)) == CX_OFFLOAD_Q_START)
            start_executor();
        if ((i & 127) == 0)
            usleep(200);        /* idle phases: executors may retire */
        if (i == D.per_producer / 2) {
            /* one idle phase for sure, however slow the machine (a loaded
             * CI machine under ThreadSanitizer saw no retirement in the
             * short ones): everybody stops until the executor retired */
            pthread_barrier_wait(&D.pause);
            if (t->id == 0)
                WAIT_UNTIL(!cx_offload_q_alive(&D.q));
            pthread_barrier_wait(&D.pause);
        }
    }
    return NULL;
}

static void dynamic_test(int nproducers, int per_producer)
{
    t_thread_t th[32];
    CHECK(cx_offload_q_init(&D.q, 64, false) == 0, "init");
    D.per_producer = per_producer;
    pthread_barrier_init(&D.start, NULL, (unsigned) nproducers + 1);
    pthread_barrier_init(&D.pause, NULL, (unsigned) nproducers);
    for (int i = 0; i < nproducers; i++)
        t_start(&th[i], i, requester, NULL);
    pthread_barrier_wait(&D.start);
    for (int i = 0; i < nproducers; i++)
        t_join(&th[i]);
    /* the last executor takes the rest and retires */
    WAIT_UNTIL(!cx_offload_q_alive(&D.q) && atomic_load(&D.executors) == 0 &&
               atomic_load(&D.retirements) == atomic_load(&D.starts));
    CHECK(D.got == (long) nproducers * per_producer, "%ld of %ld commands taken", D.got,
          (long) nproducers * per_producer);
    for (int p = 0; p < nproducers; p++)
        CHECK(D.next[p] == per_producer, "requester %d: %ld of %d", p, D.next[p], per_producer);
    CHECK(atomic_load(&D.starts) > 1, "executors never retired in idle phases");
    pthread_barrier_destroy(&D.start);
    pthread_barrier_destroy(&D.pause);
    cx_offload_q_destroy(&D.q);
    printf("offload_q dynamic: %d requesters x %d: %ld executor starts, each retired, "
           "per-requester FIFO, no loss: ok\n", nproducers, per_producer, atomic_load(&D.starts));
}

/* ---- a requester stopped between reservation and publication ---- */

static void stopped_test(void)
{
    cx_offload_q_t q;
    bool pending;
    uint64_t a, b;

    CHECK(cx_offload_q_init(&q, 8, false) == 0, "init");
    CHECK(cx_offload_q_reserve(&q, &a) == CX_OFFLOAD_Q_START, "first reservation");
    /* the requester stops here; a second one queues behind it */
    CHECK(cx_offload_q_reserve(&q, &b) == CX_OFFLOAD_Q_QUEUED, "second reservation");
    cx_offload_q_publish(&q, b, ITEM(1, 0));
    for (int i = 0; i < 3; i++) {
        CHECK(cx_offload_q_take(&q, &pending) == NULL && pending, "took past an unpublished slot");
        CHECK(!cx_offload_q_retire(&q) && cx_offload_q_alive(&q), "retired with a reservation");
    }
    cx_offload_q_publish(&q, a, ITEM(0, 0));
    CHECK(cx_offload_q_take(&q, &pending) == ITEM(0, 0), "the stopped command first");
    CHECK(cx_offload_q_take(&q, &pending) == ITEM(1, 0), "then the one behind it");
    CHECK(cx_offload_q_retire(&q), "retire");
    cx_offload_q_destroy(&q);
    printf("offload_q stopped: ok\n");
}

/* ---- a requester between the executor's read and its CAS ---- */

static cx_offload_q_t RQ;
static atomic_int in_hook, release_hook;

static void race_hook(void)
{
    if (atomic_exchange(&in_hook, 1))
        return; /* the first retirement attempt only */
    WAIT_UNTIL(atomic_load(&release_hook));
}

static void *race_executor(void *arg)
{
    (void) arg;
    bool pending;
    void *d;
    CHECK(cx_offload_q_take(&RQ, &pending) == ITEM(0, 0), "first command");
    CHECK(!cx_offload_q_retire(&RQ), "retired over a command queued during its CAS");
    WAIT_UNTIL((d = cx_offload_q_take(&RQ, &pending)) != NULL);
    CHECK(d == ITEM(1, 0), "the racing command");
    CHECK(cx_offload_q_retire(&RQ), "retire");
    return NULL;
}

static void race_test(void)
{
    t_thread_t e;
    CHECK(cx_offload_q_init(&RQ, 8, false) == 0, "init");
    CHECK(push(&RQ, ITEM(0, 0)) == CX_OFFLOAD_Q_START, "first command");
    cx_offload_q_test_hook = race_hook;
    t_start(&e, 0, race_executor, NULL);
    WAIT_UNTIL(atomic_load(&in_hook));
    /* the executor read an empty queue with itself alive: a requester comes */
    CHECK(push(&RQ, ITEM(1, 0)) == CX_OFFLOAD_Q_QUEUED, "executor still alive: no start");
    atomic_store(&release_hook, 1);
    t_join(&e);
    CHECK(!cx_offload_q_alive(&RQ), "alive after the retirement");
    CHECK(push(&RQ, ITEM(2, 0)) == CX_OFFLOAD_Q_START, "next command starts one");
    cx_offload_q_test_hook = NULL;
    cx_offload_q_destroy(&RQ);
    printf("offload_q race: ok\n");
}

static void static_test(void)
{
    cx_offload_q_t q;
    bool pending;
    CHECK(cx_offload_q_init(&q, 4, true) == 0, "init");
    CHECK(cx_offload_q_alive(&q), "static executor not alive");
    for (int i = 0; i < 20; i++) {
        CHECK(push(&q, ITEM(0, i)) == CX_OFFLOAD_Q_QUEUED, "static queue asked for a start");
        CHECK(cx_offload_q_take(&q, &pending) == ITEM(0, i), "seq %d", i);
    }
    cx_offload_q_destroy(&q);
    printf("offload_q static: ok\n");
}

/* ---- blocked waiters and the executor's retirement ---- */

static struct {
    cx_offload_q_t q;
    atomic_int sleepers, executors;
    atomic_long rounds, starts, retirements, revivals;
    atomic_int done;
} W;

static void *waiter_executor(void *arg)
{
    (void) arg;
    CHECK(atomic_fetch_add(&W.executors, 1) == 0, "two executors at once");
    for (;;) {
        atomic_fetch_add(&W.rounds, 1);
        sched_yield();
        if (atomic_load(&W.sleepers))
            continue;
        atomic_fetch_sub(&W.executors, 1);      /* before: a successor may start at once */
        if (!cx_offload_q_retire(&W.q)) {
            CHECK(atomic_fetch_add(&W.executors, 1) == 0, "two executors at once");
            continue;
        }
        if (atomic_load(&W.sleepers) && cx_offload_q_revive(&W.q)) {
            atomic_fetch_add(&W.revivals, 1);
            CHECK(atomic_fetch_add(&W.executors, 1) == 0, "two executors at once");
            continue;
        }
        atomic_fetch_add(&W.retirements, 1);
        return NULL;
    }
}

static void *waiter(void *p)
{
    (void) p;
    for (int i = 0; i < 2000 / T_SCALE; i++) {
        atomic_fetch_add(&W.sleepers, 1);
        if (!cx_offload_q_alive(&W.q) && cx_offload_q_revive(&W.q))
            start_detached(waiter_executor, &W.starts);
        /* an executor must poll for us now, without our doing anything more */
        long r = atomic_load(&W.rounds);
        WAIT_UNTIL(atomic_load(&W.rounds) >= r + 2);
        atomic_fetch_sub(&W.sleepers, 1);
        if (i % 8 == 0)
            usleep(50); /* let executors retire now and then */
    }
    return NULL;
}

static void waiters_test(void)
{
    t_thread_t th[3];
    CHECK(cx_offload_q_init(&W.q, 8, false) == 0, "init");
    for (int i = 0; i < 3; i++)
        t_start(&th[i], i, waiter, NULL);
    for (int i = 0; i < 3; i++)
        t_join(&th[i]);
    WAIT_UNTIL(atomic_load(&W.executors) == 0 && !cx_offload_q_alive(&W.q));
    CHECK(atomic_load(&W.starts) >= 1 && atomic_load(&W.retirements) >= 1,
          "executors started %ld, retired %ld", atomic_load(&W.starts),
          atomic_load(&W.retirements));
    printf("offload_q waiters: ok (%ld starts, %ld retirements, %ld taken back)\n",
           atomic_load(&W.starts), atomic_load(&W.retirements), atomic_load(&W.revivals));
    cx_offload_q_destroy(&W.q);
}

int main(int argc, char **argv)
{
    const char *t = argc > 1 ? argv[1] : "";
    if (!strcmp(t, "basic"))
        basic_test();
    else if (!strcmp(t, "dynamic"))
        dynamic_test(4, 4000 / T_SCALE);
    else if (!strcmp(t, "stopped"))
        stopped_test();
    else if (!strcmp(t, "race"))
        race_test();
    else if (!strcmp(t, "static"))
        static_test();
    else if (!strcmp(t, "waiters"))
        waiters_test();
    else {
        fprintf(stderr, "usage: %s basic|dynamic|stopped|race|static|waiters\n", argv[0]);
        return 2;
    }
    return 0;
}
