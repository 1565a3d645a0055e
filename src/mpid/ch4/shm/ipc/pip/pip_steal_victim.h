/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * MPICH-CX CAB-MPI victim selection (paper's localized, mixed and
 * throughput-aware strategies) over the ranks that share this address
 * space.  No MPI in here: test/unit/pipsteal runs it on fake NUMA maps.
 * Design: doc/design/cab-stealing.md.
 */
#ifndef PIP_STEAL_VICTIM_H_INCLUDED
#define PIP_STEAL_VICTIM_H_INCLUDED

#include "pip_steal.h"

#define MPIDI_PIPI_STEAL_OFF        0
#define MPIDI_PIPI_STEAL_LOCALIZED  1
#define MPIDI_PIPI_STEAL_MIXED      2
#define MPIDI_PIPI_STEAL_THROUGHPUT 3

/* A remote steal leaves a task alone unless this many chunks are left, so
 * the tail of a message stays on the owner's NUMA node. */
#define MPIDI_PIPI_REMOTE_MIN_CHUNKS 3

/* What each rank shares with its peers (they read it through a pointer). */
typedef struct MPIDI_PIPI_steal_rank {
    MPIDI_PIPI_taskq_t q;
    /* possibly active: 0 only while idle in a blocking MPI call and not
     * running a stolen chunk; remote stealers add these up */
    int active __attribute__((aligned(64)));
    int numa;
    /* used in the first rank of each NUMA node only: one remote check of
     * the node at a time, and the verdict of the last one */
    int numa_checking __attribute__((aligned(64)));
    int numa_allow;
} __attribute__((aligned(64))) MPIDI_PIPI_steal_rank_t;

/* One rank's view of its peers, built at init. */
typedef struct {
    int strategy;
    int n_saturate;
    int n;                      /* ranks in this address space, this one included */
    int me;                     /* this rank's id in tasks' waiter field (its world rank) */
    MPIDI_PIPI_steal_rank_t **ranks;    /* by index */
    MPIDI_PIPI_steal_rank_t *self;
    int *local, n_local;        /* peers on this rank's NUMA node */
    int *remote, n_remote;      /* peers on other NUMA nodes */
    MPIDI_PIPI_steal_rank_t **numa_host;        /* by index: first rank of its node */
} MPIDI_PIPI_steal_world_t;

/* What one attempt did. */
typedef struct {
    size_t bytes;               /* of the chunks run, 0 if none */
    size_t chunks;              /* one, or more of a task this rank waits on */
    int remote;                 /* the victim was on another NUMA node */
    int denied;                 /* a remote node was saturated */
} MPIDI_PIPI_steal_result_t;

/* xorshift; *rng != 0, one per thread */
static inline unsigned MPIDI_PIPI_rand(unsigned *rng)
{
    *rng ^= *rng << 13;
    *rng ^= *rng >> 17;
    *rng ^= *rng << 5;
    return *rng;
}

/* Ranks of victim's NUMA node that are possibly active. */
static inline int MPIDI_PIPI_numa_active(MPIDI_PIPI_steal_world_t * w, int victim)
{
    int node = w->ranks[victim]->numa, n = 0;
    for (int i = 0; i < w->n; i++)
        if (w->ranks[i]->numa == node)
            n += __atomic_load_n(&w->ranks[i]->active, __ATOMIC_RELAXED) != 0;
    return n;
}

/* Throughput-aware: may this worker add load to victim's NUMA node?  One
 * rank at a time counts the node's possibly active ranks against
 * N_saturate; the others follow its last verdict. */
static inline int MPIDI_PIPI_remote_allowed(MPIDI_PIPI_steal_world_t * w, int victim)
{
    MPIDI_PIPI_steal_rank_t *host = w->numa_host[victim];
    int expected = 0;
    if (__atomic_compare_exchange_n(&host->numa_checking, &expected, 1, 0, __ATOMIC_ACQUIRE,
                                    __ATOMIC_RELAXED)) {
        int allow = MPIDI_PIPI_numa_active(w, victim) < w->n_saturate;
        __atomic_store_n(&host->numa_allow, allow, __ATOMIC_RELAXED);
        __atomic_store_n(&host->numa_checking, 0, __ATOMIC_RELEASE);
        return allow;
    }
    return __atomic_load_n(&host->numa_allow, __ATOMIC_RELAXED);
}

