/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * MPICH-CX thread synchronization library: SWP queue, LockQ's wait-free
 * multi-producer single-consumer FIFO (Amer et al., Fig. 4): swap into the tail,
 * then link. Not linearizable: a producer preempted between swap and link hides
 * later items until it links; LockQ tolerates that. Design: doc/design/lockq.md.
 */
#ifndef CX_SWPQ_H_INCLUDED
#define CX_SWPQ_H_INCLUDED

#include "cx_sync_common.h"
#include <errno.h>
#include <stdlib.h>

typedef struct cx_swpq_node {
    _Atomic(struct cx_swpq_node *) next;
    void *data;
} cx_swpq_node_t;

typedef struct {
    /* producers swap tail; the consumer walks head: separate lines */
    CX_CACHE_ALIGNED _Atomic(cx_swpq_node_t *) tail;
    /* written by the consumer only; atomic so that other threads may read
     * it as a hint (cx_swpq_is_empty) */
    CX_CACHE_ALIGNED _Atomic(cx_swpq_node_t *) head;
} cx_swpq_t;

#ifdef CX_SWPQ_TEST_HOOK
/* tests only: called by enqueue between the swap and the link */
extern void (*cx_swpq_test_hook)(cx_swpq_t * q, void *data);
#endif

/* 0 or ENOMEM */
static inline int cx_swpq_init(cx_swpq_t * q)
{
    cx_swpq_node_t *dummy = malloc(sizeof(*dummy));
    if (dummy == NULL)
        return ENOMEM;
    atomic_init(&dummy->next, NULL);
    dummy->data = NULL;
    atomic_init(&q->tail, dummy);
    atomic_init(&q->head, dummy);
    return 0;
}

/* No producer or consumer may be active. Items still queued are dropped
 * (their data is not touched). */
static inline void cx_swpq_destroy(cx_swpq_t * q)
{
    cx_swpq_node_t *n = atomic_load_explicit(&q->head, memory_order_relaxed);
    while (n != NULL) {
        cx_swpq_node_t *next = atomic_load_explicit(&n->next, memory_order_relaxed);
        free(n);
        n = next;
    }
    atomic_store_explicit(&q->head, NULL, memory_order_relaxed);
    atomic_store_explicit(&q->tail, NULL, memory_order_relaxed);
}

/* Any thread. 0 or ENOMEM. */
static inline int cx_swpq_enqueue(cx_swpq_t * q, void *data)
{
    cx_swpq_node_t *n = malloc(sizeof(*n));
    if (n == NULL)
        return ENOMEM;
    atomic_store_explicit(&n->next, NULL, memory_order_relaxed);
    n->data = data;
    /* acquire: pred->next is written below after pred's own initialisation */
    cx_swpq_node_t *pred = atomic_exchange_explicit(&q->tail, n, memory_order_acq_rel);
#ifdef CX_SWPQ_TEST_HOOK
    if (cx_swpq_test_hook != NULL)
        cx_swpq_test_hook(q, data);
#endif
    /* release: the consumer that sees the link sees n->data */
    atomic_store_explicit(&pred->next, n, memory_order_release);
    return 0;
}

/* Single consumer only. false when nothing is linked behind the dummy. */
static inline bool cx_swpq_dequeue(cx_swpq_t * q, void **data)
{
    cx_swpq_node_t *h = atomic_load_explicit(&q->head, memory_order_relaxed);
    cx_swpq_node_t *next = atomic_load_explicit(&h->next, memory_order_acquire);
    if (next == NULL)
        return false;
    *data = next->data;
    next->data = NULL;  /* next is the dummy now */
    atomic_store_explicit(&q->head, next, memory_order_relaxed);
    /* the producer that linked h is done with it: its link was its last access */
    free(h);
    return true;
}

/* Hint, any thread: true when no enqueue has started (no swap since the last
 * dequeued item). Compares tail and head instead of reading head->next
 * because a non-consumer may not dereference head (the consumer can free it
 * at any time). A producer between swap and link counts as not empty, so a
 * false answer does not guarantee that dequeue succeeds right now. */
static inline bool cx_swpq_is_empty(cx_swpq_t * q)
{
    return atomic_load_explicit(&q->tail, memory_order_acquire) ==
        atomic_load_explicit(&q->head, memory_order_relaxed);
}

#endif /* CX_SWPQ_H_INCLUDED */
