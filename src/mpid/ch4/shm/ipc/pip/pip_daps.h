/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * MPICH-CX Daps (dynamic asynchronous progress stealing): the progress
 * descriptor each PiP task publishes, the steal protocol and the choice of
 * victim. No MPI in here: test/unit/pipdaps runs it with fake ranks and
 * ThreadSanitizer. Design: doc/user/daps.md.
 */
#ifndef PIP_DAPS_H_INCLUDED
#define PIP_DAPS_H_INCLUDED

#include <pthread.h>
#include <stdbool.h>
#include "mpichcx_daps.h"

/* What a steal step did (bits). */
#define MPIDI_PIPI_DAPS_NET 1
#define MPIDI_PIPI_DAPS_SHM 2

/* After this many failed tries on its own NUMA node a worker tries a rank
 * of another node once (paper §3.4.3); the count halves on success. */
#define MPIDI_PIPI_DAPS_LOCAL_TRIES 64

/* A steal step that found nothing makes the worker skip up to this many of
 * its idle polls (2^k - 1 after k empty steps in a row): each step costs a
 * membarrier, which interrupts the CPUs of the process's running threads. */
#define MPIDI_PIPI_DAPS_MAX_SKIP 63

/* One rank's progress descriptor, read by its peers through a pointer. */
typedef struct MPIDI_PIPI_daps_rank {
    /* Set at init by the owner, then read-only. The progress function is
     * the owner's own (its namespace's copy, bound to its globals): run the
     * network step if net, the shared-memory step if shm and the network
     * step found nothing; return MPIDI_PIPI_DAPS_* bits of what progressed. */
    int (*progress)(bool net, bool shm);
    MPIR_CX_daps_guard_t *guard;        /* the owner's guard: in_progress */
    int numa;
    /* 1 between the end of MPI_Init and the start of MPI_Finalize */
    int enabled __attribute__((aligned(64)));
    /* how likely a step finds work: incomplete operations that need a
     * peer's handshake through the netmod or shared memory, windows */
    long net_avail __attribute__((aligned(64)));
    long shm_avail;
} __attribute__((aligned(64))) MPIDI_PIPI_daps_rank_t;

/* A worker's view of its peers and its own state. */
typedef struct {
    MPIDI_PIPI_daps_rank_t **local;     /* peers on this rank's NUMA node */
    int n_local;
    MPIDI_PIPI_daps_rank_t **remote;    /* peers on other nodes */
    int n_remote;
    unsigned rng;               /* xorshift, never 0 */
    unsigned local_fails;
    unsigned skip, skip_next;   /* idle polls to skip; the next skip */
    void (*fence)(void);        /* membarrier: orders every thread's stores */
    /* A victim must have been seen outside MPI, with work posted, for this
     * long before the first step (0: at once). A rank between two calls of
     * a communication loop is not computing, and a step there (a
     * membarrier, then the owner waiting at its next entry) only slows it. */
    unsigned long long min_away_ns;
    /* Peers are looked at once per look_ns at most (0: every idle poll): a
     * look reads cache lines the owner writes in every MPI call, and each
     * costs the owner a cache miss there. Looks that find nobody to watch
     * (peers inside MPI, or with nothing posted) double look_ns up to
     * look_max_ns; finding one brings it back to look_min_ns. */
    unsigned long long look_ns, look_min_ns, look_max_ns, last_look;
    /* and only every look_polls + 1 idle polls: reading the clock on every
     * one delayed the worker's own receives */
    unsigned look_polls, polls_left;
    MPIDI_PIPI_daps_rank_t *cand;       /* the victim being watched */
    bool cand_remote;
    unsigned long long cand_since;      /* when it was first seen eligible */
} MPIDI_PIPI_daps_worker_t;

static inline unsigned MPIDI_PIPI_daps_rand(unsigned *rng)
{
    *rng ^= *rng << 13;
    *rng ^= *rng >> 17;
    *rng ^= *rng << 5;
    return *rng;
}

/* Whether v might have progress for a worker, read without any store. */
static inline bool MPIDI_PIPI_daps_eligible(const MPIDI_PIPI_daps_rank_t * v)
{
    /* the lines the owner writes least often first: its counters change
     * only with operations that need a handshake, its nesting counters in
     * every MPI call (a read of those lines costs the owner a miss there,
     * and a rank exchanging small messages is then not looked at beyond
     * its counters) */
    return __atomic_load_n(&v->enabled, __ATOMIC_RELAXED) &&
        (__atomic_load_n(&v->net_avail, __ATOMIC_RELAXED) > 0 ||
         __atomic_load_n(&v->shm_avail, __ATOMIC_RELAXED) > 0) &&
        !__atomic_load_n(&v->guard->worker, __ATOMIC_RELAXED) &&
        !MPIR_CX_daps_owner_inside(v->guard);
}

/* One steal step on v: -1 if v was not available (disabled, a thread of
 * it inside MPI, another worker there, nothing posted), else what
 * progressed. Rule 1 of the paper: one worker at a time (the worker flag),
 * none while the owner is inside MPI (its guard's depths: with MPI threads,
 * none of its threads). */
