/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * MPICH-CX thread synchronization library: DSM-Synch software combining with
 * CSync's acquire/release extension (Amer et al., "Software Combining to
 * Mitigate Multithreaded MPI Contention", Fig. 2). cx_dsm_synch (apply a request,
 * by us or a combiner), cx_dsm_acquire/tryacquire/release (exclusive section),
 * cx_dsm_try_first/finish_first (inline when the queue is empty). The rules
 * (tail never served, no next = NULL after hand-off, ...): doc/design/csync.md.
 */
#ifndef CX_DSMSYNC_H_INCLUDED
#define CX_DSMSYNC_H_INCLUDED

#include "cx_sync_common.h"
#include "cx_mcs.h"
#include <assert.h>
#include <string.h>

#define CX_DSM_DEFAULT_MAX_COMBINE 1024
#define CX_DSM_HIST_BUCKETS 8   /* batch sizes 1, 2-3, 4-7, ..., >= 128 */

enum {
    CX_DSM_WAIT = 0,
    CX_DSM_UNLOCKED = 1,        /* the lock was handed to this node's owner */
    CX_DSM_COMPLETE = 2 /* a combiner applied this node's request */
};

typedef struct cx_dsm_qnode {
    /* own line: the owner spins on status, a combiner writes it */
    CX_CACHE_ALIGNED void *req;
    atomic_uint status;
     _Atomic(struct cx_dsm_qnode *) next;
} cx_dsm_qnode_t;

/* Per thread and per cx_dsm_t instance; the caller allocates it. */
typedef struct {
    cx_dsm_qnode_t qnodes[2];
    int toggle;
    cx_dsm_qnode_t *head;       /* last node we served, NULL if we did not combine */
    int held_first;             /* cx_dsm_acquire entered an empty queue (no outer lock) */
} cx_dsm_thread_t;

/* The request of a node whose owner runs its operation itself: it is first
 * in the queue, so no other thread ever reads it. */
#define CX_DSM_INLINE ((void *) 1)

typedef void (*cx_dsm_apply_fn)(void *req, void *ctx);

typedef struct {
    CX_CACHE_ALIGNED _Atomic(cx_dsm_qnode_t *) tail;
    cx_mcs_lock_t outer;        /* admits one dsm_acquire caller at a time */
    CX_CACHE_ALIGNED unsigned max_combine;
    cx_dsm_apply_fn apply;
    void *ctx;
    /* statistics, written by the current combiner only (relaxed: readable
     * any time) */
    CX_CACHE_ALIGNED atomic_ulong combined;     /* requests applied for other threads */
    atomic_ulong batches;       /* combining passes that applied >= 1 request */
    atomic_ulong max_batch;     /* largest number applied in one pass */
    atomic_ulong batch_hist[CX_DSM_HIST_BUCKETS];
#ifdef CX_DSM_CHECK
    /* tests only: dsm_acquire callers between enqueue and release */
    atomic_int check_nulls;
    atomic_int check_max_nulls;
#endif
} cx_dsm_t;

static inline void cx_dsm_thread_init(cx_dsm_thread_t * t)
{
    memset(t, 0, sizeof(*t));
    for (int i = 0; i < 2; i++) {
        atomic_init(&t->qnodes[i].status, CX_DSM_WAIT);
        atomic_init(&t->qnodes[i].next, NULL);
    }
}

/* max_combine: requests of other threads one combining pass may apply (0:
 * never combine, a pure queue lock). */
static inline void cx_dsm_init(cx_dsm_t * d, unsigned max_combine, cx_dsm_apply_fn apply, void *ctx)
{
    atomic_init(&d->tail, NULL);
    cx_mcs_init(&d->outer);
    d->max_combine = max_combine;
    d->apply = apply;
    d->ctx = ctx;
    atomic_init(&d->combined, 0);
    atomic_init(&d->batches, 0);
    atomic_init(&d->max_batch, 0);
    for (int i = 0; i < CX_DSM_HIST_BUCKETS; i++)
        atomic_init(&d->batch_hist[i], 0);
#ifdef CX_DSM_CHECK
    atomic_init(&d->check_nulls, 0);
    atomic_init(&d->check_max_nulls, 0);
#endif
}

static inline void cx_dsm__stat_add(atomic_ulong * c, unsigned long v)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + v,
                          memory_order_relaxed);
}

/* Enqueue our node; return when we hold the combining lock (status
 * UNLOCKED, or first in an empty queue) or our request was applied. */
