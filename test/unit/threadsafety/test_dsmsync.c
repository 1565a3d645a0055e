/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * DSM-Synch with the acquire/release extension: scripted queues with exact
 * expected combining (who applies which request, where combining stops:
 * tail node, NULL request, max_combine), at most one NULL request in the
 * queue, and a stress mixing cx_dsm_synch with exclusive sections (exact
 * count, every request applied once, counters consistent, batch bound).
 * Both also drive the inline-first entry (cx_dsm_try_first, then
 * cx_dsm_finish_first or, when it fails, cx_dsm_synch).
 *
 *     test_dsmsync scripted|stress
 */
#include "test_common.h"
#include "cx_dsmsync.h"

#ifndef CX_DSM_CHECK
#error "build with -DCX_DSM_CHECK"
#endif

static _Thread_local int my_tid = -1;

typedef struct {
    int owner;
    int applied_by;             /* plain: the combiner's write must happen-before the owner's read */
    bool block;                 /* scripted: apply waits for `unblock` */
} req_t;

typedef struct {
    t_cs_t cs;
    atomic_int in_apply, unblock;
    atomic_int pos;
    int order[16];              /* scripted: owner of each applied request / CS, in order */
} shared_t;

static shared_t S;

static void apply(void *p, void *ctx)
{
    req_t *r = p;
    (void) ctx;
    if (r->block) {
        atomic_store(&S.in_apply, 1);
        WAIT_UNTIL(atomic_load(&S.unblock));
    }
    t_cs_enter(&S.cs);
    CHECK(r->applied_by == -1, "request of thread %d applied twice", r->owner);
    r->applied_by = my_tid;
    int pos = atomic_fetch_add(&S.pos, 1);
    if (pos < 16)
        S.order[pos] = r->owner;
    t_cs_exit(&S.cs);
}

static cx_dsm_t D;

/* ---- scripted ---- */

typedef struct {
    req_t req;
    cx_dsm_thread_t ts;
    bool exclusive;             /* cx_dsm_acquire/release instead of synch */
    bool inline_first;          /* try_first before synch */
    atomic_int done;
} actor_t;

static actor_t A[8];

/* cx_dsm_synch as CSync's issue path does it: run the request here when the
 * queue is empty, else announce it. */
static void synch_first(cx_dsm_thread_t * ts, req_t * req)
{
    if (cx_dsm_try_first(&D, ts)) {
        apply(req, NULL);
        cx_dsm_finish_first(&D, ts);
        CHECK(req->applied_by == my_tid, "an inline request was applied by %d", req->applied_by);
        return;
    }
    cx_dsm_synch(&D, ts, req);
    CHECK(req->applied_by >= 0, "synch returned before the request was applied");
}

static void *actor(void *p)
{
    t_thread_t *t = p;
    actor_t *a = &A[t->id];
    my_tid = t->id;
    if (a->exclusive) {
        cx_dsm_acquire(&D, &a->ts);
        t_cs_enter(&S.cs);
        S.order[atomic_fetch_add(&S.pos, 1)] = t->id;
        t_cs_exit(&S.cs);
        cx_dsm_release(&D, &a->ts);
    } else if (a->inline_first) {
        synch_first(&a->ts, &a->req);
    } else {
        cx_dsm_synch(&D, &a->ts, &a->req);
        CHECK(a->req.applied_by >= 0, "synch returned before the request was applied");
    }
    atomic_store(&a->done, 1);
    return NULL;
}

static uintptr_t dsm_tail(void)
{
    return (uintptr_t) atomic_load(&D.tail);
}

static void reset_actors(void)
{
    memset(&S, 0, sizeof(S));
    for (int i = 0; i < 8; i++) {
        A[i].req.owner = i;
        A[i].req.applied_by = -1;
        A[i].req.block = false;
        A[i].exclusive = false;
        A[i].inline_first = false;
        atomic_store(&A[i].done, 0);
        cx_dsm_thread_init(&A[i].ts);
    }
}

/* Start actor i and wait until its node is the queue tail. */
static void enqueue_actor(t_thread_t * th, int i)
{
    uintptr_t before = dsm_tail();
    t_start(th, i, actor, NULL);
    WAIT_UNTIL(dsm_tail() != before);
}

/* The main thread holds the lock (cx_dsm_acquire), n actors queue behind
 * it; returns after everything ran. */
