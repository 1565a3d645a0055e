/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * MPICH-CX thread synchronization library: CLHub, the priority lock with
 * unbounded bias (Dang et al., "Advanced Thread Synchronization for
 * Multithreaded MPI Implementations", Fig. 12). Mutual exclusion is `bias`, a
 * test-and-set lock; a high-priority and a low-priority CLH queue and `filter`
 * only arbitrate who competes for it. Design: doc/design/reactivation.md.
 */
#ifndef CX_CLHUB_H_INCLUDED
#define CX_CLHUB_H_INCLUDED

#include "cx_sync_common.h"
#include "cx_clh.h"

typedef struct {
    CX_CACHE_ALIGNED atomic_int bias;   /* TAS lock; the real mutual exclusion */
    cx_clh_lock_t fifo_high;    /* (cache aligned by its type) */
    cx_clh_lock_t fifo_low;
    CX_CACHE_ALIGNED atomic_int filter; /* 1 while a high-priority candidate waits */
} cx_clhub_lock_t;

/* 0 or ENOMEM */
static inline int cx_clhub_init(cx_clhub_lock_t * l)
{
    atomic_init(&l->bias, 0);
    atomic_init(&l->filter, 0);
    if (cx_clh_init(&l->fifo_high) != 0)
        return ENOMEM;
    if (cx_clh_init(&l->fifo_low) != 0) {
        cx_clh_destroy(&l->fifo_high);
        return ENOMEM;
    }
    return 0;
}

static inline void cx_clhub_destroy(cx_clhub_lock_t * l)
{
    cx_clh_destroy(&l->fifo_high);
    cx_clh_destroy(&l->fifo_low);
}

/* High priority (main path). */
static inline void cx_clhub_acquire(cx_clhub_lock_t * l)
{
    if (cx_tas_tryacquire(&l->bias))
        return;
    cx_clh_acquire(&l->fifo_high);
    /* we are the candidate: hold low-priority heads back */
    atomic_store_explicit(&l->filter, 1, memory_order_release);
    cx_tas_acquire(&l->bias);
    atomic_store_explicit(&l->filter, 0, memory_order_release);
    /* promote the next queued high-priority thread to candidate */
    cx_clh_release(&l->fifo_high);
}

/* Low priority (progress-loop re-entry). */
static inline void cx_clhub_acquire_low(cx_clhub_lock_t * l)
{
    unsigned spins = 0;
    cx_clh_acquire(&l->fifo_low);
    while (atomic_load_explicit(&l->filter, memory_order_acquire) == 1)
        cx_spin_pause(&spins);
    cx_tas_acquire(&l->bias);
    cx_clh_release(&l->fifo_low);
}

/* bias only: never queues */
static inline bool cx_clhub_tryacquire(cx_clhub_lock_t * l)
{
    return cx_tas_tryacquire(&l->bias);
}

static inline void cx_clhub_release(cx_clhub_lock_t * l)
{
    cx_tas_release(&l->bias);
}

#endif /* CX_CLHUB_H_INCLUDED */
