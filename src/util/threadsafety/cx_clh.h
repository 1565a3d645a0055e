/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * MPICH-CX thread synchronization library: CLH queue lock. A waiter swaps its
 * node into the tail and spins on its predecessor's; nodes come from the
 * per-thread node cache. CX_CLH_PASSED hands "global lock already held" to the
 * successor (HCLHub's cohorts). Design: doc/design/vci-locks.md.
 */
#ifndef CX_CLH_H_INCLUDED
#define CX_CLH_H_INCLUDED

#include "cx_sync_common.h"
#include "cx_node_cache.h"
#include <errno.h>

enum {
    CX_CLH_FREE = 0,            /* released */
    CX_CLH_WAIT = 1,    /* owner holds the lock or waits for it */
    CX_CLH_PASSED = 2   /* released with a token for the successor */
};

typedef struct cx_clh_node {
    CX_CACHE_ALIGNED atomic_int state;
} cx_clh_node_t;

_Static_assert(sizeof(atomic_int) <= CX_NODE_USABLE,
               "cx_clh_node_t must leave room for the node cache link");

typedef struct {
    CX_CACHE_ALIGNED _Atomic(cx_clh_node_t *) tail;
    /* holder-only fields, on their own line: arrivals hammer tail */
    CX_CACHE_ALIGNED cx_clh_node_t *holder;     /* the holder's node */
    cx_clh_node_t *pred;        /* its predecessor's node, recycled at release */
} cx_clh_lock_t;

/* 0 or ENOMEM (the lock needs an initial released node) */
static inline int cx_clh_init(cx_clh_lock_t * l)
{
    cx_clh_node_t *dummy = aligned_alloc(CX_CACHELINE_SIZE, CX_NODE_SIZE);
    if (dummy == NULL)
        return ENOMEM;
    atomic_init(&dummy->state, CX_CLH_FREE);
    atomic_init(&l->tail, dummy);
    l->holder = NULL;
    l->pred = NULL;
    return 0;
}

/* The lock must be free and unused. The released tail node belongs to the
 * lock; every other node sits in some thread's cache. */
static inline void cx_clh_destroy(cx_clh_lock_t * l)
{
    cx_node_cache_to_pool(atomic_load_explicit(&l->tail, memory_order_relaxed));
    atomic_store_explicit(&l->tail, NULL, memory_order_relaxed);
}

/* Enqueue and wait; returns the state the predecessor released with
 * (CX_CLH_FREE or CX_CLH_PASSED). */
static inline int cx_clh__acquire_state(cx_clh_lock_t * l)
{
    cx_clh_node_t *node = cx_node_cache_get();
    atomic_store_explicit(&node->state, CX_CLH_WAIT, memory_order_relaxed);
    /* release: a successor that reads our node sees WAIT, not stale state */
    cx_clh_node_t *pred = atomic_exchange_explicit(&l->tail, node, memory_order_acq_rel);
    int st;
    unsigned spins = 0;
    while ((st = atomic_load_explicit(&pred->state, memory_order_acquire)) == CX_CLH_WAIT)
        cx_spin_pause(&spins);
    l->holder = node;
    l->pred = pred;
    return st;
}

/* Holder only: has another thread queued behind us? (cohort detection) */
static inline bool cx_clh__has_successor(cx_clh_lock_t * l)
{
    return atomic_load_explicit(&l->tail, memory_order_relaxed) != l->holder;
}

static inline void cx_clh__release_state(cx_clh_lock_t * l, int state)
{
    /* read both before the hand-off: the next holder overwrites them */
    cx_clh_node_t *node = l->holder, *pred = l->pred;
    atomic_store_explicit(&node->state, state, memory_order_release);
    cx_node_cache_put(pred);
}

static inline void cx_clh_acquire(cx_clh_lock_t * l)
{
    (void) cx_clh__acquire_state(l);
}

/* Succeeds only if the lock is free: the tail node is released, and we
 * replace it with ours by CAS. For plain CLH locks (not the per-node locks
 * of a cohort, whose released state may carry a token). */
static inline bool cx_clh_tryacquire(cx_clh_lock_t * l)
{
    cx_clh_node_t *tail = atomic_load_explicit(&l->tail, memory_order_acquire);
    /* tail may be recycled under us; the node cache never unmaps nodes, so
     * this read is safe, and the CAS below catches a changed tail */
    if (atomic_load_explicit(&tail->state, memory_order_relaxed) == CX_CLH_WAIT)
        return false;
    cx_clh_node_t *node = cx_node_cache_get();
    atomic_store_explicit(&node->state, CX_CLH_WAIT, memory_order_relaxed);
    if (!atomic_compare_exchange_strong_explicit(&l->tail, &tail, node,
                                                 memory_order_acq_rel, memory_order_relaxed)) {
        cx_node_cache_put(node);
        return false;
    }
    /* ABA: between our read of its state and the CAS, the tail node may
     * have been released, recycled and enqueued again by a new waiter. We
     * are then queued behind that waiter and must wait like acquire does.
     * Without ABA this loop exits at once. */
    unsigned spins = 0;
    while (atomic_load_explicit(&tail->state, memory_order_acquire) == CX_CLH_WAIT)
        cx_spin_pause(&spins);
    l->holder = node;
    l->pred = tail;
    return true;
}

static inline void cx_clh_release(cx_clh_lock_t * l)
{
    cx_clh__release_state(l, CX_CLH_FREE);
}

#endif /* CX_CLH_H_INCLUDED */
