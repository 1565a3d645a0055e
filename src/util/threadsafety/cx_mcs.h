/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * MPICH-CX thread synchronization library: MCS queue lock. Each waiter spins on
 * its own node; nodes come from the per-thread node cache and are remembered in
 * the lock, so a thread can hold several MCS locks (cx_mcs_acquire_node/
 * release_node for callers that own their node). Design: doc/design/vci-locks.md.
 */
#ifndef CX_MCS_H_INCLUDED
#define CX_MCS_H_INCLUDED

#include "cx_sync_common.h"
#include "cx_node_cache.h"

typedef struct cx_mcs_node {
    CX_CACHE_ALIGNED _Atomic(struct cx_mcs_node *) next;
    atomic_int locked;
} cx_mcs_node_t;

_Static_assert(offsetof(cx_mcs_node_t, locked) + sizeof(atomic_int) <= CX_NODE_USABLE,
               "cx_mcs_node_t must leave room for the node cache link");

typedef struct {
    CX_CACHE_ALIGNED _Atomic(cx_mcs_node_t *) tail;
    cx_mcs_node_t *holder;      /* node of the current holder; holder-only */
} cx_mcs_lock_t;

static inline void cx_mcs_init(cx_mcs_lock_t * l)
{
    atomic_init(&l->tail, NULL);
    l->holder = NULL;
}

static inline void cx_mcs_acquire_node(cx_mcs_lock_t * l, cx_mcs_node_t * node)
{
    atomic_store_explicit(&node->next, NULL, memory_order_relaxed);
    atomic_store_explicit(&node->locked, 1, memory_order_relaxed);
    /* release: the initialised node is visible to the predecessor that links
     * it; acquire: pairs with a releaser's CAS of tail back to NULL */
    cx_mcs_node_t *pred = atomic_exchange_explicit(&l->tail, node, memory_order_acq_rel);
    if (pred == NULL)
        return;
    atomic_store_explicit(&pred->next, node, memory_order_release);
    unsigned spins = 0;
    while (atomic_load_explicit(&node->locked, memory_order_acquire))
        cx_spin_pause(&spins);
}

static inline bool cx_mcs_tryacquire_node(cx_mcs_lock_t * l, cx_mcs_node_t * node)
{
    cx_mcs_node_t *expected = NULL;
    atomic_store_explicit(&node->next, NULL, memory_order_relaxed);
    atomic_store_explicit(&node->locked, 0, memory_order_relaxed);
    return atomic_compare_exchange_strong_explicit(&l->tail, &expected, node,
                                                   memory_order_acq_rel, memory_order_relaxed);
}

static inline void cx_mcs_release_node(cx_mcs_lock_t * l, cx_mcs_node_t * node)
{
    cx_mcs_node_t *succ = atomic_load_explicit(&node->next, memory_order_acquire);
    if (succ == NULL) {
        cx_mcs_node_t *expected = node;
        if (atomic_compare_exchange_strong_explicit(&l->tail, &expected, NULL,
                                                    memory_order_release, memory_order_relaxed))
            return;
        /* a successor swapped itself in but has not linked yet */
        unsigned spins = 0;
        while ((succ = atomic_load_explicit(&node->next, memory_order_acquire)) == NULL)
            cx_spin_pause(&spins);
    }
    atomic_store_explicit(&succ->locked, 0, memory_order_release);
}

static inline void cx_mcs_acquire(cx_mcs_lock_t * l)
{
    cx_mcs_node_t *node = cx_node_cache_get();
    cx_mcs_acquire_node(l, node);
    l->holder = node;
}

static inline bool cx_mcs_tryacquire(cx_mcs_lock_t * l)
{
    /* cheap check first: no node traffic when the lock is visibly taken */
    if (atomic_load_explicit(&l->tail, memory_order_relaxed) != NULL)
        return false;
    cx_mcs_node_t *node = cx_node_cache_get();
    if (!cx_mcs_tryacquire_node(l, node)) {
        cx_node_cache_put(node);
        return false;
    }
    l->holder = node;
    return true;
}

static inline void cx_mcs_release(cx_mcs_lock_t * l)
{
    /* read holder before the hand-off: the next holder overwrites it */
    cx_mcs_node_t *node = l->holder;
    cx_mcs_release_node(l, node);
    cx_node_cache_put(node);
}

#endif /* CX_MCS_H_INCLUDED */