static void queue_behind_main(int n)
{
    cx_dsm_thread_t mt;
    t_thread_t th[8];
    cx_dsm_thread_init(&mt);
    cx_dsm_acquire(&D, &mt);
    for (int i = 0; i < n; i++)
        enqueue_actor(&th[i], i);
    cx_dsm_release(&D, &mt);
    for (int i = 0; i < n; i++)
        t_join(&th[i]);
    CHECK(atomic_load(&D.tail) == NULL, "queue not empty at the end");
}

static void expect_applied(int i, int by)
{
    CHECK(A[i].req.applied_by == by, "request of %d applied by %d, expected %d", i,
          A[i].req.applied_by, by);
}

static void scripted_test(void)
{
    unsigned long c0;

    /* 1. A B C behind the holder: A serves itself and B, never the tail C */
    cx_dsm_init(&D, 1024, apply, NULL);
    reset_actors();
    queue_behind_main(3);
    expect_applied(0, 0);
    expect_applied(1, 0);
    expect_applied(2, 2);
    CHECK(atomic_load(&D.combined) == 1, "combined %lu, expected 1", atomic_load(&D.combined));
    CHECK(atomic_load(&D.batches) == 2 && atomic_load(&D.max_batch) == 2,
          "batches %lu max %lu, expected 2 and 2", atomic_load(&D.batches),
          atomic_load(&D.max_batch));

    /* 2. max_combine 0: nobody combines, the lock walks down the queue */
    cx_dsm_init(&D, 0, apply, NULL);
    reset_actors();
    queue_behind_main(4);
    for (int i = 0; i < 4; i++)
        expect_applied(i, i);
    CHECK(atomic_load(&D.combined) == 0 &&
          atomic_load(&D.max_batch) == 1, "max_combine 0 combined");

    /* 3. max_combine 1 with A..F: A serves A,B; C serves C,D; E (next to the
     * tail F) serves only E; F itself */
    cx_dsm_init(&D, 1, apply, NULL);
    reset_actors();
    queue_behind_main(6);
    expect_applied(0, 0);
    expect_applied(1, 0);
    expect_applied(2, 2);
    expect_applied(3, 2);
    expect_applied(4, 4);
    expect_applied(5, 5);
    CHECK(atomic_load(&D.combined) == 2 && atomic_load(&D.max_batch) == 2,
          "max_combine 1: combined %lu max batch %lu", atomic_load(&D.combined),
          atomic_load(&D.max_batch));

    /* 4. a NULL request stops combining, and a second exclusive caller
     * stays out of the combining queue. A is combining (its apply blocks);
     * B queues; N (exclusive) queues its NULL; C queues; N2 (exclusive)
     * blocks on the outer MCS lock. Then: A serves B, stops before N; N
     * runs its section; C serves itself; N2 runs last. */
    cx_dsm_init(&D, 1024, apply, NULL);
    reset_actors();
    {
        enum { a = 0, b = 1, n = 2, c = 3, n2 = 4 };
        t_thread_t th[5];
        A[a].req.block = true;
        A[n].exclusive = A[n2].exclusive = true;
        t_start(&th[a], a, actor, NULL);
        WAIT_UNTIL(atomic_load(&S.in_apply));
        enqueue_actor(&th[b], b);
        enqueue_actor(&th[n], n);
        enqueue_actor(&th[c], c);
        uintptr_t before = dsm_tail(), outer = (uintptr_t) atomic_load(&D.outer.tail);
        t_start(&th[n2], n2, actor, NULL);
        WAIT_UNTIL((uintptr_t) atomic_load(&D.outer.tail) != outer);
        t_sleep_ms(20);
        CHECK(dsm_tail() == before, "a second exclusive caller entered the combining queue");
        c0 = atomic_load(&D.combined);
        atomic_store(&S.unblock, 1);
        for (int i = 0; i < 5; i++)
            t_join(&th[i]);
        int expect[5] = { a, b, n, c, n2 };
        for (int i = 0; i < 5; i++)
            CHECK(S.order[i] == expect[i], "NULL stop: position %d is %d, expected %d", i,
                  S.order[i], expect[i]);
        expect_applied(a, a);
        expect_applied(b, a);
        expect_applied(c, c);
        CHECK(atomic_load(&D.combined) - c0 == 1, "NULL stop: combined %lu",
              atomic_load(&D.combined) - c0);
        CHECK(atomic_load(&D.check_max_nulls) == 1, "%d NULL requests queued at once",
              atomic_load(&D.check_max_nulls));
    }
    /* 5. inline first: M finds the queue empty and runs its own request
     * (blocked in apply); A (synch) and B (linked) queue behind it.  M's
     * finish serves A, not the tail B; its batch is M's and A's. */
    cx_dsm_init(&D, 1024, apply, NULL);
    reset_actors();
    {
        enum { m = 0, a = 1, b = 2 };
        t_thread_t th[3];
        A[m].req.block = true;
        A[m].inline_first = A[b].inline_first = true;
        t_start(&th[m], m, actor, NULL);
        WAIT_UNTIL(atomic_load(&S.in_apply));
        CHECK(dsm_tail() == (uintptr_t) & A[m].ts.qnodes[A[m].ts.toggle],
              "an inline-first caller is not the queue tail");
        enqueue_actor(&th[a], a);
        enqueue_actor(&th[b], b);
        /* B linked itself behind A: A is not the tail M's finish sees */
        WAIT_UNTIL(atomic_load(&A[a].ts.qnodes[A[a].ts.toggle].next) != NULL);
        atomic_store(&S.unblock, 1);
        for (int i = 0; i < 3; i++)
            t_join(&th[i]);
        int expect[3] = { m, a, b };
        for (int i = 0; i < 3; i++)
            CHECK(S.order[i] == expect[i], "inline first: position %d is %d, expected %d", i,
                  S.order[i], expect[i]);
        expect_applied(m, m);
        expect_applied(a, m);
        expect_applied(b, b);
        CHECK(atomic_load(&D.combined) == 1 && atomic_load(&D.batches) == 2 &&
              atomic_load(&D.max_batch) == 2,
              "inline first: combined %lu batches %lu max %lu, expected 1, 2 and 2",
              atomic_load(&D.combined), atomic_load(&D.batches), atomic_load(&D.max_batch));
        CHECK(atomic_load(&D.tail) == NULL, "queue not empty at the end");
    }

    /* 6. inline first behind a holder: A's try_first fails, so A announces
     * its request and the holder's successor path applies it */
    cx_dsm_init(&D, 1024, apply, NULL);
    reset_actors();
    A[0].inline_first = A[1].inline_first = true;
    queue_behind_main(3);
    expect_applied(0, 0);
    expect_applied(1, 0);
    expect_applied(2, 2);
    /* 7. try_first: succeeds on an empty queue; on a held one it fails
     * without touching the queue or the thread's node toggle */
    cx_dsm_init(&D, 1024, apply, NULL);
    reset_actors();
    {
        cx_dsm_thread_t mt, ot;
        cx_dsm_thread_init(&mt);
        cx_dsm_thread_init(&ot);
        CHECK(cx_dsm_try_first(&D, &ot), "try_first failed on an empty queue");
        cx_dsm_finish_first(&D, &ot);
        CHECK(atomic_load(&D.tail) == NULL, "queue not empty after finish_first");
        cx_dsm_acquire(&D, &mt);
        CHECK(mt.held_first && atomic_load(&D.outer.tail) == NULL,
              "an acquire of an empty queue took the outer lock");
        uintptr_t before = dsm_tail();
        int toggle = ot.toggle;
        CHECK(!cx_dsm_try_first(&D, &ot), "try_first succeeded on a held queue");
        CHECK(!cx_dsm_tryacquire(&D, &ot), "tryacquire succeeded on a held queue");
        CHECK(dsm_tail() == before && ot.toggle == toggle, "a failed try_first changed state");
        cx_dsm_release(&D, &mt);
        CHECK(cx_dsm_tryacquire(&D, &ot), "tryacquire failed on an empty queue");
        CHECK(!cx_dsm_tryacquire(&D, &mt), "two holders at once");
        cx_dsm_release(&D, &ot);
        CHECK(atomic_load(&D.tail) == NULL && atomic_load(&D.batches) == 0,
              "try_first: tail %p, batches %lu", (void *) atomic_load(&D.tail),
              atomic_load(&D.batches));
    }
    printf("dsmsync scripted: tail never served, max_combine 0/1, NULL stop, one NULL, "
           "inline first, try first: ok\n");
}

