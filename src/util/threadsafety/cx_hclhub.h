/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * MPICH-CX thread synchronization library: HCLHub (Dang et al., §IV-B,
 * "P-HCLHub"), CLHub whose high-priority queue is a NUMA cohort lock: a global
 * TAS lock plus one CLH lock per NUMA node, the global lock passed down within a
 * node without bound. `bias` is still the mutual exclusion.
 * Design: doc/design/reactivation.md.
 */
#ifndef CX_HCLHUB_H_INCLUDED
#define CX_HCLHUB_H_INCLUDED

#include "cx_sync_common.h"
#include "cx_clh.h"
#include "cx_topology.h"

typedef struct {
    CX_CACHE_ALIGNED atomic_int bias;   /* TAS lock; the real mutual exclusion */
    CX_CACHE_ALIGNED atomic_int global; /* cohort: global TAS, no backoff */
    /* cohort holder only */
    CX_CACHE_ALIGNED int holder_node;   /* local lock the cohort holder took */
    /* statistics, written by the cohort holder only (relaxed: readable any time) */
    atomic_ulong local_handoffs;        /* cohort passed within a NUMA node */
    atomic_ulong global_acquires;       /* cohort holder took the global TAS */
    int num_nodes;
    cx_clh_lock_t *local;       /* num_nodes CLH locks, one per NUMA node */
    cx_clh_lock_t fifo_low;
    CX_CACHE_ALIGNED atomic_int filter; /* 1 while a high-priority candidate waits */
} cx_hclhub_lock_t;

/* num_numa_nodes < 1: ask MPIR_CX_topology_num_numa_nodes(). 0 or ENOMEM. */
static inline int cx_hclhub_init(cx_hclhub_lock_t * l, int num_numa_nodes)
{
    int i;

    if (num_numa_nodes < 1)
        num_numa_nodes = MPIR_CX_topology_num_numa_nodes();
    atomic_init(&l->bias, 0);
    atomic_init(&l->global, 0);
    atomic_init(&l->filter, 0);
    atomic_init(&l->local_handoffs, 0);
    atomic_init(&l->global_acquires, 0);
    l->holder_node = -1;
    l->num_nodes = num_numa_nodes;
    l->local = aligned_alloc(CX_CACHELINE_SIZE, sizeof(cx_clh_lock_t) * (size_t) num_numa_nodes);
    if (l->local == NULL)
        return ENOMEM;
    for (i = 0; i < num_numa_nodes; i++) {
        if (cx_clh_init(&l->local[i]) != 0)
            goto fail;
    }
    if (cx_clh_init(&l->fifo_low) != 0)
        goto fail;
    return 0;
  fail:
    while (--i >= 0)
        cx_clh_destroy(&l->local[i]);
    free(l->local);
    l->local = NULL;
    return ENOMEM;
}

static inline void cx_hclhub_destroy(cx_hclhub_lock_t * l)
{
    for (int i = 0; i < l->num_nodes; i++)
        cx_clh_destroy(&l->local[i]);
    free(l->local);
    l->local = NULL;
    cx_clh_destroy(&l->fifo_low);
}

static inline void cx_hclhub__cohort_acquire(cx_hclhub_lock_t * l)
{
    int node = MPIR_CX_numa_node_self() % l->num_nodes;
    if (cx_clh__acquire_state(&l->local[node]) != CX_CLH_PASSED) {
        cx_tas_acquire(&l->global);
        atomic_store_explicit(&l->global_acquires,
                              atomic_load_explicit(&l->global_acquires, memory_order_relaxed) + 1,
                              memory_order_relaxed);
    }
    l->holder_node = node;
}

static inline void cx_hclhub__cohort_release(cx_hclhub_lock_t * l)
{
    cx_clh_lock_t *local = &l->local[l->holder_node];
    if (cx_clh__has_successor(local)) {
        /* a local thread is queued behind us: keep global, pass it down */
        atomic_store_explicit(&l->local_handoffs,
                              atomic_load_explicit(&l->local_handoffs, memory_order_relaxed) + 1,
                              memory_order_relaxed);
        cx_clh__release_state(local, CX_CLH_PASSED);
    } else {
        /* global first (either order is correct): a waiting remote node
         * need not wait for our local release; a local thread arriving after
         * the check above takes global itself */
        cx_tas_release(&l->global);
        cx_clh__release_state(local, CX_CLH_FREE);
    }
}

/* High priority (main path). */
static inline void cx_hclhub_acquire(cx_hclhub_lock_t * l)
{
    if (cx_tas_tryacquire(&l->bias))
        return;
    cx_hclhub__cohort_acquire(l);
    atomic_store_explicit(&l->filter, 1, memory_order_release);
    cx_tas_acquire(&l->bias);
    atomic_store_explicit(&l->filter, 0, memory_order_release);
    cx_hclhub__cohort_release(l);
}

/* Low priority (progress-loop re-entry); unchanged from CLHub. */
static inline void cx_hclhub_acquire_low(cx_hclhub_lock_t * l)
{
    unsigned spins = 0;
    cx_clh_acquire(&l->fifo_low);
    while (atomic_load_explicit(&l->filter, memory_order_acquire) == 1)
        cx_spin_pause(&spins);
    cx_tas_acquire(&l->bias);
    cx_clh_release(&l->fifo_low);
}

static inline bool cx_hclhub_tryacquire(cx_hclhub_lock_t * l)
{
    return cx_tas_tryacquire(&l->bias);
}

static inline void cx_hclhub_release(cx_hclhub_lock_t * l)
{
    cx_tas_release(&l->bias);
}

#endif /* CX_HCLHUB_H_INCLUDED */