static inline int MPIDI_PIPI_daps_try(MPIDI_PIPI_daps_rank_t * v, void (*fence)(void))
{
    if (!MPIDI_PIPI_daps_eligible(v))
        return -1;
    int expected = 0;
    if (!__atomic_compare_exchange_n(&v->guard->worker, &expected, 1, false, __ATOMIC_SEQ_CST,
                                     __ATOMIC_RELAXED))
        return -1;
    /* the victim's code we run must not wait for us */
    __atomic_store_n(&v->guard->worker_thread, pthread_self(), __ATOMIC_RELAXED);
    MPIR_CX_daps_set_busy(v->guard);
    fence();    /* the owner's depth store is visible now, or it sees us */
    int r = -1;
    /* enabled: MPI_Finalize clears it with an exchange, then waits for us */
    if (__atomic_load_n(&v->enabled, __ATOMIC_SEQ_CST) && !MPIR_CX_daps_owner_inside(v->guard)) {
        bool net = __atomic_load_n(&v->net_avail, __ATOMIC_RELAXED) > 0;
        bool shm = __atomic_load_n(&v->shm_avail, __ATOMIC_RELAXED) > 0;
        r = v->progress(net, shm);
    }
    MPIR_CX_daps_clear_busy(v->guard);
    __atomic_store_n(&v->guard->worker, 0, __ATOMIC_RELEASE);
    return r;
}

/* The victim of one attempt: a random peer of this NUMA node, or of another
 * node after MPIDI_PIPI_DAPS_LOCAL_TRIES failures here (or when this node
 * has no other rank). NULL if there are no peers. */
static inline MPIDI_PIPI_daps_rank_t *MPIDI_PIPI_daps_pick(MPIDI_PIPI_daps_worker_t * w,
                                                           bool *remote)
{
    *remote = w->n_remote > 0 && (w->n_local == 0 || w->local_fails >= MPIDI_PIPI_DAPS_LOCAL_TRIES);
    if (*remote) {
        w->local_fails = 0;
        return w->remote[MPIDI_PIPI_daps_rand(&w->rng) % w->n_remote];
    }
    if (w->n_local == 0)
        return NULL;
    return w->local[MPIDI_PIPI_daps_rand(&w->rng) % w->n_local];
}

/* One idle poll of a worker: -1 if it ran no step (no victim available,
 * one not away from MPI long enough, no look due, or skipping after empty
 * steps), else the bits of what progressed. clock (may be NULL: no looks
 * spacing, no waiting period) gives nanoseconds; *ns receives the step's
 * time. A worker keeps watching the victim it found eligible until it is
 * not: it must stay eligible (outside MPI) at every look for min_away_ns
 * before the first step. */
static inline int MPIDI_PIPI_daps_idle(MPIDI_PIPI_daps_worker_t * w,
                                       unsigned long long (*clock)(void), unsigned long long *ns)
{
    if (w->skip) {
        w->skip--;
        return -1;
    }
    unsigned long long t0 = 0;
    if (clock) {
        if (w->polls_left) {
            w->polls_left--;
            return -1;
        }
        w->polls_left = w->look_polls;
        t0 = clock();
        if (t0 - w->last_look < w->look_ns)
            return -1;
        w->last_look = t0;
    }
    bool remote;
    MPIDI_PIPI_daps_rank_t *v;
    if (w->cand && MPIDI_PIPI_daps_eligible(w->cand)) {
        v = w->cand;
        remote = w->cand_remote;
    } else {
        w->cand = NULL;
        v = MPIDI_PIPI_daps_pick(w, &remote);
    }
    int r = -1;
    bool found = v && MPIDI_PIPI_daps_eligible(v);
    if (clock && !found) {
        w->look_ns = w->look_ns * 2 < w->look_max_ns ? w->look_ns * 2 : w->look_max_ns;
        if (w->look_ns < w->look_min_ns)
            w->look_ns = w->look_min_ns;
    } else if (clock) {
        w->look_ns = w->look_min_ns;
    }
    if (found) {
        if (w->cand != v) {
            w->cand = v;
            w->cand_remote = remote;
            w->cand_since = t0;
        }
        if (clock && t0 - w->cand_since < w->min_away_ns)
            return -1;  /* watching: not a failure */
        r = MPIDI_PIPI_daps_try(v, w->fence);
        if (clock && r >= 0)
            *ns = clock() - t0;
    }
    if (r > 0) {
        w->local_fails /= 2;
        w->skip_next = 0;
        return r;
    }
    if (!remote)
        w->local_fails++;
    if (r == 0) {       /* a step that found nothing: back off */
        w->skip = w->skip_next;
        w->skip_next = w->skip_next * 2 + 1;
        if (w->skip_next > MPIDI_PIPI_DAPS_MAX_SKIP)
            w->skip_next = MPIDI_PIPI_DAPS_MAX_SKIP;
    }
    return r;
}

/* MPI_Finalize's first step: no worker enters any more; wait for the one
 * inside (pairs with the busy-then-check order of MPIDI_PIPI_daps_try). */
static inline void MPIDI_PIPI_daps_disable(MPIDI_PIPI_daps_rank_t * self)
{
    __atomic_exchange_n(&self->enabled, 0, __ATOMIC_SEQ_CST);
    MPIR_CX_daps_wait_worker(self->guard);
}

#endif /* PIP_DAPS_H_INCLUDED */
