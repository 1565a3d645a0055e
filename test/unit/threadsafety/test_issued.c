/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * Issued operations awaiting completion (cx_issued.h: a list under its
 * owner's lock, a done stack any thread pushes on, a round-robin scan):
 *   scan   the cursor: n calls visit n different nodes, across removals of
 *          the node it stands on, of others, and additions at the head;
 *          an empty list gives NULL
 *   race   an owner adds operations and completes them as a poll's end
 *          does (the done stack, then a scan of 2); completer threads
 *          complete operations at random, half of them reporting (claim
 *          and push) and half leaving them to the scan. Every operation is
 *          completed exactly once, only after it completed, both ways
 *          occur, and the list ends empty
 *
 *     test_issued scan|race
 */
#include "test_common.h"
#include "cx_issued.h"

#define NODE_INDEX(nodes, x) ((int) ((x) - (nodes)))

static void scan_test(void)
{
    cx_issued_t l = { 0 };
    cx_issued_node_t nodes[10];
    CHECK(cx_issued_scan_next(&l) == NULL, "scan of an empty list");
    for (int i = 0; i < 10; i++)
        cx_issued_add(&l, &nodes[i]);
    CHECK(l.n == 10, "n %d after 10 additions", l.n);

    int seen[10] = { 0 };
    for (int i = 0; i < 10; i++)
        seen[NODE_INDEX(nodes, cx_issued_scan_next(&l))]++;
    for (int i = 0; i < 10; i++)
        CHECK(seen[i] == 1, "a pass of 10 visited node %d %d times", i, seen[i]);

    /* remove the node the cursor stands on, and two others */
    cx_issued_node_t *at = cx_issued_scan_next(&l);     /* consumed: the cursor is past it */
    cx_issued_node_t *cursor = l.scan_next;
    CHECK(cursor != NULL, "cursor at the end after 11 of 10");
    CHECK(cx_issued_claim(cursor) && !cx_issued_claim(cursor), "a node claimed twice");
    cx_issued_remove(&l, cursor);
    cx_issued_remove(&l, &nodes[0]);
    if (at != &nodes[5])
        cx_issued_remove(&l, &nodes[5]);
    else
        cx_issued_remove(&l, &nodes[6]);
    CHECK(l.n == 7, "n %d after 3 removals", l.n);
    cx_issued_node_t extra;
    cx_issued_add(&l, &extra);
    memset(seen, 0, sizeof(seen));
    int extra_seen = 0;
    for (int i = 0; i < l.n; i++) {
        cx_issued_node_t *x = cx_issued_scan_next(&l);
        CHECK(x != cursor && x != &nodes[0], "a removed node visited");
        if (x == &extra)
            extra_seen++;
        else
            seen[NODE_INDEX(nodes, x)]++;
    }
    for (int i = 0; i < 10; i++)
        CHECK(seen[i] <= 1, "a pass of %d visited node %d %d times", l.n, i, seen[i]);
    CHECK(extra_seen == 1, "the node added at the head visited %d times", extra_seen);

    /* empty it through the cursor, then reuse */
    while (l.n) {
        cx_issued_node_t *x = cx_issued_scan_next(&l);
        if (!x)
            break;
        cx_issued_claim(x);
        cx_issued_remove(&l, x);
    }
    CHECK(l.head == NULL && cx_issued_scan_next(&l) == NULL, "list not empty");
    cx_issued_add(&l, &nodes[3]);
    CHECK(cx_issued_claim(&nodes[3]), "a node added again starts unclaimed");
    CHECK(cx_issued_take_done(&l) == NULL, "done stack not empty");
    cx_issued_notify(&l, &nodes[3]);
    CHECK(cx_issued_take_done(&l) == &nodes[3] && cx_issued_take_done(&l) == NULL,
          "done stack: one push, one take");
    printf("issued scan: ok\n");
}

/* ---- completers racing the owner's scan ---- */

#define SLOTS 64
#define COMPLETERS 3

typedef struct {
    cx_issued_node_t node;
    atomic_int state;           /* 0 free, 1 issued (the owner's) */
    atomic_int complete;        /* set once by a completer */
    atomic_int touching;        /* completers looking at it: not reused meanwhile */
} op_t;

static op_t ops[SLOTS];
static cx_issued_t list;
static atomic_bool stop;

#define OP_OF(x) ((op_t *) ((char *) (x) - offsetof(op_t, node)))

static void *completer_main(void *arg)
{
    t_thread_t *t = arg;
    uint32_t seed = 0x9e3779b9u * (uint32_t) (t->id + 1);
    while (!atomic_load(&stop)) {
        op_t *op = &ops[t_rand(&seed) % SLOTS];
        atomic_fetch_add(&op->touching, 1);
        if (atomic_load(&op->state) == 1 && !atomic_exchange(&op->complete, 1) &&
            (t_rand(&seed) & 1) && cx_issued_claim(&op->node))
            cx_issued_notify(&list, &op->node);
        atomic_fetch_sub(&op->touching, 1);
    }
    return NULL;
}

static long by_notice, by_scan;

/* The owner's completion of a claimed operation. */
static void resolve(op_t * op)
{
    CHECK(atomic_load(&op->state) == 1, "an operation completed twice");
    CHECK(atomic_load(&op->complete) == 1, "an operation completed before it completed");
    cx_issued_remove(&list, &op->node);
    atomic_store(&op->state, 0);
}

/* a poll's end: the done stack, then 2 scanned */
static void owner_poll(void)
{
    cx_issued_node_t *x = cx_issued_take_done(&list);
    while (x) {
        cx_issued_node_t *next = x->next_done;
        resolve(OP_OF(x));
        by_notice++;
        x = next;
    }
    int n = list.n < 2 ? list.n : 2;
    for (int i = 0; i < n; i++) {
        op_t *op = OP_OF(cx_issued_scan_next(&list));
        if (atomic_load(&op->complete) && cx_issued_claim(&op->node)) {
            resolve(op);
            by_scan++;
        }
    }
}

static void race_test(long total)
{
    t_thread_t th[COMPLETERS];
    for (int i = 0; i < COMPLETERS; i++)
        t_start(&th[i], i, completer_main, NULL);
    long issued = 0;
    double t0 = t_now();
    while (issued < total || list.n) {
        for (int i = 0; i < SLOTS && issued < total; i++) {
            op_t *op = &ops[i];
            if (atomic_load(&op->state) || atomic_load(&op->touching))
                continue;
            atomic_store(&op->complete, 0);
            cx_issued_add(&list, &op->node);
            atomic_store(&op->state, 1);
            issued++;
        }
        owner_poll();
        CHECK(t_now() - t0 < T_WAIT_LIMIT_S, "stuck: %ld issued, %d outstanding", issued, list.n);
    }
    atomic_store(&stop, true);
    for (int i = 0; i < COMPLETERS; i++)
        t_join(&th[i]);
    CHECK(by_notice + by_scan == total, "%ld completed of %ld", by_notice + by_scan, total);
    CHECK(by_notice > 0 && by_scan > 0, "completed by notice %ld, by scan %ld", by_notice, by_scan);
    CHECK(list.head == NULL && cx_issued_take_done(&list) == NULL, "list or stack not empty");
    printf("issued race: ok (%ld by notice, %ld by scan)\n", by_notice, by_scan);
}

int main(int argc, char **argv)
{
    const char *t = argc > 1 ? argv[1] : "";
    if (!strcmp(t, "scan"))
        scan_test();
    else if (!strcmp(t, "race"))
        race_test(200000 / T_SCALE);
    else {
        fprintf(stderr, "usage: %s scan|race\n", argv[0]);
        return 2;
    }
    return 0;
}
