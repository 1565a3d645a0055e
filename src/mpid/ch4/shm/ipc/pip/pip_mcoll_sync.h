/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * MPICH-CX PiP-MColl: how the ranks of a communicator that share one
 * address space meet (doc/design/pip-mcoll.md). Plain C, no MPICH types:
 * test/unit/pipsteal/test_mcoll_sync.c runs it with threads as ranks.
 *
 * Every rank owns a slot; a meeting ("post") stores the addresses the rank
 * offers to the others, then its step, and waits until every peer's step
 * has reached the same count. Every meeting is a full barrier, so what a
 * rank posted at step s stays valid until step s+1 is complete; posts
 * alternate between two address sets by the step's parity, so writing the
 * next set never overwrites one a slower peer is still reading.
 *
 * A one-way step ("publish") lets one rank give a few bytes (its slot's
 * stage of that parity) and go on at once; the others take them ("take")
 * and count the step too. As a rank may then run ahead by one step, every
 * write of a parity's set first waits until every peer has finished the
 * step before (which read the same set two steps ago).
 */
#ifndef PIP_MCOLL_SYNC_H_INCLUDED
#define PIP_MCOLL_SYNC_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include "cx_sync_common.h"     /* cx_cpu_relax */

/* The includer says how a rank waits: MPIDI_PIP_MCOLL_IDLE() is called
 * every MPIDI_PIP_MCOLL_SPINS polls that found a peer behind. */
#ifndef MPIDI_PIP_MCOLL_SPINS
#define MPIDI_PIP_MCOLL_SPINS 128
#endif

#define MPIDI_PIP_MCOLL_ADDRS 2

/* Bytes a one-way step carries (per parity). */
#define MPIDI_PIP_MCOLL_STAGE 2048

/* One cache line, written by its owner only. A slot outlives the
 * communicator that used it (pip_mcoll_comm.c's pool): its step never goes
 * back, so a peer still polling it after the last meeting is never fooled. */
typedef struct MPIDI_PIP_mcoll_slot {
    uint64_t step;
    const void *addr[2][MPIDI_PIP_MCOLL_ADDRS];
    uint64_t info[2];
    char stage[2][MPIDI_PIP_MCOLL_STAGE] __attribute__((aligned(64)));
} __attribute__((aligned(64))) MPIDI_PIP_mcoll_slot_t;

typedef struct {
    MPIDI_PIP_mcoll_slot_t *slot;
    uint64_t base;              /* the slot's step when this communicator took it */
} MPIDI_PIP_mcoll_peer_t;

typedef struct {
    int size, rank;
    uint64_t step;              /* meetings so far on this communicator */
    MPIDI_PIP_mcoll_peer_t *peer;       /* by rank; peer[rank] is this rank's */
} MPIDI_PIP_mcoll_sync_t;

/* Wait until peer j has counted n steps. */
static inline void MPIDI_PIP_mcoll_wait_peer(const MPIDI_PIP_mcoll_sync_t * s, int j, uint64_t n)
{
    const MPIDI_PIP_mcoll_peer_t *p = &s->peer[j];
    unsigned spins = 0;
    while (__atomic_load_n(&p->slot->step, __ATOMIC_ACQUIRE) < p->base + n) {
        if (++spins < MPIDI_PIP_MCOLL_SPINS) {
            cx_cpu_relax();
        } else {
            spins = 0;
            MPIDI_PIP_MCOLL_IDLE();
        }
    }
}

/* Wait until every peer has counted n steps. */
static inline void MPIDI_PIP_mcoll_wait_all(const MPIDI_PIP_mcoll_sync_t * s, uint64_t n)
{
    /* start with the next rank, so that no rank is everyone's first */
    for (int k = 1; k < s->size; k++)
        MPIDI_PIP_mcoll_wait_peer(s, (s->rank + k) % s->size, n);
}

