/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * MPICH-CX thread synchronization library: LockQ helpers (Amer et al.,
 * "Software Combining to Mitigate Multithreaded MPI Contention", §3.4). A
 * thread that fails its try-lock posts a descriptor; every lock holder runs the
 * queue (cx_lockq_combine) before its own work. Groups let a window's
 * synchronization wait for what was posted before it. Design: doc/design/lockq.md.
 */
#ifndef CX_LOCKQ_H_INCLUDED
#define CX_LOCKQ_H_INCLUDED

#include "cx_sync_common.h"
#include "cx_swpq.h"

#define CX_LOCKQ_DEFAULT_MAX_COMBINE 1024

typedef struct {
    cx_swpq_t q;                /* cache aligned by its type */
    unsigned max_combine;       /* descriptors run per combine call */
    CX_CACHE_ALIGNED atomic_ulong enqueued;     /* producers */
    /* lock holder only (relaxed: readable any time) */
    CX_CACHE_ALIGNED atomic_ulong combined;     /* descriptors run */
    atomic_ulong batches;       /* combine calls that ran at least one */
} cx_lockq_t;

/* max_combine 0 means CX_LOCKQ_DEFAULT_MAX_COMBINE. 0 or ENOMEM. */
static inline int cx_lockq_init(cx_lockq_t * lq, unsigned max_combine)
{
    lq->max_combine = max_combine ? max_combine : CX_LOCKQ_DEFAULT_MAX_COMBINE;
    atomic_init(&lq->enqueued, 0);
    atomic_init(&lq->combined, 0);
    atomic_init(&lq->batches, 0);
    return cx_swpq_init(&lq->q);
}

/* Descriptors still queued are dropped. */
static inline void cx_lockq_destroy(cx_lockq_t * lq)
{
    cx_swpq_destroy(&lq->q);
}

/* Any thread; wait-free apart from malloc. 0 or ENOMEM. */
static inline int cx_lockq_post(cx_lockq_t * lq, void *descr)
{
    int err = cx_swpq_enqueue(&lq->q, descr);
    if (err == 0)
        atomic_fetch_add_explicit(&lq->enqueued, 1, memory_order_relaxed);
    return err;
}

/* Lock holder only. Runs apply on queued descriptors in FIFO order, at most
 * max_combine of them; returns how many ran.
 *
 * *limit_reached (may be NULL) is set when work is left behind: it stopped
 * at max_combine with more queued, or it could not get past a post that is
 * still between swap and link (SWP is not linearizable: that post and every
 * later one, possibly including an earlier operation of the caller itself,
 * stay hidden). Either way the caller must post its own operation rather
 * than run it ahead of the queue; otherwise it is cleared. */
static inline unsigned cx_lockq_combine(cx_lockq_t * lq, void (*apply)(void *descr, void *ctx),
                                        void *ctx, bool *limit_reached)
{
    unsigned n = 0;
    void *descr;

    while (n < lq->max_combine && cx_swpq_dequeue(&lq->q, &descr)) {
        apply(descr, ctx);
        n++;
    }
    if (limit_reached != NULL)
        *limit_reached = !cx_swpq_is_empty(&lq->q);
    if (n > 0) {
        atomic_store_explicit(&lq->combined,
                              atomic_load_explicit(&lq->combined, memory_order_relaxed) + n,
                              memory_order_relaxed);
        atomic_store_explicit(&lq->batches,
                              atomic_load_explicit(&lq->batches, memory_order_relaxed) + 1,
                              memory_order_relaxed);
    }
    return n;
}

/* Hint, any thread: is work posted and not yet combined? */
static inline bool cx_lockq_pending(cx_lockq_t * lq)
{
    return !cx_swpq_is_empty(&lq->q);
}

/* ---- groups: "everything posted before now has run" ----
 *
 * A group (a window's one-sided operations) counts its posts and runs so
 * that a synchronization call can wait for exactly the posts that finished
 * before it began, however many they are and however producers are
 * scheduled. The post is counted before its swap: then every post swapped
 * before the drain started is counted in its target, and since the queue
 * runs in swap order, `ran` reaching that target means all of them ran. */
typedef struct {
    atomic_ulong posted;        /* producers, before their swap */
    unsigned long ran;          /* lock holder only */
    int error;                  /* lock holder only: first error a queued one met */
} cx_lockq_group_t;

/* Any thread: post descr as a member of g. 0 or ENOMEM (nothing posted). */
static inline int cx_lockq_group_post(cx_lockq_t * lq, cx_lockq_group_t * g, void *descr)
{
    atomic_fetch_add_explicit(&g->posted, 1, memory_order_relaxed);
    int err = cx_lockq_post(lq, descr);
    if (err)
        atomic_fetch_sub_explicit(&g->posted, 1, memory_order_relaxed);
    return err;
}

/* Lock holder, from apply: a member of g ran (err: its MPI error, 0 if none). */
static inline void cx_lockq_group_ran(cx_lockq_group_t * g, int err)
{
    g->ran++;
    if (err && !g->error)
        g->error = err;
}

/* Lock holder only: runs the queue (past max_combine, other groups' posts
 * too) until every post of g counted when it is called has run; waits out a
 * producer between its swap and its link, yielding if it stays there
 * (descheduled). Returns and clears the first error g's members met. */
static inline int cx_lockq_group_drain(cx_lockq_t * lq, cx_lockq_group_t * g,
                                       void (*apply)(void *descr, void *ctx), void *ctx)
{
    unsigned long target = atomic_load_explicit(&g->posted, memory_order_acquire);
    unsigned spins = 0;
    for (;;) {
        /* a post that failed (ENOMEM) after being counted lowers posted */
        unsigned long now = atomic_load_explicit(&g->posted, memory_order_acquire);
        if (g->ran >= (now < target ? now : target))
            break;
        if (cx_lockq_combine(lq, apply, ctx, NULL) == 0)
            cx_spin_pause(&spins);
        else
            spins = 0;
    }
    int err = g->error;
    g->error = 0;
    return err;
}

#endif /* CX_LOCKQ_H_INCLUDED */
