/*
 * MPICH-CX: the point-to-point issue paths of the LockQ and CSync models
 * (see cx_mt.h).  Included by ch4_send.h and ch4_recv.h after MPICH's own
 * issue functions, which are renamed *_direct and run under the VCI lock.
 */
#include "cx_mt.h"

#ifndef CX_MT_ISSUE_DEFINED
#define CX_MT_ISSUE_DEFINED

/* LockQ: issue under the try-lock, or hand the operation to the holder; a
 * holder that left work in the queue (MAX_COMBINE reached, or a producer
 * not yet linked) queues its own operation behind it, to keep the order.
 * CSync: announce it and wait until it ran. */
#define MPIDI_CX_ISSUE(vci_, direct_call_, descr_, req_)                \
    do {                                                                \
        if (MPIDI_CX_MT == MPIDI_CX_MT_LOCKQ) {                         \
            if (MPIDI_CX_issue_tryenter(vci_)) {                        \
                int err_;                                               \
                if (likely(!cx_lockq_pending(MPIDI_CX_global.queues[vci_]))) { \
                    err_ = direct_call_;                                \
                } else {                                                \
                    MPIDI_CX_descr_t d_ = descr_;                       \
                    err_ = MPIDI_CX_lockq_post(&d_, req_, true);        \
                }                                                       \
                MPIDU_CX_cs_exit(&MPIDI_VCI(vci_).lock);                \
                return err_;                                            \
            }                                                           \
            MPIDI_CX_descr_t d_ = descr_;                               \
            return MPIDI_CX_lockq_post(&d_, req_, false);               \
        } else {                                                        \
            MPIDI_CX_descr_t d_ = descr_;                               \
            return MPIDI_CX_csync_issue(&d_, req_);                     \
        }                                                               \
    } while (0)

#define MPIDI_CX_USE_DIRECT() \
    (likely(MPIDI_CX_MT == MPIDI_CX_MT_DIRECT) || !MPIR_ThreadInfo.isThreaded)
#endif /* CX_MT_ISSUE_DEFINED */

#if defined(CH4_SEND_H_INCLUDED) && !defined(CX_MT_SEND_DEFINED)
#define CX_MT_SEND_DEFINED
MPL_STATIC_INLINE_PREFIX int MPIDI_isend(const void *buf, MPI_Aint count, MPI_Datatype datatype,
                                         int rank, int tag, MPIR_Comm * comm, int context_offset,
                                         MPIDI_av_entry_t * av, MPIR_Request ** req)
{
    if (MPIDI_CX_USE_DIRECT())
        return MPIDI_isend_direct(buf, count, datatype, rank, tag, comm, context_offset, av, req);
    int vci = MPIDI_CX_send_vci(comm, rank, tag);
    MPIDI_CX_ISSUE(vci,
                   MPIDI_isend_direct(buf, count, datatype, rank, tag, comm, context_offset, av,
                                      req),
                   MPIDI_CX_DESCR(MPIDI_CX_OP_ISEND, vci, buf, NULL, count, datatype, rank, tag,
                                  comm, context_offset, av), req);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_issend(const void *buf, MPI_Aint count, MPI_Datatype datatype,
                                          int rank, int tag, MPIR_Comm * comm, int context_offset,
                                          MPIDI_av_entry_t * av, MPIR_Request ** req)
{
    if (MPIDI_CX_USE_DIRECT())
        return MPIDI_issend_direct(buf, count, datatype, rank, tag, comm, context_offset, av, req);
    int vci = MPIDI_CX_send_vci(comm, rank, tag);
    MPIDI_CX_ISSUE(vci,
                   MPIDI_issend_direct(buf, count, datatype, rank, tag, comm, context_offset, av,
                                       req),
                   MPIDI_CX_DESCR(MPIDI_CX_OP_ISSEND, vci, buf, NULL, count, datatype, rank, tag,
                                  comm, context_offset, av), req);
}
#endif /* CH4_SEND_H_INCLUDED */

#if defined(CH4_RECV_H_INCLUDED) && !defined(CX_MT_RECV_DEFINED)
#define CX_MT_RECV_DEFINED
MPL_STATIC_INLINE_PREFIX int MPIDI_irecv(void *buf, MPI_Aint count, MPI_Datatype datatype,
                                         int rank, int tag, MPIR_Comm * comm, int context_offset,
                                         MPIDI_av_entry_t * av, MPIR_Request ** req)
{
    if (MPIDI_CX_USE_DIRECT())
        return MPIDI_irecv_direct(buf, count, datatype, rank, tag, comm, context_offset, av, req);
    int vci = MPIDI_CX_recv_vci(comm, rank, tag);
    MPIDI_CX_ISSUE(vci,
                   MPIDI_irecv_direct(buf, count, datatype, rank, tag, comm, context_offset, av,
                                      req),
                   MPIDI_CX_DESCR(MPIDI_CX_OP_IRECV, vci, NULL, buf, count, datatype, rank, tag,
                                  comm, context_offset, av), req);
}
#endif /* CH4_RECV_H_INCLUDED */
