/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * CLHub: mutual exclusion with acquire, acquire_low and tryacquire mixed;
 * two CLHub locks held at once; priority of a waiting high-priority
 * candidate over low-priority waiters; liveness of low-priority acquirers.
 *
 *     test_clhub mutex|nested|priority|lowlive
 */
#include "test_common.h"
#include "cx_clhub.h"

static void clhub_acquire(void *l)
{
    cx_clhub_acquire(l);
}

static void clhub_acquire_low(void *l)
{
    cx_clhub_acquire_low(l);
}

static void clhub_release(void *l)
{
    cx_clhub_release(l);
}

static bool clhub_try(void *l)
{
    return cx_clhub_tryacquire(l);
}

static const t_lock_ops_t clhub_ops = {
    "clhub", clhub_acquire, clhub_release, clhub_try, clhub_acquire_low, NULL
};

static cx_clhub_lock_t L[2];

static uintptr_t clh_tail(cx_clh_lock_t * c)
{
    return (uintptr_t) atomic_load(&c->tail);
}

/* ---- priority ---- */

enum { H1, H2, LOW1, LOW2, NROLES };
static const char *role_name[NROLES] = { "H1", "H2", "L1", "L2" };

typedef struct {
    atomic_int pos;
    int order[NROLES];
    atomic_int h1_ready;        /* H1 is in its CS and H2 became candidate */
    atomic_int h1_may_leave;    /* the low-priority threads are queued */
} prio_t;

static prio_t P;

static void *prio_thread(void *p)
{
    t_thread_t *t = p;
    cx_clhub_lock_t *l = &L[0];
    if (t->id == H1 || t->id == H2)
        cx_clhub_acquire(l);
    else
        cx_clhub_acquire_low(l);
    P.order[atomic_fetch_add(&P.pos, 1)] = t->id;
    if (t->id == H1) {
        /* H2, queued in fifo_high behind us, becomes the candidate */
        WAIT_UNTIL(atomic_load(&l->filter) == 1);
        atomic_store(&P.h1_ready, 1);
        WAIT_UNTIL(atomic_load(&P.h1_may_leave));
    }
    cx_clhub_release(l);
    return NULL;
}

/* Each round: the main thread holds the lock; H1 becomes the candidate, H2
 * queues behind it. Main releases: H1 is the only thread spinning on bias.
 * While H1 is inside, H2 becomes the candidate, and only then do L1 and L2
 * arrive: they find filter == 1 and it stays 1 until H2 owns bias, so the
 * order must be H1 H2 L1 L2 (L1 before L2: FIFO among low priority). */
static void priority_test(int rounds)
{
    cx_clhub_lock_t *l = &L[0];
    for (int r = 0; r < rounds; r++) {
        t_thread_t th[NROLES];
        uintptr_t before;

        memset(&P, 0, sizeof(P));
        cx_clhub_acquire(l);
        t_start(&th[H1], H1, prio_thread, NULL);
        WAIT_UNTIL(atomic_load(&l->filter) == 1);
        before = clh_tail(&l->fifo_high);
        t_start(&th[H2], H2, prio_thread, NULL);
        WAIT_UNTIL(clh_tail(&l->fifo_high) != before);
        cx_clhub_release(l);

        WAIT_UNTIL(atomic_load(&P.h1_ready));
        before = clh_tail(&l->fifo_low);
        t_start(&th[LOW1], LOW1, prio_thread, NULL);
        WAIT_UNTIL(clh_tail(&l->fifo_low) != before);
        before = clh_tail(&l->fifo_low);
        t_start(&th[LOW2], LOW2, prio_thread, NULL);
        WAIT_UNTIL(clh_tail(&l->fifo_low) != before);
        atomic_store(&P.h1_may_leave, 1);

        for (int i = 0; i < NROLES; i++)
            t_join(&th[i]);
        for (int i = 0; i < NROLES; i++)
            CHECK(P.order[i] == i, "round %d: position %d went to %s, expected %s", r, i,
                  role_name[P.order[i]], role_name[i]);
    }
    printf("clhub priority: %d rounds: H1 H2 L1 L2 every time: ok\n", rounds);
}

