/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * SWP queue: single-thread FIFO and emptiness; several producers with one
 * consumer (per-producer FIFO, no loss, no duplicates); a producer stopped
 * between swap and link (test hook) hides its item and everything queued
 * after it until it links, then the consumer gets all of it in order.
 *
 *     test_swpq basic|mpsc|hook
 */
#include "test_common.h"
#include "cx_swpq.h"

void (*cx_swpq_test_hook)(cx_swpq_t * q, void *data);

#define ITEM(p, s) ((void *) (((uintptr_t) (p) << 32) | (uintptr_t) ((s) + 1)))
#define ITEM_PRODUCER(d) ((int) ((uintptr_t) (d) >> 32))
#define ITEM_SEQ(d) ((long) ((uintptr_t) (d) & 0xffffffffu) - 1)

static void basic_test(void)
{
    cx_swpq_t q;
    void *d;

    CHECK(cx_swpq_init(&q) == 0, "init");
    CHECK(cx_swpq_is_empty(&q), "new queue not empty");
    CHECK(!cx_swpq_dequeue(&q, &d), "dequeue from an empty queue");
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 100; i++)
            CHECK(cx_swpq_enqueue(&q, ITEM(round, i)) == 0, "enqueue");
        CHECK(!cx_swpq_is_empty(&q), "queue with items reports empty");
        for (int i = 0; i < 100; i++) {
            CHECK(cx_swpq_dequeue(&q, &d), "item %d missing", i);
            CHECK(d == ITEM(round, i), "got seq %ld, expected %d", ITEM_SEQ(d), i);
        }
        CHECK(cx_swpq_is_empty(&q) && !cx_swpq_dequeue(&q, &d), "queue not empty after draining");
    }
    /* NULL is a valid item */
    CHECK(cx_swpq_enqueue(&q, NULL) == 0 && cx_swpq_dequeue(&q, &d) && d == NULL, "NULL item");
    /* destroy with items left */
    for (int i = 0; i < 10; i++)
        cx_swpq_enqueue(&q, ITEM(0, i));
    cx_swpq_destroy(&q);
    printf("swpq basic: ok\n");
}

/* ---- producers and one consumer ---- */

typedef struct {
    cx_swpq_t q;
    int per_producer;
    pthread_barrier_t start;
} mpsc_t;

static mpsc_t M;

static void *producer(void *p)
{
    t_thread_t *t = p;
    pthread_barrier_wait(&M.start);
    for (int i = 0; i < M.per_producer; i++) {
        CHECK(cx_swpq_enqueue(&M.q, ITEM(t->id, i)) == 0, "enqueue");
        if ((i & 255) == 0)
            sched_yield();      /* interleave producers on few cores */
    }
    return NULL;
}

static void mpsc_test(int nproducers, int per_producer)
{
    t_thread_t th[32];
    long next[32] = { 0 };
    long total = (long) nproducers * per_producer, got = 0;
    void *d;
    double deadline;

    CHECK(cx_swpq_init(&M.q) == 0, "init");
    M.per_producer = per_producer;
    pthread_barrier_init(&M.start, NULL, (unsigned) nproducers + 1);
    for (int i = 0; i < nproducers; i++)
        t_start(&th[i], i, producer, NULL);
    pthread_barrier_wait(&M.start);
    deadline = t_now() + T_WAIT_LIMIT_S;
    while (got < total) {
        if (!cx_swpq_dequeue(&M.q, &d)) {
            CHECK(t_now() < deadline, "consumer stalled at %ld of %ld items", got, total);
            sched_yield();
            continue;
        }
        int p = ITEM_PRODUCER(d);
        CHECK(p >= 0 && p < nproducers, "bad producer %d", p);
        CHECK(ITEM_SEQ(d) == next[p], "producer %d: got seq %ld, expected %ld (lost, duplicated "
              "or reordered)", p, ITEM_SEQ(d), next[p]);
        next[p]++;
        got++;
    }
    for (int i = 0; i < nproducers; i++)
        t_join(&th[i]);
    CHECK(!cx_swpq_dequeue(&M.q, &d) && cx_swpq_is_empty(&M.q), "extra items after the last");
    pthread_barrier_destroy(&M.start);
    cx_swpq_destroy(&M.q);
    printf("swpq mpsc: %d producers x %d: per-producer FIFO, no loss: ok\n", nproducers,
           per_producer);
}

/* ---- producer stopped between swap and link ---- */

static void *blocked_item;
static atomic_int in_hook, release_hook;

static void hook(cx_swpq_t * q, void *data)
{
    (void) q;
    if (data != blocked_item)
        return;
    atomic_store(&in_hook, 1);
    WAIT_UNTIL(atomic_load(&release_hook));
}

static cx_swpq_t HQ;

static void *hook_producer(void *p)
{
    t_thread_t *t = p;
    CHECK(cx_swpq_enqueue(&HQ, t->arg) == 0, "enqueue");
    return NULL;
}

static void hook_test(void)
{
    t_thread_t a, b;
    void *d;

    CHECK(cx_swpq_init(&HQ) == 0, "init");
    cx_swpq_test_hook = hook;
    CHECK(cx_swpq_enqueue(&HQ, ITEM(0, 0)) == 0, "enqueue");

    /* A swaps in item (1,0) and stops before linking it */
    blocked_item = ITEM(1, 0);
    t_start(&a, 1, hook_producer, blocked_item);
    WAIT_UNTIL(atomic_load(&in_hook));
    /* B enqueues completely behind A's unlinked node */
    t_start(&b, 2, hook_producer, ITEM(2, 0));
    t_join(&b);

    /* the item before A is visible; A's and B's are not */
    CHECK(cx_swpq_dequeue(&HQ, &d) && d == ITEM(0, 0), "first item");
    for (int i = 0; i < 1000; i++) {
        CHECK(!cx_swpq_dequeue(&HQ, &d), "dequeued past an unlinked node");
        /* but the hint says work is pending */
        CHECK(!cx_swpq_is_empty(&HQ), "is_empty ignores a swapped, unlinked item");
    }

    atomic_store(&release_hook, 1);
    t_join(&a);
    CHECK(cx_swpq_dequeue(&HQ, &d) && d == ITEM(1, 0), "A's item after the link");
    CHECK(cx_swpq_dequeue(&HQ, &d) && d == ITEM(2, 0), "B's item after A's");
    CHECK(!cx_swpq_dequeue(&HQ, &d) && cx_swpq_is_empty(&HQ), "queue not empty at the end");
    cx_swpq_test_hook = NULL;
    cx_swpq_destroy(&HQ);
    printf("swpq hook: unlinked producer blocks the consumer until it links, order kept: ok\n");
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s basic|mpsc|hook\n", argv[0]);
        return 2;
    }
    if (!strcmp(argv[1], "basic")) {
        basic_test();
    } else if (!strcmp(argv[1], "mpsc")) {
        mpsc_test(2, 200000 / T_SCALE);
        mpsc_test(4, 100000 / T_SCALE);
        mpsc_test(16, 20000 / T_SCALE);
    } else if (!strcmp(argv[1], "hook")) {
        hook_test();
    } else {
        fprintf(stderr, "unknown test %s\n", argv[1]);
        return 2;
    }
    return 0;
}