/* Steal a chunk from victim, flagging this rank active while it runs. */
static inline size_t MPIDI_PIPI_steal_from(MPIDI_PIPI_steal_world_t * w, int victim,
                                           size_t min_left, int me, size_t *chunks)
{
    MPIDI_PIPI_taskq_t *q = &w->ranks[victim]->q;
    if (MPIDI_PIPI_taskq_empty(q))
        return 0;
    __atomic_store_n(&w->self->active, 1, __ATOMIC_RELAXED);
    size_t bytes = MPIDI_PIPI_taskq_steal(q, min_left, me, chunks);
    __atomic_store_n(&w->self->active, 0, __ATOMIC_RELAXED);
    return bytes;
}

/* One attempt by an idle rank: one local victim, then (mixed, throughput)
 * one remote victim if the local one had nothing.  me: what the calling
 * thread's wait is known by in tasks' waiter field (w->me, or its fence's
 * id); rng: its random state. */
static inline MPIDI_PIPI_steal_result_t MPIDI_PIPI_steal_once(MPIDI_PIPI_steal_world_t * w,
                                                              int me, unsigned *rng)
{
    MPIDI_PIPI_steal_result_t r = { 0, 0, 0, 0 };
    if (w->strategy == MPIDI_PIPI_STEAL_OFF)
        return r;
    if (w->n_local) {
        r.bytes = MPIDI_PIPI_steal_from(w, w->local[MPIDI_PIPI_rand(rng) % w->n_local], 0, me,
                                        &r.chunks);
        if (r.bytes || w->strategy == MPIDI_PIPI_STEAL_LOCALIZED)
            return r;
    }
    if (!w->n_remote || w->strategy == MPIDI_PIPI_STEAL_LOCALIZED)
        return r;
    int victim = w->remote[MPIDI_PIPI_rand(rng) % w->n_remote];
    if (MPIDI_PIPI_taskq_empty(&w->ranks[victim]->q))
        return r;
    if (w->strategy == MPIDI_PIPI_STEAL_THROUGHPUT && !MPIDI_PIPI_remote_allowed(w, victim)) {
        r.denied = 1;
        return r;
    }
    r.bytes = MPIDI_PIPI_steal_from(w, victim, MPIDI_PIPI_REMOTE_MIN_CHUNKS, me, &r.chunks);
    r.remote = r.bytes != 0;
    return r;
}

/* Build a view from everyone's shared state; idx arrays have room for n
 * entries each.  Returns 0, or -1 if self is not among ranks. */
static inline int MPIDI_PIPI_steal_world_init(MPIDI_PIPI_steal_world_t * w, int strategy,
                                              int n_saturate, MPIDI_PIPI_steal_rank_t ** ranks,
                                              int n, int self, int *local, int *remote,
                                              MPIDI_PIPI_steal_rank_t ** numa_host)
{
    if (self < 0 || self >= n)
        return -1;
    w->strategy = strategy;
    w->me = MPIDI_PIPI_NO_WAITER;       /* the caller sets it */
    w->n_saturate = n_saturate;
    w->n = n;
    w->ranks = ranks;
    w->self = ranks[self];
    w->local = local;
    w->remote = remote;
    w->numa_host = numa_host;
    w->n_local = w->n_remote = 0;
    for (int i = 0; i < n; i++) {
        int host = 0;
        while (ranks[host]->numa != ranks[i]->numa)
            host++;
        numa_host[i] = ranks[host];
        if (i == self)
            continue;
        if (ranks[i]->numa == ranks[self]->numa)
            local[w->n_local++] = i;
        else
            remote[w->n_remote++] = i;
    }
    return 0;
}

#endif /* PIP_STEAL_VICTIM_H_INCLUDED */
