/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * MPICH-CX thread synchronization library: ticket lock. FIFO: fetch-and-add a
 * ticket, wait until it is served, backing off in proportion to the distance
 * from the head. Design: doc/design/vci-locks.md.
 */
#ifndef CX_TICKET_H_INCLUDED
#define CX_TICKET_H_INCLUDED

#include "cx_sync_common.h"

/* relax iterations per waiter ahead of us, between two polls of `serving` */
#ifndef CX_TICKET_BACKOFF_UNIT
#define CX_TICKET_BACKOFF_UNIT 32
#endif

typedef struct {
    /* separate lines: arrivals (next) must not invalidate the line that every
     * waiter polls (serving) */
    CX_CACHE_ALIGNED atomic_uint next;
    CX_CACHE_ALIGNED atomic_uint serving;
} cx_ticket_lock_t;

static inline void cx_ticket_init(cx_ticket_lock_t * l)
{
    atomic_init(&l->next, 0);
    atomic_init(&l->serving, 0);
}

static inline void cx_ticket_acquire(cx_ticket_lock_t * l)
{
    unsigned my = atomic_fetch_add_explicit(&l->next, 1, memory_order_relaxed);
    unsigned spins = 0;
    for (;;) {
        unsigned cur = atomic_load_explicit(&l->serving, memory_order_acquire);
        if (cur == my)
            return;
        /* unsigned difference stays right across wrap-around */
        unsigned ahead = my - cur;
        cx_spin_pause_n(&spins, 1 + (ahead - 1) * CX_TICKET_BACKOFF_UNIT);
    }
}

static inline bool cx_ticket_tryacquire(cx_ticket_lock_t * l)
{
    /* acquire: pairs with the previous holder's release of serving */
    unsigned cur = atomic_load_explicit(&l->serving, memory_order_acquire);
    unsigned expected = cur;
    /* free exactly when no ticket beyond the one being served was taken */
    return atomic_compare_exchange_strong_explicit(&l->next, &expected, cur + 1,
                                                   memory_order_relaxed, memory_order_relaxed);
}

static inline void cx_ticket_release(cx_ticket_lock_t * l)
{
    /* only the holder writes serving */
    unsigned cur = atomic_load_explicit(&l->serving, memory_order_relaxed);
    atomic_store_explicit(&l->serving, cur + 1, memory_order_release);
}

#endif /* CX_TICKET_H_INCLUDED */
