/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * MPICH-CX thread synchronization library: the offload model's command
 * queue (Endo, MECOM, thesis §4.3, Listings 4.3-4.4). A bounded
 * multi-producer single-consumer ring whose tail counter carries, in bit 0,
 * "an executor is alive". A requester reserves a slot with one CAS that
 * also sets the bit, and learns from the old value whether it must start an
 * executor; an executor that finds the queue empty retires by clearing the
 * bit with a CAS on the same word, so a requester racing it either sees the
 * bit cleared (and starts one) or makes the CAS fail (and the executor finds
 * its command). No command is ever left without an executor.
 *
 * Differences from the listings: the slot's item pointer is its visibility
 * flag (non-NULL once published; the listing's separate `vis` flag and the
 * missing `&` of `cmds[...]` go away); reservation and publication are two
 * calls, so the caller builds its command only when it has a slot, and tests
 * can stop a requester between them.
 */
#ifndef CX_OFFLOAD_Q_H_INCLUDED
#define CX_OFFLOAD_Q_H_INCLUDED

#include "cx_sync_common.h"
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#define CX_OFFLOAD_Q_ALIVE ((uint64_t) 1)

#ifdef CX_OFFLOAD_Q_TEST_HOOK
/* tests only: called by retire between its read of the tail and its CAS */
extern void (*cx_offload_q_test_hook)(void);
#define CX_OFFLOAD_Q_HOOK() do { if (cx_offload_q_test_hook) cx_offload_q_test_hook(); } while (0)
#else
#define CX_OFFLOAD_Q_HOOK() do { } while (0)
#endif

/* A slot: NULL while free or reserved, the command once published. */
typedef _Atomic(void *) cx_offload_q_slot_t;

typedef struct {
    /* (commands ever reserved << 1) | ALIVE: requesters CAS it */
    CX_CACHE_ALIGNED _Atomic uint64_t tail;
    /* commands taken; written by the executor only (requesters read it for
     * the full check) */
    CX_CACHE_ALIGNED _Atomic uint64_t head;
    uint64_t mask;              /* slots - 1 */
    cx_offload_q_slot_t *slots;
} cx_offload_q_t;

/* What a reservation tells the requester. */
enum {
    CX_OFFLOAD_Q_FULL = -1,     /* no slot: let the executor run, try again */
    CX_OFFLOAD_Q_QUEUED = 0,    /* an executor is alive and will take it */
    CX_OFFLOAD_Q_START = 1      /* nobody was: start an executor (after publishing) */
};

/* slots: a power of two. alive: an executor that never retires (static
 * mode) exists from the start. 0 or ENOMEM/EINVAL. */
static inline int cx_offload_q_init(cx_offload_q_t * q, uint64_t slots, bool alive)
{
    if (slots == 0 || (slots & (slots - 1)))
        return EINVAL;
    q->slots = calloc(slots, sizeof(*q->slots));
    if (q->slots == NULL)
        return ENOMEM;
    for (uint64_t i = 0; i < slots; i++)
        atomic_init(&q->slots[i], NULL);
    q->mask = slots - 1;
    atomic_init(&q->tail, alive ? CX_OFFLOAD_Q_ALIVE : 0);
    atomic_init(&q->head, 0);
    return 0;
}

/* No requester or executor may be active. */
static inline void cx_offload_q_destroy(cx_offload_q_t * q)
{
    free(q->slots);
    q->slots = NULL;
}

/* A requester: reserve the next slot (*ticket) and mark an executor alive.
 * FULL, QUEUED or START; after QUEUED or START the caller must publish. */
static inline int cx_offload_q_reserve(cx_offload_q_t * q, uint64_t * ticket)
{
    uint64_t t = atomic_load_explicit(&q->tail, memory_order_relaxed);
    do {
        if ((t >> 1) - atomic_load_explicit(&q->head, memory_order_acquire) > q->mask)
            return CX_OFFLOAD_Q_FULL;
    } while (!atomic_compare_exchange_weak_explicit(&q->tail, &t, (t + 2) | CX_OFFLOAD_Q_ALIVE,
                                                    memory_order_acq_rel, memory_order_relaxed));
    *ticket = t >> 1;
    return (t & CX_OFFLOAD_Q_ALIVE) ? CX_OFFLOAD_Q_QUEUED : CX_OFFLOAD_Q_START;
}

/* A requester: make its command (non-NULL) visible in its reserved slot. */
static inline void cx_offload_q_publish(cx_offload_q_t * q, uint64_t ticket, void *item)
{
    atomic_store_explicit(&q->slots[ticket & q->mask], item, memory_order_release);
}

/* Whether nothing is reserved: exact for the executor, a hint for others. */
static inline bool cx_offload_q_is_empty(cx_offload_q_t * q)
{
    return (atomic_load_explicit(&q->tail, memory_order_acquire) >> 1) ==
        atomic_load_explicit(&q->head, memory_order_relaxed);
}

/* The executor: the oldest command, or NULL (*pending: one is reserved but
 * not yet published; commands after it wait, in order). */
static inline void *cx_offload_q_take(cx_offload_q_t * q, bool *pending)
{
    uint64_t h = atomic_load_explicit(&q->head, memory_order_relaxed);
    *pending = false;
    if ((atomic_load_explicit(&q->tail, memory_order_acquire) >> 1) == h)
        return NULL;
    cx_offload_q_slot_t *slot = &q->slots[h & q->mask];
    void *item = atomic_load_explicit(slot, memory_order_acquire);
    if (item == NULL) {
        *pending = true;
        return NULL;
    }
    atomic_store_explicit(slot, NULL, memory_order_relaxed);
    /* release: the slot's reset before a requester can reserve it again */
    atomic_store_explicit(&q->head, h + 1, memory_order_release);
    return item;
}

/* The executor: retire if nothing is reserved (clears the alive bit; the
 * next requester starts an executor). False: a command came in meanwhile,
 * take it. */
static inline bool cx_offload_q_retire(cx_offload_q_t * q)
{
    uint64_t h = atomic_load_explicit(&q->head, memory_order_relaxed);
    uint64_t t = atomic_load_explicit(&q->tail, memory_order_acquire);
    CX_OFFLOAD_Q_HOOK();
    while ((t >> 1) == h && (t & CX_OFFLOAD_Q_ALIVE))
        if (atomic_compare_exchange_weak_explicit(&q->tail, &t, t & ~CX_OFFLOAD_Q_ALIVE,
                                                  memory_order_acq_rel, memory_order_acquire))
            return true;
    return false;
}

/* Set the alive bit without a command (a thread that needs the executor's
 * progress, or an executor taking back its retirement): true if this call
 * set it, and so must see to it that an executor runs. */
static inline bool cx_offload_q_revive(cx_offload_q_t * q)
{
    uint64_t t = atomic_load_explicit(&q->tail, memory_order_relaxed);
    while (!(t & CX_OFFLOAD_Q_ALIVE))
        if (atomic_compare_exchange_weak_explicit(&q->tail, &t, t | CX_OFFLOAD_Q_ALIVE,
                                                  memory_order_acq_rel, memory_order_relaxed))
            return true;
    return false;
}

/* Whether an executor is alive (bit 0 of the tail). */
static inline bool cx_offload_q_alive(cx_offload_q_t * q)
{
    return atomic_load_explicit(&q->tail, memory_order_acquire) & CX_OFFLOAD_Q_ALIVE;
}

#endif /* CX_OFFLOAD_Q_H_INCLUDED */
