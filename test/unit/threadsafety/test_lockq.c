/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * LockQ helpers: FIFO drain bounded by max_combine with limit_reached, and
 * the LockQ protocol under contention (trylock or post; every holder
 * combines first; a holder that leaves work behind posts its own operation):
 * every operation runs once, each thread's operations in program order;
 * groups (a window's operations): a drain runs every post of its group that
 * finished before it, past max_combine and past a producer stopped between
 * swap and link, and returns the group's first error once.
 *
 *     test_lockq fifo|protocol|group|group_hook
 */
#include "test_common.h"
#include "cx_lockq.h"
#include "cx_ticket.h"

void (*cx_swpq_test_hook)(cx_swpq_t * q, void *data);

static int ran[64], nran;

static void record(void *descr, void *ctx)
{
    (void) ctx;
    ran[nran++] = (int) (uintptr_t) descr;
}

static void fifo_test(void)
{
    cx_lockq_t lq;
    bool limit;

    CHECK(cx_lockq_init(&lq, 4) == 0, "init");
    CHECK(!cx_lockq_pending(&lq), "new queue pending");
    CHECK(cx_lockq_combine(&lq, record, NULL, &limit) == 0 && !limit, "combine of an empty queue");
    for (int i = 1; i <= 10; i++)
        CHECK(cx_lockq_post(&lq, (void *) (uintptr_t) i) == 0, "post");
    CHECK(cx_lockq_pending(&lq), "posted work not pending");
    CHECK(cx_lockq_combine(&lq, record, NULL, &limit) == 4 && limit, "first batch: 4 and limit");
    CHECK(cx_lockq_combine(&lq, record, NULL, &limit) == 4 && limit, "second batch: 4 and limit");
    CHECK(cx_lockq_combine(&lq, record, NULL, &limit) == 2 && !limit, "third batch: 2, no limit");
    CHECK(!cx_lockq_pending(&lq), "drained queue pending");
    for (int i = 0; i < 10; i++)
        CHECK(ran[i] == i + 1, "position %d ran %d", i, ran[i]);
    /* exactly max_combine queued: all run, nothing left, no limit */
    for (int i = 11; i <= 14; i++)
        cx_lockq_post(&lq, (void *) (uintptr_t) i);
    CHECK(cx_lockq_combine(&lq, record, NULL, &limit) == 4 && !limit, "exact batch");
    CHECK(cx_lockq_combine(&lq, record, NULL, NULL) == 0, "NULL limit_reached pointer");
    CHECK(atomic_load(&lq.enqueued) == 14 && atomic_load(&lq.combined) == 14 &&
          atomic_load(&lq.batches) == 4, "counters %lu %lu %lu", atomic_load(&lq.enqueued),
          atomic_load(&lq.combined), atomic_load(&lq.batches));
    cx_lockq_destroy(&lq);
    CHECK(cx_lockq_init(&lq, 0) == 0 && lq.max_combine == CX_LOCKQ_DEFAULT_MAX_COMBINE,
          "default max_combine");
    cx_lockq_destroy(&lq);
    printf("lockq fifo: FIFO drain, max_combine, limit_reached: ok\n");
}

/* ---- protocol under contention ---- */

typedef struct {
    int tid;
    long seq;
} op_t;

typedef struct {
    cx_ticket_lock_t lock;
    cx_lockq_t lq;
    t_cs_t cs;
    long next[64];              /* next expected seq per thread (lock holder only) */
    long issued[64];
    long direct, posted, own_posted;
    int iters;
    atomic_int stop, finished;
    pthread_barrier_t start;
} proto_t;

static proto_t P;

static void run_op(void *descr, void *ctx)
{
    op_t *op = descr;
    (void) ctx;
    t_cs_enter(&P.cs);
    CHECK(op->seq == P.next[op->tid], "thread %d: op %ld ran, expected %ld (order broken)",
          op->tid, op->seq, P.next[op->tid]);
    P.next[op->tid]++;
    t_cs_exit(&P.cs);
    free(op);
}

static void *proto_thread(void *p)
{
    t_thread_t *t = p;
    long i;
    pthread_barrier_wait(&P.start);
    for (i = 0; i < P.iters && !atomic_load_explicit(&P.stop, memory_order_relaxed); i++) {
        op_t *op = malloc(sizeof(*op));
        op->tid = t->id;
        op->seq = i;
        if (cx_ticket_tryacquire(&P.lock)) {
            bool left;
            cx_lockq_combine(&P.lq, run_op, NULL, &left);
            if (left) {
                CHECK(cx_lockq_post(&P.lq, op) == 0, "post");
                P.own_posted++;
            } else {
                run_op(op, NULL);
                P.direct++;
            }
            cx_ticket_release(&P.lock);
        } else {
            CHECK(cx_lockq_post(&P.lq, op) == 0, "post");
        }
        if ((i & 63) == 63) {
            /* a "Wait": blocking acquire, combine */
            cx_ticket_acquire(&P.lock);
            cx_lockq_combine(&P.lq, run_op, NULL, NULL);
            cx_ticket_release(&P.lock);
        }
    }
    P.issued[t->id] = i;
    atomic_fetch_add(&P.finished, 1);
    return NULL;
}

static void protocol_test(int nthreads, unsigned max_combine)
{
    t_thread_t th[64];
    long total = 0;
    double deadline;

    memset(&P, 0, sizeof(P));
    cx_ticket_init(&P.lock);
    CHECK(cx_lockq_init(&P.lq, max_combine) == 0, "init");
    P.iters = 100000;
    pthread_barrier_init(&P.start, NULL, (unsigned) nthreads);
    for (int i = 0; i < nthreads; i++)
        t_start(&th[i], i, proto_thread, NULL);
    deadline = t_now() + T_STRESS_SECONDS;
    while (atomic_load(&P.finished) < nthreads && t_now() < deadline)
        t_sleep_ms(2);
    atomic_store(&P.stop, 1);
    for (int i = 0; i < nthreads; i++)
        t_join(&th[i]);
    pthread_barrier_destroy(&P.start);
    /* the last resort: a completion call drains what is left */
    cx_ticket_acquire(&P.lock);
    while (cx_lockq_pending(&P.lq))
        cx_lockq_combine(&P.lq, run_op, NULL, NULL);
    cx_ticket_release(&P.lock);
    for (int i = 0; i < nthreads; i++) {
        CHECK(P.next[i] == P.issued[i], "thread %d: %ld ops ran, %ld issued", i, P.next[i],
              P.issued[i]);
        total += P.issued[i];
    }
    CHECK(P.cs.counter == total, "counter %ld, expected %ld", P.cs.counter, total);
    CHECK((long) atomic_load(&P.lq.combined) == total - P.direct, "combined %lu, expected %ld",
          atomic_load(&P.lq.combined), total - P.direct);
    printf("lockq protocol: %d threads, max_combine %u: %ld ops, %ld run directly, %lu combined "
           "in %lu batches, %ld own ops posted by a holder: ok\n", nthreads, max_combine, total,
           P.direct, atomic_load(&P.lq.combined), atomic_load(&P.lq.batches), P.own_posted);
    cx_lockq_destroy(&P.lq);
}

/* ---- groups ---- */

#define GROUP_ITEM(g, i) ((void *) (uintptr_t) ((g) * 1000 + (i) + 1))  /* never NULL */
static cx_lockq_group_t groups[2];

static void group_apply(void *descr, void *ctx)
{
    (void) ctx;
    int v = (int) (uintptr_t) descr;
    record(descr, NULL);
    /* item 7 of group 1 fails */
    cx_lockq_group_ran(&groups[v / 1000], v == 1008 ? 42 : 0);
}

static void group_test(void)
{
    cx_lockq_t lq;
    nran = 0;
    memset(groups, 0, sizeof(groups));
    CHECK(cx_lockq_init(&lq, 1) == 0, "init");
    CHECK(cx_lockq_group_drain(&lq, &groups[0], group_apply, NULL) == 0 && nran == 0,
          "drain of an empty group");
    /* 20 posts, alternating groups, max_combine 1 */
    for (int i = 0; i < 10; i++) {
        CHECK(cx_lockq_group_post(&lq, &groups[0], GROUP_ITEM(0, i)) == 0, "post");
        CHECK(cx_lockq_group_post(&lq, &groups[1], GROUP_ITEM(1, i)) == 0, "post");
    }
    /* group 1's drain runs everything up to its last post (group 0's too) */
    CHECK(cx_lockq_group_drain(&lq, &groups[1], group_apply, NULL) == 42,
          "group 1's error not returned");
    CHECK(groups[1].ran == 10 && nran >= 19, "group 1 drained %lu of 10 (%d run)",
          groups[1].ran, nran);
    CHECK(cx_lockq_group_drain(&lq, &groups[1], group_apply, NULL) == 0, "error returned twice");
    CHECK(cx_lockq_group_drain(&lq, &groups[0], group_apply, NULL) == 0 && groups[0].ran == 10,
          "group 0 drained %lu of 10", groups[0].ran);
    for (int i = 0; i < 20; i++)
        CHECK(ran[i] == (int) (uintptr_t) GROUP_ITEM(i % 2, i / 2), "position %d ran %d", i,
              ran[i]);
    CHECK(!cx_lockq_pending(&lq), "queue not empty");
    cx_lockq_destroy(&lq);
    printf("lockq group: a drain runs its group's posts past max_combine 1, error once: ok\n");
}

/* A producer of the group stops between its swap and its link; the drainer
 * (lock holder) must wait for it, not return with its post or the posts
 * behind it unrun. */
static cx_lockq_t HLQ;
static void *blocked_item;
static atomic_int in_hook, release_hook, drained;

static void hook(cx_swpq_t * q, void *data)
{
    (void) q;
    if (data != blocked_item)
        return;
    atomic_store(&in_hook, 1);
    WAIT_UNTIL(atomic_load(&release_hook));
}

static void *hook_producer(void *p)
{
    t_thread_t *t = p;
    CHECK(cx_lockq_group_post(&HLQ, &groups[0], t->arg) == 0, "post");
    return NULL;
}

static void *drainer(void *p)
{
    (void) p;
    cx_lockq_group_drain(&HLQ, &groups[0], group_apply, NULL);
    atomic_store(&drained, 1);
    return NULL;
}

static void group_hook_test(void)
{
    t_thread_t a, d;
    nran = 0;
    memset(groups, 0, sizeof(groups));
    CHECK(cx_lockq_init(&HLQ, 1) == 0, "init");
    cx_swpq_test_hook = hook;
    CHECK(cx_lockq_group_post(&HLQ, &groups[0], GROUP_ITEM(0, 0)) == 0, "post");
    blocked_item = GROUP_ITEM(0, 1);
    t_start(&a, 1, hook_producer, blocked_item);
    WAIT_UNTIL(atomic_load(&in_hook));
    /* this thread's own post, behind the unlinked one, then its drain */
    CHECK(cx_lockq_group_post(&HLQ, &groups[0], GROUP_ITEM(0, 2)) == 0, "post");
    t_start(&d, 2, drainer, NULL);
    for (int i = 0; i < 200; i++) {
        CHECK(!atomic_load(&drained), "drain returned past an unlinked post (ran %lu of 3)",
              groups[0].ran);
        usleep(100);
    }
    atomic_store(&release_hook, 1);
    t_join(&a);
    t_join(&d);
    CHECK(groups[0].ran == 3 && nran == 3, "ran %lu of 3", groups[0].ran);
    for (int i = 0; i < 3; i++)
        CHECK(ran[i] == (int) (uintptr_t) GROUP_ITEM(0, i), "position %d ran %d", i, ran[i]);
    cx_swpq_test_hook = NULL;
    cx_lockq_destroy(&HLQ);
    printf("lockq group hook: a drain waits for a producer stopped between swap and link: ok\n");
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s fifo|protocol|group|group_hook\n", argv[0]);
        return 2;
    }
    if (!strcmp(argv[1], "fifo")) {
        fifo_test();
    } else if (!strcmp(argv[1], "protocol")) {
        protocol_test(2, 1024);
        protocol_test(4, 2);
        protocol_test(16, 1);
        protocol_test(16, 1024);
    } else if (!strcmp(argv[1], "group")) {
        group_test();
    } else if (!strcmp(argv[1], "group_hook")) {
        group_hook_test();
    } else {
        fprintf(stderr, "unknown test %s\n", argv[1]);
        return 2;
    }
    return 0;
}
