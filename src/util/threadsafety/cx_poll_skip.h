/*
 * MPICH-CX: when a progress engine may skip polling one transport (the
 * netmod) because another (shared memory) is delivering.
 *
 * Per VCI: each transport counts the polls in which it found work (an
 * event); a progress call marks the count before polling it and records
 * afterwards whether that poll was busy.  The netmod poll is due when
 * skipping is off (max 0), when shared memory is not polled in the same
 * call, when shared memory's last poll found nothing, when the netmod's own
 * last poll found work, or after max skips in a row.  So a netmod that has
 * traffic, or a rank whose shared memory is idle, polls as MPICH does, and
 * netmod traffic waits at most max progress calls, and only while every
 * shared-memory poll delivers a message (after one that finds nothing, the
 * next call polls the netmod).
 *
 * The state is relaxed atomics: shared-memory polls run under the VCI lock
 * but a netmod poll may not (MPICH's lockless model), and a race only
 * misjudges one decision.  Plain C11, no MPICH headers (unit-tested alone).
 */
#ifndef CX_POLL_SKIP_H_INCLUDED
#define CX_POLL_SKIP_H_INCLUDED

#include <stdatomic.h>
#include <stdbool.h>

typedef struct {
    _Alignas(64) atomic_int shm_events; /* polls of shared memory that found a message */
    atomic_int nm_events;       /* polls of the netmod that found completions */
    atomic_int shm_busy;        /* the last shared-memory poll found one */
    atomic_int nm_busy;         /* the last netmod poll found some */
    atomic_int skipped;         /* netmod polls skipped in a row */
    atomic_uint skipped_total;  /* all netmod polls skipped (a pvar) */
} cx_poll_skip_t;

#define CX_PS_LOAD_(f_) atomic_load_explicit(&(f_), memory_order_relaxed)
#define CX_PS_STORE_(f_, v_) atomic_store_explicit(&(f_), (v_), memory_order_relaxed)

/* Whether this progress call polls the netmod (max: the most skips in a
 * row, 0 never skips; shm: shared memory is polled in the same call). */
static inline bool cx_poll_skip_due(cx_poll_skip_t *p, int max, bool shm)
{
    if (max == 0 || !shm)
        return true;
    int skipped = CX_PS_LOAD_(p->skipped);
    if (!CX_PS_LOAD_(p->shm_busy) || CX_PS_LOAD_(p->nm_busy) || skipped >= max) {
        if (skipped)
            CX_PS_STORE_(p->skipped, 0);
        return true;
    }
    CX_PS_STORE_(p->skipped, skipped + 1);
    CX_PS_STORE_(p->skipped_total, CX_PS_LOAD_(p->skipped_total) + 1);
    return false;
}

/* A transport's poll found work. */
static inline void cx_poll_skip_event(atomic_int *events)
{
    CX_PS_STORE_(*events, CX_PS_LOAD_(*events) + 1);
}

/* Around one transport's poll: the event count before it, then whether the
 * poll moved it. */
static inline int cx_poll_skip_mark(atomic_int *events)
{
    return CX_PS_LOAD_(*events);
}

static inline void cx_poll_skip_done(atomic_int *events, int mark, atomic_int *busy)
{
    int now = CX_PS_LOAD_(*events) != mark;
    if (CX_PS_LOAD_(*busy) != now)
        CX_PS_STORE_(*busy, now);
}

#endif /* CX_POLL_SKIP_H_INCLUDED */