/* Offer a0, a1 and info to the others and wait for all of them. */
static inline void MPIDI_PIP_mcoll_post(MPIDI_PIP_mcoll_sync_t * s, const void *a0,
                                        const void *a1, uint64_t info)
{
    uint64_t n = ++s->step;
    MPIDI_PIP_mcoll_peer_t *me = &s->peer[s->rank];
    /* (after a one-way step a peer may still read this parity's set) */
    MPIDI_PIP_mcoll_wait_all(s, n - 1);
    me->slot->addr[n & 1][0] = a0;
    me->slot->addr[n & 1][1] = a1;
    me->slot->info[n & 1] = info;
    __atomic_store_n(&me->slot->step, me->base + n, __ATOMIC_RELEASE);
    MPIDI_PIP_mcoll_wait_all(s, n);
}

/* One-way step, giving side: the stage of the new step's parity (at most
 * MPIDI_PIP_MCOLL_STAGE bytes, filled by fill(stage, arg), which returns
 * the info word) goes to the others; this rank goes on without waiting
 * for them. */
static inline void MPIDI_PIP_mcoll_publish(MPIDI_PIP_mcoll_sync_t * s,
                                           uint64_t(*fill) (char *stage, void *arg), void *arg)
{
    uint64_t n = ++s->step;
    MPIDI_PIP_mcoll_peer_t *me = &s->peer[s->rank];
    MPIDI_PIP_mcoll_wait_all(s, n - 1);
    me->slot->info[n & 1] = fill(me->slot->stage[n & 1], arg);
    __atomic_store_n(&me->slot->step, me->base + n, __ATOMIC_RELEASE);
}

/* One-way step, taking side: waits for rank j's publish and returns its
 * stage (valid until this rank's next step). done() counts the step. */
static inline const char *MPIDI_PIP_mcoll_take(MPIDI_PIP_mcoll_sync_t * s, int j)
{
    MPIDI_PIP_mcoll_wait_peer(s, j, s->step + 1);
    return s->peer[j].slot->stage[(s->step + 1) & 1];
}

static inline uint64_t MPIDI_PIP_mcoll_take_info(const MPIDI_PIP_mcoll_sync_t * s, int j)
{
    return s->peer[j].slot->info[(s->step + 1) & 1];
}

static inline void MPIDI_PIP_mcoll_taken(MPIDI_PIP_mcoll_sync_t * s)
{
    uint64_t n = ++s->step;
    MPIDI_PIP_mcoll_peer_t *me = &s->peer[s->rank];
    __atomic_store_n(&me->slot->step, me->base + n, __ATOMIC_RELEASE);
}

/* Before a slot is given up: every peer has finished this rank's last
 * step (a one-way step may still be read). */
static inline void MPIDI_PIP_mcoll_quiesce(const MPIDI_PIP_mcoll_sync_t * s)
{
    MPIDI_PIP_mcoll_wait_all(s, s->step);
}

/* A meeting that offers nothing: everyone is done with the last offers. */
static inline void MPIDI_PIP_mcoll_meet(MPIDI_PIP_mcoll_sync_t * s)
{
    MPIDI_PIP_mcoll_post(s, NULL, NULL, 0);
}

/* What rank j offered at the last meeting. */
static inline const void *MPIDI_PIP_mcoll_addr(const MPIDI_PIP_mcoll_sync_t * s, int j, int k)
{
    return s->peer[j].slot->addr[s->step & 1][k];
}

static inline uint64_t MPIDI_PIP_mcoll_info(const MPIDI_PIP_mcoll_sync_t * s, int j)
{
    return s->peer[j].slot->info[s->step & 1];
}

/* Elements [*lo, *hi) of count, part i of n (the first count % n parts one
 * larger). */
static inline void MPIDI_PIP_mcoll_part(size_t count, int n, int i, size_t *lo, size_t *hi)
{
    size_t q = count / n, r = count % n;
    *lo = (size_t) i *q + ((size_t) i < r ? (size_t) i : r);
    *hi = *lo + q + ((size_t) i < r);
}

/* How many parts a reduction of count elements of elem_size bytes is cut
 * into among size ranks: at most one per rank, none under min_bytes. */
static inline int MPIDI_PIP_mcoll_nparts(size_t count, size_t elem_size, int size, size_t min_bytes)
{
    size_t n = min_bytes ? count * elem_size / min_bytes : count;
    if (n > count)
        n = count;
    if (n > (size_t) size)
        n = size;
    return n ? (int) n : 1;
}

#endif /* PIP_MCOLL_SYNC_H_INCLUDED */
