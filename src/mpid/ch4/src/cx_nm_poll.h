/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 */
/* Netmod polls skipped while shared memory delivers or the netmod is quiet
 * (MPIR_CVAR_CH4_CX_NM_POLL_SKIP, _QUIET, _PAUSE; the rule is cx_poll_skip.h,
 * the design doc/design/nm-poll-skip.md).  Hooks: the progress body
 * (ch4_progress.h) marks and records both polls; POSIX eager reception, OFI's
 * completion-queue reads and deferred sends, and UCX's worker progress
 * report events. */
#ifndef CX_NM_POLL_H_INCLUDED
#define CX_NM_POLL_H_INCLUDED

#include "cx_poll_skip.h"

/* Indexed by VCI: POSIX's VSI and OFI's and UCX's VNI are the VCI (their
 * counts are n_vcis). */
extern cx_poll_skip_t MPIDI_CX_nm_poll[MPIDI_CH4_MAX_VCIS];
/* MPIR_CVAR_CH4_CX_NM_POLL_SKIP, and _QUIET in nanoseconds, as read at
 * MPI_Init; 0 (never skip) before. */
extern int MPIDI_CX_nm_poll_max_skip;
extern long long MPIDI_CX_nm_poll_quiet_ns;
/* MPIR_CVAR_CH4_CX_NM_POLL_PAUSE as read at MPI_Init. */
extern int MPIDI_CX_nm_poll_pause;
long long MPIDI_CX_nm_poll_clock(void);

int MPIDI_CX_nm_poll_init(void);
void MPIDI_CX_nm_poll_register_pvars(void);

#define MPIDI_CX_nm_poll_due(vci_, shm_) \
    cx_poll_skip_due(&MPIDI_CX_nm_poll[vci_], MPIDI_CX_nm_poll_max_skip, (shm_) != 0)

/* Around a transport's poll in the progress body; free when skipping is off. */
#define MPIDI_CX_nm_poll_mark(vci_, which_) \
    (MPIDI_CX_nm_poll_max_skip ? cx_poll_skip_mark(&MPIDI_CX_nm_poll[vci_].which_##_events) : 0)
#define MPIDI_CX_nm_poll_done(vci_, which_, mark_) MPIDI_CX_nm_poll_done_##which_(vci_, mark_)
#define MPIDI_CX_nm_poll_done_shm(vci_, mark_)                          \
    do {                                                                \
        if (MPIDI_CX_nm_poll_max_skip)                                  \
            cx_poll_skip_done(&MPIDI_CX_nm_poll[vci_].shm_events, (mark_), \
                              &MPIDI_CX_nm_poll[vci_].shm_busy);        \
    } while (0)
#define MPIDI_CX_nm_poll_done_nm(vci_, mark_)                           \
    do {                                                                \
        if (MPIDI_CX_nm_poll_max_skip)                                  \
            cx_poll_skip_nm_done(&MPIDI_CX_nm_poll[vci_], (mark_),  \
                                 MPIDI_CX_nm_poll_quiet_ns, MPIDI_CX_nm_poll_clock); \
    } while (0)

/* At the end of a progress call that skipped the netmod (cx_poll_skip.h),
 * outside the VCI lock. */
#define MPIDI_CX_nm_poll_skipped(vci_) \
    cx_poll_skip_idle_pause(&MPIDI_CX_nm_poll[vci_], MPIDI_CX_nm_poll_pause)

/* A transport found work on vci (its VSI or VNI). */
#define MPIDI_CX_nm_poll_event(vci_, which_)                            \
    do {                                                                \
        if (MPIDI_CX_nm_poll_max_skip)                                  \
            cx_poll_skip_event(&MPIDI_CX_nm_poll[vci_].which_##_events); \
    } while (0)
#define MPIDI_CX_nm_poll_shm_event(vsi_) MPIDI_CX_nm_poll_event(vsi_, shm)
#define MPIDI_CX_nm_poll_nm_event(vni_) MPIDI_CX_nm_poll_event(vni_, nm)

#endif /* CX_NM_POLL_H_INCLUDED */
