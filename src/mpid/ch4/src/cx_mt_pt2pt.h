/*
 * MPICH-CX: the point-to-point entry points of the thread-safety models (see
 * cx_mt.h).  Included by ch4_send.h and ch4_recv.h after MPICH's own issue
 * functions, renamed *_direct.  MPICH's model stays inline and costs one
 * test; so do the uncontended cases of LockQ (try-lock, empty queue,
 * issue) and CSync (empty combining queue, issue), which one thread always
 * takes.  Everything else is out of line (cx_mt.c).
 */
#include "cx_mt.h"

/* MPICH's path, or the uncontended one of LockQ (try-lock taken, queue
 * empty) or CSync (combining queue empty, so this thread heads it): the
 * direct issue function has one call site, so it stays inlined as in MPICH;
 * `held_vci` says whether to leave LockQ's section or CSync's queue
 * afterwards.  Every other case goes out of line. */
#ifndef MPIDI_CX_ISSUE_INLINE
#define MPIDI_CX_ISSUE_INLINE(vci_expr_, direct_call_, cx_call_)        \
    do {                                                                \
        int held_vci = -1;                                              \
        cx_dsm_thread_t *csync_ = NULL;                                 \
        if (!MPIDI_CX_USE_DIRECT()) {                                   \
            if (MPIDI_CX_MT == MPIDI_CX_MT_LOCKQ) {                     \
                held_vci = (vci_expr_);                                 \
                if (!MPIDI_CX_lockq_fast_enter(held_vci))               \
                    return cx_call_;                                    \
            } else if (MPIDI_CX_MT == MPIDI_CX_MT_CSYNC) {              \
                held_vci = (vci_expr_);                                 \
                csync_ = MPIDI_CX_csync_fast_enter(held_vci);           \
                if (!csync_)                                            \
                    return cx_call_;                                    \
            } else {                                                    \
                return cx_call_;                                        \
            }                                                           \
        }                                                               \
        int err_ = direct_call_;                                        \
        if (held_vci >= 0) {                                            \
            if (csync_)                                                 \
                MPIDI_CX_csync_fast_exit(held_vci, csync_);             \
            else                                                        \
                MPIDI_CX_lockq_fast_exit(held_vci);                     \
        }                                                               \
        return err_;                                                    \
    } while (0)
#endif

#if defined(CH4_SEND_H_INCLUDED) && !defined(CX_MT_SEND_DEFINED)
#define CX_MT_SEND_DEFINED
MPL_STATIC_INLINE_PREFIX int MPIDI_isend(const void *buf, MPI_Aint count, MPI_Datatype datatype,
                                         int rank, int tag, MPIR_Comm * comm, int context_offset,
                                         MPIDI_av_entry_t * av, MPIR_Request ** req)
{
    MPIDI_CX_ISSUE_INLINE(MPIDI_CX_send_vci(comm, rank, tag),
                          MPIDI_isend_direct(buf, count, datatype, rank, tag, comm,
                                             context_offset, av, req),
                          MPIDI_CX_isend(buf, count, datatype, rank, tag, comm,
                                         context_offset, av, req));
}

MPL_STATIC_INLINE_PREFIX int MPIDI_issend(const void *buf, MPI_Aint count, MPI_Datatype datatype,
                                          int rank, int tag, MPIR_Comm * comm, int context_offset,
                                          MPIDI_av_entry_t * av, MPIR_Request ** req)
{
    MPIDI_CX_ISSUE_INLINE(MPIDI_CX_send_vci(comm, rank, tag),
                          MPIDI_issend_direct(buf, count, datatype, rank, tag, comm,
                                              context_offset, av, req),
                          MPIDI_CX_issend(buf, count, datatype, rank, tag, comm,
                                          context_offset, av, req));
}
#endif /* CH4_SEND_H_INCLUDED */

#if defined(CH4_RECV_H_INCLUDED) && !defined(CX_MT_RECV_DEFINED)
#define CX_MT_RECV_DEFINED
MPL_STATIC_INLINE_PREFIX int MPIDI_irecv(void *buf, MPI_Aint count, MPI_Datatype datatype,
                                         int rank, int tag, MPIR_Comm * comm, int context_offset,
                                         MPIDI_av_entry_t * av, MPIR_Request ** req)
{
    MPIDI_CX_ISSUE_INLINE(MPIDI_CX_recv_vci(comm, rank, tag),
                          MPIDI_irecv_direct(buf, count, datatype, rank, tag, comm,
                                             context_offset, av, req),
                          MPIDI_CX_irecv(buf, count, datatype, rank, tag, comm,
                                         context_offset, av, req));
}
#endif /* CH4_RECV_H_INCLUDED */