static inline void cx_dsm__acq_enq(cx_dsm_t * d, cx_dsm_thread_t * t, void *req)
{
    t->toggle ^= 1;
    cx_dsm_qnode_t *local = &t->qnodes[t->toggle];
    atomic_store_explicit(&local->status, CX_DSM_WAIT, memory_order_relaxed);
    atomic_store_explicit(&local->next, NULL, memory_order_relaxed);
    local->req = req;
    /* acq_rel: publishes the node (release), pairs with the CAS of a
     * releaser that emptied the queue (acquire) */
    cx_dsm_qnode_t *pred = atomic_exchange_explicit(&d->tail, local, memory_order_acq_rel);
    if (pred != NULL) {
        atomic_store_explicit(&pred->next, local, memory_order_release);
        unsigned spins = 0;
        while (atomic_load_explicit(&local->status, memory_order_acquire) == CX_DSM_WAIT)
            cx_spin_pause(&spins);
    }
}

static inline void cx_dsm__combine(cx_dsm_t * d, cx_dsm_thread_t * t)
{
    cx_dsm_qnode_t *tmp = &t->qnodes[t->toggle];
    unsigned counter = 0, applied = 0;

    if (atomic_load_explicit(&tmp->status, memory_order_acquire) == CX_DSM_COMPLETE) {
        t->head = NULL; /* served by a combiner: nothing to release */
        return;
    }
    for (;;) {
        if (tmp->req == NULL || tmp->req == CX_DSM_INLINE) {
            /* our own dsm_acquire node (hold the lock, apply nothing), or
             * our operation that we ran inline */
            assert(counter == 0);
        } else {
            d->apply(tmp->req, d->ctx);
            applied++;
            /* after this store a foreign tmp's owner returns; its other
             * qnode goes next, so tmp stays valid until we hand off */
            atomic_store_explicit(&tmp->status, CX_DSM_COMPLETE, memory_order_release);
        }
        if (counter >= d->max_combine)
            break;
        cx_dsm_qnode_t *next = atomic_load_explicit(&tmp->next, memory_order_acquire);
        if (next == NULL)
            break;
        /* never serve the tail: its owner takes the lock instead */
        if (atomic_load_explicit(&next->next, memory_order_acquire) == NULL)
            break;
        /* a dsm_acquire caller: stop combining, hand the lock over */
        if (next->req == NULL)
            break;
        tmp = next;
        counter++;
    }
    t->head = tmp;

    if (applied > 0) {
        /* a batch counts the combiner's own operation, run inline or not */
        void *own_req = t->qnodes[t->toggle].req;
        unsigned long foreign = applied - ((own_req != NULL && own_req != CX_DSM_INLINE) ? 1 : 0);
        unsigned long batch = foreign + (own_req != NULL ? 1 : 0);
        unsigned b = 0;
        while (b + 1 < CX_DSM_HIST_BUCKETS && (batch >> (b + 1)) != 0)
            b++;
        cx_dsm__stat_add(&d->combined, foreign);
        cx_dsm__stat_add(&d->batches, 1);
        cx_dsm__stat_add(&d->batch_hist[b], 1);
        if (batch > atomic_load_explicit(&d->max_batch, memory_order_relaxed))
            atomic_store_explicit(&d->max_batch, batch, memory_order_relaxed);
    }
}

static inline void cx_dsm__release(cx_dsm_t * d, cx_dsm_thread_t * t)
{
    cx_dsm_qnode_t *tmp = t->head;
    if (tmp == NULL)
        return;
    cx_dsm_qnode_t *next = atomic_load_explicit(&tmp->next, memory_order_acquire);
    if (next == NULL) {
        /* only our own node can end the queue here (combine never stops on
         * a foreign node without a successor) */
        cx_dsm_qnode_t *expected = tmp;
        if (atomic_compare_exchange_strong_explicit(&d->tail, &expected, NULL,
                                                    memory_order_release, memory_order_relaxed))
            return;
        /* an enqueuer swapped in but has not linked yet */
        unsigned spins = 0;
        while ((next = atomic_load_explicit(&tmp->next, memory_order_acquire)) == NULL)
            cx_spin_pause(&spins);
    }
    /* erratum: no tmp->next = NULL here; tmp's owner may be reusing it */
    atomic_store_explicit(&next->status, CX_DSM_UNLOCKED, memory_order_release);
}

