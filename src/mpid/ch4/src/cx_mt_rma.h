/*
 * MPICH-CX: the one-sided entry points of the thread-safety models (see
 * cx_mt.h).  Included by ch4_rma.h after MPICH's own functions, renamed
 * *_direct; the other models' paths are out of line (cx_mt.c).
 */
#ifndef CX_MT_RMA_H_INCLUDED
#define CX_MT_RMA_H_INCLUDED

#include "cx_mt.h"

MPL_STATIC_INLINE_PREFIX int MPIDI_put(const void *origin_addr, int origin_count,
                                       MPI_Datatype origin_datatype, int target_rank,
                                       MPI_Aint target_disp, int target_count,
                                       MPI_Datatype target_datatype, MPIR_Win * win)
{
    if (MPIDI_CX_USE_DIRECT())
        return MPIDI_put_direct(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win);
    return MPIDI_CX_put(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_get(void *origin_addr, int origin_count,
                                       MPI_Datatype origin_datatype, int target_rank,
                                       MPI_Aint target_disp, int target_count,
                                       MPI_Datatype target_datatype, MPIR_Win * win)
{
    if (MPIDI_CX_USE_DIRECT())
        return MPIDI_get_direct(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win);
    return MPIDI_CX_get(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_accumulate(const void *origin_addr, int origin_count,
                                              MPI_Datatype origin_datatype, int target_rank,
                                              MPI_Aint target_disp, int target_count,
                                              MPI_Datatype target_datatype, MPI_Op op,
                                              MPIR_Win * win)
{
    if (MPIDI_CX_USE_DIRECT())
        return MPIDI_accumulate_direct(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, op, win);
    return MPIDI_CX_accumulate(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, op, win);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_get_accumulate(const void *origin_addr, int origin_count,
                                                  MPI_Datatype origin_datatype, void *result_addr,
                                                  int result_count, MPI_Datatype result_datatype,
                                                  int target_rank, MPI_Aint target_disp,
                                                  int target_count, MPI_Datatype target_datatype,
                                                  MPI_Op op, MPIR_Win * win)
{
    if (MPIDI_CX_USE_DIRECT())
        return MPIDI_get_accumulate_direct(origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype, target_rank, target_disp, target_count, target_datatype, op, win);
    return MPIDI_CX_get_accumulate(origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype, target_rank, target_disp, target_count, target_datatype, op, win);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_fetch_and_op(const void *origin_addr, void *result_addr,
                                                MPI_Datatype datatype, int target_rank,
                                                MPI_Aint target_disp, MPI_Op op, MPIR_Win * win)
{
    if (MPIDI_CX_USE_DIRECT())
        return MPIDI_fetch_and_op_direct(origin_addr, result_addr, datatype, target_rank, target_disp, op, win);
    return MPIDI_CX_fetch_and_op(origin_addr, result_addr, datatype, target_rank, target_disp, op, win);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_compare_and_swap(const void *origin_addr,
                                                    const void *compare_addr, void *result_addr,
                                                    MPI_Datatype datatype, int target_rank,
                                                    MPI_Aint target_disp, MPIR_Win * win)
{
    if (MPIDI_CX_USE_DIRECT())
        return MPIDI_compare_and_swap_direct(origin_addr, compare_addr, result_addr, datatype, target_rank, target_disp, win);
    return MPIDI_CX_compare_and_swap(origin_addr, compare_addr, result_addr, datatype, target_rank, target_disp, win);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_rput(const void *origin_addr, int origin_count,
                                        MPI_Datatype origin_datatype, int target_rank,
                                        MPI_Aint target_disp, int target_count,
                                        MPI_Datatype target_datatype, MPIR_Win * win,
                                        MPIR_Request ** request)
{
    if (MPIDI_CX_USE_DIRECT())
        return MPIDI_rput_direct(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win, request);
    return MPIDI_CX_rput(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win, request);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_rget(void *origin_addr, int origin_count,
                                        MPI_Datatype origin_datatype, int target_rank,
                                        MPI_Aint target_disp, int target_count,
                                        MPI_Datatype target_datatype, MPIR_Win * win,
                                        MPIR_Request ** request)
{
    if (MPIDI_CX_USE_DIRECT())
        return MPIDI_rget_direct(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win, request);
    return MPIDI_CX_rget(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win, request);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_raccumulate(const void *origin_addr, int origin_count,
                                               MPI_Datatype origin_datatype, int target_rank,
                                               MPI_Aint target_disp, int target_count,
                                               MPI_Datatype target_datatype, MPI_Op op,
                                               MPIR_Win * win, MPIR_Request ** request)
{
    if (MPIDI_CX_USE_DIRECT())
        return MPIDI_raccumulate_direct(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, op, win, request);
    return MPIDI_CX_raccumulate(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, op, win, request);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_rget_accumulate(const void *origin_addr, int origin_count,
                                                   MPI_Datatype origin_datatype,
                                                   void *result_addr, int result_count,
                                                   MPI_Datatype result_datatype, int target_rank,
                                                   MPI_Aint target_disp, int target_count,
                                                   MPI_Datatype target_datatype, MPI_Op op,
                                                   MPIR_Win * win, MPIR_Request ** request)
{
    if (MPIDI_CX_USE_DIRECT())
        return MPIDI_rget_accumulate_direct(origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype, target_rank, target_disp, target_count, target_datatype, op, win, request);
    return MPIDI_CX_rget_accumulate(origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype, target_rank, target_disp, target_count, target_datatype, op, win, request);
}

#endif /* CX_MT_RMA_H_INCLUDED */
