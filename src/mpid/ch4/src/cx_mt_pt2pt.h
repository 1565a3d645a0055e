/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 */
/* The point-to-point entry points of the thread-safety models, included by
 * ch4_send.h and ch4_recv.h after MPICH's own issue functions (renamed
 * *_direct).  MPICH's model stays inline and costs one test; so do the
 * uncontended cases of LockQ and CSync, which one thread always takes.
 * Everything else goes out of line (cx_mt_issue.c). */
#include "cx_mt.h"

#ifndef CX_MT_PT2PT_FAST_DEFINED
#define CX_MT_PT2PT_FAST_DEFINED
/* What the inline path holds between MPIDI_CX_fast_enter and _exit. */
typedef struct {
    int vci;                    /* -1: nothing (MPICH's model) */
    cx_dsm_thread_t *csync;     /* CSync: this thread heads the combining queue */
} MPIDI_CX_held_t;

#define MPIDI_CX_HELD_NONE { -1, NULL }

/* LockQ: the VCI's try-lock taken and its queue empty; CSync: its combining
 * queue empty, so this thread heads it.  False: the out-of-line path decides
 * (run the queue first, queue behind it, announce the operation). */
MPL_STATIC_INLINE_PREFIX bool MPIDI_CX_fast_enter(int vci, MPIDI_CX_held_t * held)
{
    held->vci = vci;
    if (MPIDI_CX_MT == MPIDI_CX_MT_LOCKQ)
        return MPIDI_CX_lockq_fast_enter(vci);
    if (MPIDI_CX_MT == MPIDI_CX_MT_CSYNC) {
        held->csync = MPIDI_CX_csync_fast_enter(vci);
        return held->csync != NULL;
    }
    return false;
}

MPL_STATIC_INLINE_PREFIX void MPIDI_CX_fast_exit(const MPIDI_CX_held_t * held)
{
    if (held->vci < 0)
        return;
    if (held->csync)
        MPIDI_CX_csync_fast_exit(held->vci, held->csync);
    else
        MPIDI_CX_lockq_fast_exit(held->vci);
}
#endif /* CX_MT_PT2PT_FAST_DEFINED */

/* Each entry point: enter (MPICH's model: nothing), the direct call (its
 * only call site, so it stays inlined as in MPICH), exit. */
#if defined(CH4_SEND_H_INCLUDED) && !defined(CX_MT_SEND_DEFINED)
#define CX_MT_SEND_DEFINED
MPL_STATIC_INLINE_PREFIX int MPIDI_isend(const void *buf, MPI_Aint count, MPI_Datatype datatype,
                                         int rank, int tag, MPIR_Comm * comm, int context_offset,
                                         MPIDI_av_entry_t * av, MPIR_Request ** req)
{
    MPIDI_CX_held_t held = MPIDI_CX_HELD_NONE;
    if (!MPIDI_CX_USE_DIRECT() &&
        !MPIDI_CX_fast_enter(MPIDI_CX_send_vci(comm, rank, tag), &held))
        return MPIDI_CX_isend(buf, count, datatype, rank, tag, comm, context_offset, av, req);
    int mpi_errno = MPIDI_isend_direct(buf, count, datatype, rank, tag, comm, context_offset,
                                       av, req);
    MPIDI_CX_fast_exit(&held);
    return mpi_errno;
}

MPL_STATIC_INLINE_PREFIX int MPIDI_issend(const void *buf, MPI_Aint count, MPI_Datatype datatype,
                                          int rank, int tag, MPIR_Comm * comm, int context_offset,
                                          MPIDI_av_entry_t * av, MPIR_Request ** req)
{
    MPIDI_CX_held_t held = MPIDI_CX_HELD_NONE;
    if (!MPIDI_CX_USE_DIRECT() &&
        !MPIDI_CX_fast_enter(MPIDI_CX_send_vci(comm, rank, tag), &held))
        return MPIDI_CX_issend(buf, count, datatype, rank, tag, comm, context_offset, av, req);
    int mpi_errno = MPIDI_issend_direct(buf, count, datatype, rank, tag, comm, context_offset,
                                        av, req);
    MPIDI_CX_fast_exit(&held);
    return mpi_errno;
}
#endif /* CH4_SEND_H_INCLUDED */

#if defined(CH4_RECV_H_INCLUDED) && !defined(CX_MT_RECV_DEFINED)
#define CX_MT_RECV_DEFINED
MPL_STATIC_INLINE_PREFIX int MPIDI_irecv(void *buf, MPI_Aint count, MPI_Datatype datatype,
                                         int rank, int tag, MPIR_Comm * comm, int context_offset,
                                         MPIDI_av_entry_t * av, MPIR_Request ** req)
{
    MPIDI_CX_held_t held = MPIDI_CX_HELD_NONE;
    if (!MPIDI_CX_USE_DIRECT() &&
        !MPIDI_CX_fast_enter(MPIDI_CX_recv_vci(comm, rank, tag), &held))
        return MPIDI_CX_irecv(buf, count, datatype, rank, tag, comm, context_offset, av, req);
    int mpi_errno = MPIDI_irecv_direct(buf, count, datatype, rank, tag, comm, context_offset,
                                       av, req);
    MPIDI_CX_fast_exit(&held);
    return mpi_errno;
}
#endif /* CH4_RECV_H_INCLUDED */