/* Returns once req (not NULL) has been applied, by this thread or by a
 * combiner. */
static inline void cx_dsm_synch(cx_dsm_t * d, cx_dsm_thread_t * t, void *req)
{
    assert(req != NULL && req != CX_DSM_INLINE);
    cx_dsm__acq_enq(d, t, req);
    cx_dsm__combine(d, t);
    cx_dsm__release(d, t);
}

/* cx_dsm_synch's uncontended case, for a caller that can run its own
 * operation inline: enqueue a node without a request, only into an empty
 * queue (CAS, as an MCS try-lock).  True: the caller holds the combining
 * lock, runs its operation, then calls cx_dsm_finish_first (which serves
 * whatever queued behind it).  False leaves queue and thread state as they
 * were: the caller builds its request and calls cx_dsm_synch. */
static inline bool cx_dsm_try_first(cx_dsm_t * d, cx_dsm_thread_t * t)
{
    /* the node not used by our last call: a combiner may still read that one */
    cx_dsm_qnode_t *local = &t->qnodes[t->toggle ^ 1];
    cx_dsm_qnode_t *expected = NULL;
    if (atomic_load_explicit(&d->tail, memory_order_relaxed) != NULL)
        return false;
    atomic_store_explicit(&local->status, CX_DSM_WAIT, memory_order_relaxed);
    atomic_store_explicit(&local->next, NULL, memory_order_relaxed);
    local->req = CX_DSM_INLINE;
    /* acq_rel as the swap in cx_dsm__acq_enq */
    if (!atomic_compare_exchange_strong_explicit(&d->tail, &expected, local,
                                                 memory_order_acq_rel, memory_order_relaxed))
        return false;
    t->toggle ^= 1;
    return true;
}

static inline void cx_dsm_finish_first(cx_dsm_t * d, cx_dsm_thread_t * t)
{
    /* nobody linked behind us: combining would stop at once, so only the
     * release's CAS is left (the uncontended case, kept inline) */
    cx_dsm_qnode_t *local = &t->qnodes[t->toggle];
    if (atomic_load_explicit(&local->next, memory_order_acquire) == NULL) {
        cx_dsm_qnode_t *expected = local;
        if (atomic_compare_exchange_strong_explicit(&d->tail, &expected, NULL,
                                                    memory_order_release, memory_order_relaxed))
            return;
    }
    cx_dsm__combine(d, t);
    cx_dsm__release(d, t);
}

/* The exclusive section's try-lock: true when the queue was empty and the
 * caller now holds the lock (cx_dsm_release lets go).  It enters as
 * cx_dsm_try_first does, without the outer lock: its INLINE node heads the
 * queue, so no combiner ever meets it, and the one-NULL rule still holds
 * (CSync's uncontended progress: 2 atomics instead of 4). */
static inline bool cx_dsm_tryacquire(cx_dsm_t * d, cx_dsm_thread_t * t)
{
    if (!cx_dsm_try_first(d, t))
        return false;
    t->held_first = 1;
    t->head = &t->qnodes[t->toggle];
    return true;
}

/* Exclusive section: the caller runs its own critical section after this
 * returns (requests queued ahead of it were applied first). */
static inline void cx_dsm_acquire(cx_dsm_t * d, cx_dsm_thread_t * t)
{
    if (cx_dsm_tryacquire(d, t))
        return;
    t->held_first = 0;
    cx_mcs_acquire(&d->outer);
#ifdef CX_DSM_CHECK
    int n = atomic_fetch_add_explicit(&d->check_nulls, 1, memory_order_relaxed) + 1;
    int m = atomic_load_explicit(&d->check_max_nulls, memory_order_relaxed);
    while (n > m && !atomic_compare_exchange_weak_explicit(&d->check_max_nulls, &m, n,
                                                           memory_order_relaxed,
                                                           memory_order_relaxed));
#endif
    cx_dsm__acq_enq(d, t, NULL);
    cx_dsm__combine(d, t);
}

/* Hands the lock to the next node as it is, without combining for it. */
static inline void cx_dsm_release(cx_dsm_t * d, cx_dsm_thread_t * t)
{
    cx_dsm__release(d, t);
    if (t->held_first)
        return;
#ifdef CX_DSM_CHECK
    atomic_fetch_sub_explicit(&d->check_nulls, 1, memory_order_relaxed);
#endif
    cx_mcs_release(&d->outer);
}

#endif /* CX_DSMSYNC_H_INCLUDED */