/* ---- stress ---- */

typedef struct {
    int iters;
    atomic_int stop, finished;
    long ops[64], foreign[64];
    pthread_barrier_t start;
} stress_t;

static stress_t ST;

static void *stress_thread(void *p)
{
    t_thread_t *t = p;
    cx_dsm_thread_t ts;
    req_t req;
    int i;
    cx_dsm_thread_init(&ts);
    my_tid = t->id;
    req.owner = t->id;
    req.block = false;
    pthread_barrier_wait(&ST.start);
    for (i = 0; i < ST.iters && !atomic_load_explicit(&ST.stop, memory_order_relaxed); i++) {
        if (i % 4 == 3) {
            /* every other exclusive section tries first (CSync's progress) */
            if (!(i % 8 == 7 && cx_dsm_tryacquire(&D, &ts)))
                cx_dsm_acquire(&D, &ts);
            t_cs_enter(&S.cs);
            t_cs_exit(&S.cs);
            cx_dsm_release(&D, &ts);
        } else if (i % 4 != 0) {
            req.applied_by = -1;
            synch_first(&ts, &req);
            if (req.applied_by != t->id)
                ST.foreign[t->id]++;
        } else {
            req.applied_by = -1;
            cx_dsm_synch(&D, &ts, &req);
            CHECK(req.applied_by >= 0, "synch returned before the request was applied");
            if (req.applied_by != t->id)
                ST.foreign[t->id]++;
        }
    }
    ST.ops[t->id] = i;
    atomic_fetch_add(&ST.finished, 1);
    return NULL;
}