/* ---- liveness of low priority under high-priority load ---- */

typedef struct {
    atomic_int stop_high;
    atomic_int low_done;
    atomic_long high_acq, low_acq, low_acq_while_high;
    t_cs_t cs;
    int low_iters;
} live_t;

static live_t V;

static void *live_high(void *p)
{
    (void) p;
    long n = 0;
    while (!atomic_load_explicit(&V.stop_high, memory_order_relaxed)) {
        cx_clhub_acquire(&L[0]);
        t_cs_enter(&V.cs);
        t_cs_exit(&V.cs);
        cx_clhub_release(&L[0]);
        n++;
    }
    atomic_fetch_add(&V.high_acq, n);
    return NULL;
}

static void *live_low(void *p)
{
    (void) p;
    for (int i = 0; i < V.low_iters; i++) {
        cx_clhub_acquire_low(&L[0]);
        t_cs_enter(&V.cs);
        if (!atomic_load_explicit(&V.stop_high, memory_order_relaxed))
            atomic_fetch_add(&V.low_acq_while_high, 1);
        t_cs_exit(&V.cs);
        cx_clhub_release(&L[0]);
        atomic_fetch_add(&V.low_acq, 1);
    }
    atomic_fetch_add(&V.low_done, 1);
    return NULL;
}

/* High-priority threads hammer the lock for a while; low-priority threads
 * must still complete all their acquisitions once the load stops. */
static void lowlive_test(int nhigh, int nlow)
{
    t_thread_t th[32];
    memset(&V, 0, sizeof(V));
    V.low_iters = 200;
    for (int i = 0; i < nhigh; i++)
        t_start(&th[i], i, live_high, NULL);
    for (int i = 0; i < nlow; i++)
        t_start(&th[nhigh + i], nhigh + i, live_low, NULL);
    t_sleep_ms(200);
    atomic_store(&V.stop_high, 1);
    for (int i = 0; i < nhigh; i++)
        t_join(&th[i]);
    /* bounded: fails instead of hanging */
    WAIT_UNTIL(atomic_load(&V.low_done) == nlow);
    for (int i = 0; i < nlow; i++)
        t_join(&th[nhigh + i]);
    long total = atomic_load(&V.high_acq) + atomic_load(&V.low_acq);
    CHECK(V.cs.counter == total, "counter %ld, expected %ld", V.cs.counter, total);
    CHECK(atomic_load(&V.low_acq) == (long) nlow * V.low_iters, "low acquisitions lost");
    printf
        ("clhub lowlive: %d high, %d low: high %ld acquisitions, low %ld (%ld during high load): ok\n",
         nhigh, nlow, atomic_load(&V.high_acq), atomic_load(&V.low_acq),
         atomic_load(&V.low_acq_while_high));
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s mutex|nested|priority|lowlive\n", argv[0]);
        return 2;
    }
    CHECK(cx_clhub_init(&L[0]) == 0 && cx_clhub_init(&L[1]) == 0, "cx_clhub_init");
    if (!strcmp(argv[1], "mutex")) {
        static const int nt[] = { 2, 4, 16 };
        for (int i = 0; i < 3; i++) {
            t_mutex_test(&clhub_ops, &L[0], nt[i], 200000 / nt[i], false);
            t_mutex_test(&clhub_ops, &L[0], nt[i], 200000 / nt[i], true);
        }
    } else if (!strcmp(argv[1], "nested")) {
        t_nested_test(&clhub_ops, &L[0], &L[1], 2, 100000, true);
        t_nested_test(&clhub_ops, &L[0], &L[1], 4, 50000, true);
        t_nested_test(&clhub_ops, &L[0], &L[1], 16, 10000, true);
    } else if (!strcmp(argv[1], "priority")) {
        priority_test(T_SCALE > 1 ? 20 : 50);
    } else if (!strcmp(argv[1], "lowlive")) {
        lowlive_test(2, 1);
        lowlive_test(4, 2);
        lowlive_test(8, 4);
    } else {
        fprintf(stderr, "unknown test %s\n", argv[1]);
        return 2;
    }
    cx_clhub_destroy(&L[0]);
    cx_clhub_destroy(&L[1]);
    return 0;
}
