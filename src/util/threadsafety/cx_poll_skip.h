/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * MPICH-CX: when progress may skip polling the netmod because shared memory is
 * delivering or the netmod has long been quiet, and the pause after an empty
 * poll. Relaxed atomics (a race misjudges one decision); plain C11, no MPICH
 * headers (unit-tested alone). Design: doc/design/nm-poll-skip.md.
 */
#ifndef CX_POLL_SKIP_H_INCLUDED
#define CX_POLL_SKIP_H_INCLUDED

#include <stdatomic.h>
#include <stdbool.h>
#include "cx_sync_common.h"

typedef struct {
    _Alignas(64) atomic_int shm_events; /* polls of shared memory that found a message */
    atomic_int nm_events;       /* polls of the netmod that found completions */
    atomic_int shm_busy;        /* the last shared-memory poll found one */
    atomic_int nm_busy;         /* the last netmod poll found some */
    atomic_int nm_idle;         /* empty netmod polls since the last clock read */
    atomic_llong nm_idle_since; /* the clock at this run of empty polls' first read; 0: none */
    atomic_int nm_quiet;        /* the netmod found nothing for quiet_ns */
    atomic_int skipped;         /* netmod polls skipped in a row */
    atomic_uint skipped_total;  /* all netmod polls skipped (a pvar) */
    atomic_uint quiet_skipped_total;    /* of those, skipped while shared memory was idle too */
    atomic_uint idle_pauses_total;      /* pauses after an empty poll of shared memory
                                         * alone (a pvar) */
} cx_poll_skip_t;

#define CX_PS_LOAD_(f_) atomic_load_explicit(&(f_), memory_order_relaxed)
#define CX_PS_STORE_(f_, v_) atomic_store_explicit(&(f_), (v_), memory_order_relaxed)

/* Empty netmod polls between two clock reads. */
#define CX_POLL_SKIP_CLOCK_EVERY 64

/* Whether this progress call polls the netmod (max: the most skips in a
 * row, 0 never skips; shm: shared memory is polled in the same call). */
static inline bool cx_poll_skip_due(cx_poll_skip_t * p, int max, bool shm)
{
    if (max == 0 || !shm)
        return true;
    int skipped = CX_PS_LOAD_(p->skipped);
    bool shm_busy = CX_PS_LOAD_(p->shm_busy);
    bool nm_quiet = CX_PS_LOAD_(p->nm_quiet);
    if ((!shm_busy && !nm_quiet) || CX_PS_LOAD_(p->nm_busy) || skipped >= max) {
        if (skipped)
            CX_PS_STORE_(p->skipped, 0);
        return true;
    }
    CX_PS_STORE_(p->skipped, skipped + 1);
    CX_PS_STORE_(p->skipped_total, CX_PS_LOAD_(p->skipped_total) + 1);
    if (!shm_busy)
        CX_PS_STORE_(p->quiet_skipped_total, CX_PS_LOAD_(p->quiet_skipped_total) + 1);
    return false;
}

/* A transport's poll found work. */
static inline void cx_poll_skip_event(atomic_int * events)
{
    CX_PS_STORE_(*events, CX_PS_LOAD_(*events) + 1);
}

/* Around one transport's poll: the event count before it, then whether the
 * poll moved it. */
static inline int cx_poll_skip_mark(atomic_int * events)
{
    return CX_PS_LOAD_(*events);
}

static inline void cx_poll_skip_done(atomic_int * events, int mark, atomic_int * busy)
{
    int now = CX_PS_LOAD_(*events) != mark;
    if (CX_PS_LOAD_(*busy) != now)
        CX_PS_STORE_(*busy, now);
}

/* After a progress call that skipped the netmod: when its shared-memory
 * poll found nothing, `pause` CPU relax instructions before the next poll.
 * The skipped netmod poll used to space the polls of an idle queue; without
 * it a waiting rank reads the queue the sender writes so often that the
 * sender's stores wait for the cache line.  A queue that delivers is polled
 * again at once. */
static inline void cx_poll_skip_idle_pause(cx_poll_skip_t * p, int pause)
{
    if (pause <= 0 || CX_PS_LOAD_(p->shm_busy))
        return;
    CX_PS_STORE_(p->idle_pauses_total, CX_PS_LOAD_(p->idle_pauses_total) + 1);
    for (int i = 0; i < pause; i++)
        cx_cpu_relax();
}

/* After a netmod poll: busy or not, and quiet or not (quiet_ns: how long
 * its polls must find nothing, 0 never quiet; now_ns: a monotonic clock in
 * nanoseconds, never 0). */
static inline void cx_poll_skip_nm_done(cx_poll_skip_t * p, int mark, long long quiet_ns,
                                        long long (*now_ns)(void))
{
    cx_poll_skip_done(&p->nm_events, mark, &p->nm_busy);
    if (CX_PS_LOAD_(p->nm_busy)) {
        if (CX_PS_LOAD_(p->nm_idle))
            CX_PS_STORE_(p->nm_idle, 0);
        if (CX_PS_LOAD_(p->nm_idle_since))
            CX_PS_STORE_(p->nm_idle_since, 0);
        if (CX_PS_LOAD_(p->nm_quiet))
            CX_PS_STORE_(p->nm_quiet, 0);
        return;
    }
    if (quiet_ns == 0 || CX_PS_LOAD_(p->nm_quiet))
        return;
    int idle = CX_PS_LOAD_(p->nm_idle) + 1;
    if (idle < CX_POLL_SKIP_CLOCK_EVERY) {
        CX_PS_STORE_(p->nm_idle, idle);
        return;
    }
    CX_PS_STORE_(p->nm_idle, 0);
    long long t = now_ns(), since = CX_PS_LOAD_(p->nm_idle_since);
    if (since == 0)
        CX_PS_STORE_(p->nm_idle_since, t);
    else if (t - since >= quiet_ns)
        CX_PS_STORE_(p->nm_quiet, 1);
}

#endif /* CX_POLL_SKIP_H_INCLUDED */