/* returns the number of requests combined for other threads */
static unsigned long stress_run(int nthreads, unsigned max_combine)
{
    t_thread_t th[64];
    long ops = 0, foreign = 0;
    double deadline;

    memset(&S, 0, sizeof(S));
    memset(&ST, 0, sizeof(ST));
    ST.iters = 100000;
    cx_dsm_init(&D, max_combine, apply, NULL);
    pthread_barrier_init(&ST.start, NULL, (unsigned) nthreads);
    for (int i = 0; i < nthreads; i++)
        t_start(&th[i], i, stress_thread, NULL);
    deadline = t_now() + T_STRESS_SECONDS;
    while (atomic_load(&ST.finished) < nthreads && t_now() < deadline)
        t_sleep_ms(2);
    atomic_store(&ST.stop, 1);
    for (int i = 0; i < nthreads; i++)
        t_join(&th[i]);
    pthread_barrier_destroy(&ST.start);
    for (int i = 0; i < nthreads; i++) {
        ops += ST.ops[i];
        foreign += ST.foreign[i];
    }
    CHECK(S.cs.counter == ops, "counter %ld, expected %ld", S.cs.counter, ops);
    CHECK((long) atomic_load(&D.combined) == foreign, "combined counter %lu, but %ld requests were "
          "applied by another thread", atomic_load(&D.combined), foreign);
    CHECK(atomic_load(&D.max_batch) <= max_combine + 1, "batch of %lu with max_combine %u",
          atomic_load(&D.max_batch), max_combine);
    CHECK(atomic_load(&D.check_max_nulls) <= 1, "%d NULL requests queued at once",
          atomic_load(&D.check_max_nulls));
    unsigned long hist = 0;
    for (int i = 0; i < CX_DSM_HIST_BUCKETS; i++)
        hist += atomic_load(&D.batch_hist[i]);
    CHECK(hist == atomic_load(&D.batches), "histogram total %lu, batches %lu", hist,
          atomic_load(&D.batches));
    printf("dsmsync stress: %d threads, max_combine %u: %ld ops, %lu combined, %lu batches, "
           "max batch %lu: ok\n", nthreads, max_combine, ops, atomic_load(&D.combined),
           atomic_load(&D.batches), atomic_load(&D.max_batch));
    return atomic_load(&D.combined);
}

static void stress_test(void)
{
    static const struct {
        int threads;
        unsigned mc;
    } runs[] = {
        {2, 1024}, {4, 1024}, {4, 1}, {8, 2}, {16, 1024}, {16, 1}
    };
    unsigned long combined = 0;
    for (unsigned i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
        unsigned long c = stress_run(runs[i].threads, runs[i].mc);
        if (runs[i].threads >= 4)
            combined += c;
    }
    /* combining needs three queued threads; more runs if none formed */
    for (int extra = 0; combined == 0 && extra < 10; extra++)
        combined += stress_run(8, 1024);
    CHECK(combined > 0, "no request was ever combined by another thread");
}

int main(int argc, char **argv)
{
    my_tid = 100;
    if (argc != 2) {
        fprintf(stderr, "usage: %s scripted|stress\n", argv[0]);
        return 2;
    }
    if (!strcmp(argv[1], "scripted")) {
        scripted_test();
    } else if (!strcmp(argv[1], "stress")) {
        stress_test();
    } else {
        fprintf(stderr, "unknown test %s\n", argv[1]);
        return 2;
    }
    return 0;
}
