/*
 * MPICH-CX: the point-to-point entry points of the thread-safety models (see
 * cx_mt.h).  Included by ch4_send.h and ch4_recv.h after MPICH's own issue
 * functions, renamed *_direct.  MPICH's model stays inline and costs one
 * test; the other models' paths are out of line (cx_mt.c), so they do
 * not bloat the direct path.
 */
#include "cx_mt.h"

#if defined(CH4_SEND_H_INCLUDED) && !defined(CX_MT_SEND_DEFINED)
#define CX_MT_SEND_DEFINED
MPL_STATIC_INLINE_PREFIX int MPIDI_isend(const void *buf, MPI_Aint count, MPI_Datatype datatype,
                                         int rank, int tag, MPIR_Comm * comm, int context_offset,
                                         MPIDI_av_entry_t * av, MPIR_Request ** req)
{
    if (MPIDI_CX_USE_DIRECT())
        return MPIDI_isend_direct(buf, count, datatype, rank, tag, comm, context_offset, av, req);
    return MPIDI_CX_isend(buf, count, datatype, rank, tag, comm, context_offset, av, req);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_issend(const void *buf, MPI_Aint count, MPI_Datatype datatype,
                                          int rank, int tag, MPIR_Comm * comm, int context_offset,
                                          MPIDI_av_entry_t * av, MPIR_Request ** req)
{
    if (MPIDI_CX_USE_DIRECT())
        return MPIDI_issend_direct(buf, count, datatype, rank, tag, comm, context_offset, av, req);
    return MPIDI_CX_issend(buf, count, datatype, rank, tag, comm, context_offset, av, req);
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
    return MPIDI_CX_irecv(buf, count, datatype, rank, tag, comm, context_offset, av, req);
}
#endif /* CH4_RECV_H_INCLUDED */
