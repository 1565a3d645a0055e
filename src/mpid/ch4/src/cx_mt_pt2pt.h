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

/* Each entry point: enter (MPICH's model: nothing; LockQ: the VCI's
 * try-lock with its queue empty; CSync: the head of the VCI's empty combining
 * queue; anything else goes out of line), the direct call (its only call
 * site, so it stays inlined as in MPICH), exit. */
#if defined(CH4_SEND_H_INCLUDED) && !defined(CX_MT_SEND_DEFINED)
#define CX_MT_SEND_DEFINED
MPL_STATIC_INLINE_PREFIX int MPIDI_isend(const void *buf, MPI_Aint count, MPI_Datatype datatype,
                                         int rank, int tag, MPIR_Comm * comm, int context_offset,
                                         MPIDI_av_entry_t * av, MPIR_Request ** req)
{
    int held_vci = -1;          /* LockQ's or CSync's VCI, entered inline */
    cx_dsm_thread_t *csync = NULL;
    if (!MPIDI_CX_USE_DIRECT()) {
        if (MPIDI_CX_MT == MPIDI_CX_MT_LOCKQ) {
            held_vci = MPIDI_CX_send_vci(comm, rank, tag);
            if (!MPIDI_CX_lockq_fast_enter(held_vci))
                return MPIDI_CX_isend(buf, count, datatype, rank, tag, comm, context_offset, av,
                                      req);
        } else if (MPIDI_CX_MT == MPIDI_CX_MT_CSYNC) {
            held_vci = MPIDI_CX_send_vci(comm, rank, tag);
            csync = MPIDI_CX_csync_fast_enter(held_vci);
            if (!csync)
                return MPIDI_CX_isend(buf, count, datatype, rank, tag, comm, context_offset, av,
                                      req);
        } else {
            return MPIDI_CX_isend(buf, count, datatype, rank, tag, comm, context_offset, av, req);
        }
    }
    int mpi_errno = MPIDI_isend_direct(buf, count, datatype, rank, tag, comm, context_offset,
                                       av, req);
    if (held_vci >= 0) {
        if (csync)
            MPIDI_CX_csync_fast_exit(held_vci, csync);
        else
            MPIDI_CX_lockq_fast_exit(held_vci);
    }
    return mpi_errno;
}

MPL_STATIC_INLINE_PREFIX int MPIDI_issend(const void *buf, MPI_Aint count, MPI_Datatype datatype,
                                          int rank, int tag, MPIR_Comm * comm, int context_offset,
                                          MPIDI_av_entry_t * av, MPIR_Request ** req)
{
    int held_vci = -1;          /* LockQ's or CSync's VCI, entered inline */
    cx_dsm_thread_t *csync = NULL;
    if (!MPIDI_CX_USE_DIRECT()) {
        if (MPIDI_CX_MT == MPIDI_CX_MT_LOCKQ) {
            held_vci = MPIDI_CX_send_vci(comm, rank, tag);
            if (!MPIDI_CX_lockq_fast_enter(held_vci))
                return MPIDI_CX_issend(buf, count, datatype, rank, tag, comm, context_offset, av,
                                       req);
        } else if (MPIDI_CX_MT == MPIDI_CX_MT_CSYNC) {
            held_vci = MPIDI_CX_send_vci(comm, rank, tag);
            csync = MPIDI_CX_csync_fast_enter(held_vci);
            if (!csync)
                return MPIDI_CX_issend(buf, count, datatype, rank, tag, comm, context_offset, av,
                                       req);
        } else {
            return MPIDI_CX_issend(buf, count, datatype, rank, tag, comm, context_offset, av, req);
        }
    }
    int mpi_errno = MPIDI_issend_direct(buf, count, datatype, rank, tag, comm, context_offset,
                                        av, req);
    if (held_vci >= 0) {
        if (csync)
            MPIDI_CX_csync_fast_exit(held_vci, csync);
        else
            MPIDI_CX_lockq_fast_exit(held_vci);
    }
    return mpi_errno;
}
#endif /* CH4_SEND_H_INCLUDED */

#if defined(CH4_RECV_H_INCLUDED) && !defined(CX_MT_RECV_DEFINED)
#define CX_MT_RECV_DEFINED
MPL_STATIC_INLINE_PREFIX int MPIDI_irecv(void *buf, MPI_Aint count, MPI_Datatype datatype,
                                         int rank, int tag, MPIR_Comm * comm, int context_offset,
                                         MPIDI_av_entry_t * av, MPIR_Request ** req)
{
    int held_vci = -1;          /* LockQ's or CSync's VCI, entered inline */
    cx_dsm_thread_t *csync = NULL;
    if (!MPIDI_CX_USE_DIRECT()) {
        if (MPIDI_CX_MT == MPIDI_CX_MT_LOCKQ) {
            held_vci = MPIDI_CX_recv_vci(comm, rank, tag);
            if (!MPIDI_CX_lockq_fast_enter(held_vci))
                return MPIDI_CX_irecv(buf, count, datatype, rank, tag, comm, context_offset, av,
                                      req);
        } else if (MPIDI_CX_MT == MPIDI_CX_MT_CSYNC) {
            held_vci = MPIDI_CX_recv_vci(comm, rank, tag);
            csync = MPIDI_CX_csync_fast_enter(held_vci);
            if (!csync)
                return MPIDI_CX_irecv(buf, count, datatype, rank, tag, comm, context_offset, av,
                                      req);
        } else {
            return MPIDI_CX_irecv(buf, count, datatype, rank, tag, comm, context_offset, av, req);
        }
    }
    int mpi_errno = MPIDI_irecv_direct(buf, count, datatype, rank, tag, comm, context_offset,
                                       av, req);
    if (held_vci >= 0) {
        if (csync)
            MPIDI_CX_csync_fast_exit(held_vci, csync);
        else
            MPIDI_CX_lockq_fast_exit(held_vci);
    }
    return mpi_errno;
}
#endif /* CH4_RECV_H_INCLUDED */
