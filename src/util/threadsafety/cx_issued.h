/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 */
/* Operations issued for another thread whose requests have not completed
 * (LockQ's and offload's proxies, cx_mt_lockq.c; doc/design/lockq.md):
 *  - a doubly linked list, under its owner's lock;
 *  - a lock-free stack on which a completion notice, from any thread,
 *    pushes the node it claimed: the owner takes the whole stack at once,
 *    a cost per completion whatever the list holds;
 *  - a round-robin cursor, for a scan of a few nodes per call that finds
 *    completions no notice reports.
 * Whoever claims a node first (an atomic exchange) completes it, so a
 * notice racing the scan completes nothing twice. */
#ifndef CX_ISSUED_H_INCLUDED
#define CX_ISSUED_H_INCLUDED

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct cx_issued_node {
    struct cx_issued_node *next, *prev; /* the list, under the owner's lock */
    struct cx_issued_node *next_done;   /* the done stack */
    atomic_int claimed;
} cx_issued_node_t;

typedef struct {
    cx_issued_node_t *head;     /* under the owner's lock, as are scan_next and n */
    cx_issued_node_t *scan_next;        /* the scan's next node; NULL: the head */
    int n;
    _Atomic(cx_issued_node_t *) done;   /* claimed by notices, pushed by any thread */
} cx_issued_t;

/* Owner: x joins the list, unclaimed. */
static inline void cx_issued_add(cx_issued_t * l, cx_issued_node_t * x)
{
    atomic_store_explicit(&x->claimed, 0, memory_order_relaxed);
    x->prev = NULL;
    x->next = l->head;
    if (l->head)
        l->head->prev = x;
    l->head = x;
    l->n++;
}

/* Owner: a claimed x leaves the list (the cursor moves past it). */
static inline void cx_issued_remove(cx_issued_t * l, cx_issued_node_t * x)
{
    if (x->prev)
        x->prev->next = x->next;
    else
        l->head = x->next;
    if (x->next)
        x->next->prev = x->prev;
    if (l->scan_next == x)
        l->scan_next = x->next;
    l->n--;
}

/* Any thread: true for the first caller only. */
static inline bool cx_issued_claim(cx_issued_node_t * x)
{
    return !atomic_exchange_explicit(&x->claimed, 1, memory_order_acq_rel);
}

/* Any thread: x, which the caller claimed, goes on the done stack (the
 * owner alone pops, taking the whole stack, so no ABA). */
static inline void cx_issued_notify(cx_issued_t * l, cx_issued_node_t * x)
{
    cx_issued_node_t *top = atomic_load_explicit(&l->done, memory_order_relaxed);
    do
        x->next_done = top;
    while (!atomic_compare_exchange_weak_explicit(&l->done, &top, x, memory_order_release,
                                                  memory_order_relaxed));
}

/* Owner: the done stack, emptied (linked by next_done; NULL if empty). */
static inline cx_issued_node_t *cx_issued_take_done(cx_issued_t * l)
{
    if (!atomic_load_explicit(&l->done, memory_order_relaxed))
        return NULL;
    return atomic_exchange_explicit(&l->done, NULL, memory_order_acquire);
}

/* Owner: the next node the scan checks, wrapping round (NULL if the list
 * is empty); n calls visit n different nodes while the list holds n or
 * more and only removes what the scan found. */
static inline cx_issued_node_t *cx_issued_scan_next(cx_issued_t * l)
{
    cx_issued_node_t *x = l->scan_next ? l->scan_next : l->head;
    if (x)
        l->scan_next = x->next;
    return x;
}

#endif /* CX_ISSUED_H_INCLUDED */
