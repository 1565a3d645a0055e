/*
 * MPICH-CX: the one-sided issue paths of the LockQ and CSync models (see
 * cx_mt.h).  Included by ch4_rma.h after MPICH's own functions, renamed
 * *_direct.  Operations without a request are queued like sends (their
 * completion is the window's synchronization, which drains the queue first,
 * MPIDI_CX_win_drain); LockQ issues the request-based ones under the VCI
 * lock, which also runs the queue first, so accumulates stay ordered.
 */
#ifndef CX_MT_RMA_H_INCLUDED
#define CX_MT_RMA_H_INCLUDED

#include "cx_mt_pt2pt.h"

#define MPIDI_CX_RMA_DESCR(op_, vci_, ...) \
    ((MPIDI_CX_descr_t) { .op = (op_), .vci = (vci_), .rma = { __VA_ARGS__ } })

/* LockQ for operations with a request: blocking entry, the queue run to
 * its end (they cannot be queued themselves), then issue. */
#define MPIDI_CX_ISSUE_LOCKED(vci_, direct_call_, descr_, req_)          \
    do {                                                                \
        if (MPIDI_CX_MT == MPIDI_CX_MT_LOCKQ) {                         \
            MPIDU_CX_cs_enter(&MPIDI_VCI(vci_).lock);                   \
            MPIDI_CX_drain_all(vci_);                                   \
            int err_ = direct_call_;                                    \
            MPIDU_CX_cs_exit(&MPIDI_VCI(vci_).lock);                    \
            return err_;                                                \
        } else {                                                        \
            MPIDI_CX_descr_t d_ = descr_;                               \
            return MPIDI_CX_csync_issue(&d_, req_);                     \
        }                                                               \
    } while (0)

MPL_STATIC_INLINE_PREFIX int MPIDI_put(const void *origin_addr, int origin_count,
                                       MPI_Datatype origin_datatype, int target_rank,
                                       MPI_Aint target_disp, int target_count,
                                       MPI_Datatype target_datatype, MPIR_Win * win)
{
#define ARGS_ origin_addr, origin_count, origin_datatype, target_rank, target_disp, \
        target_count, target_datatype, win
    if (MPIDI_CX_USE_DIRECT())
        return MPIDI_put_direct(ARGS_);
    int vci = MPIDI_CX_win_vci(win);
    MPIDI_CX_ISSUE(vci, MPIDI_put_direct(ARGS_),
                   MPIDI_CX_RMA_DESCR(MPIDI_CX_OP_PUT, vci,.origin_addr = origin_addr,
                                      .origin_count = origin_count,
                                      .origin_datatype = origin_datatype,
                                      .target_rank = target_rank,.target_disp = target_disp,
                                      .target_count = target_count,
                                      .target_datatype = target_datatype,.win = win), NULL);
#undef ARGS_
}

MPL_STATIC_INLINE_PREFIX int MPIDI_get(void *origin_addr, int origin_count,
                                       MPI_Datatype origin_datatype, int target_rank,
                                       MPI_Aint target_disp, int target_count,
                                       MPI_Datatype target_datatype, MPIR_Win * win)
{
#define ARGS_ origin_addr, origin_count, origin_datatype, target_rank, target_disp, \
        target_count, target_datatype, win
    if (MPIDI_CX_USE_DIRECT())
        return MPIDI_get_direct(ARGS_);
    int vci = MPIDI_CX_win_vci(win);
    MPIDI_CX_ISSUE(vci, MPIDI_get_direct(ARGS_),
                   MPIDI_CX_RMA_DESCR(MPIDI_CX_OP_GET, vci,.result_addr = origin_addr,
                                      .origin_count = origin_count,
                                      .origin_datatype = origin_datatype,
                                      .target_rank = target_rank,.target_disp = target_disp,
                                      .target_count = target_count,
                                      .target_datatype = target_datatype,.win = win), NULL);
#undef ARGS_
}

MPL_STATIC_INLINE_PREFIX int MPIDI_accumulate(const void *origin_addr, int origin_count,
                                              MPI_Datatype origin_datatype, int target_rank,
                                              MPI_Aint target_disp, int target_count,
                                              MPI_Datatype target_datatype, MPI_Op op,
                                              MPIR_Win * win)
{
#define ARGS_ origin_addr, origin_count, origin_datatype, target_rank, target_disp, \
        target_count, target_datatype, op, win
    if (MPIDI_CX_USE_DIRECT())
        return MPIDI_accumulate_direct(ARGS_);
    int vci = MPIDI_CX_win_vci(win);
    MPIDI_CX_ISSUE(vci, MPIDI_accumulate_direct(ARGS_),
                   MPIDI_CX_RMA_DESCR(MPIDI_CX_OP_ACC, vci,.origin_addr = origin_addr,
                                      .origin_count = origin_count,
                                      .origin_datatype = origin_datatype,
                                      .target_rank = target_rank,.target_disp = target_disp,
                                      .target_count = target_count,
                                      .target_datatype = target_datatype,.op = op,.win = win),
                   NULL);
#undef ARGS_
}

MPL_STATIC_INLINE_PREFIX int MPIDI_get_accumulate(const void *origin_addr, int origin_count,
                                                  MPI_Datatype origin_datatype, void *result_addr,
                                                  int result_count, MPI_Datatype result_datatype,
                                                  int target_rank, MPI_Aint target_disp,
                                                  int target_count, MPI_Datatype target_datatype,
                                                  MPI_Op op, MPIR_Win * win)
{
#define ARGS_ origin_addr, origin_count, origin_datatype, result_addr, result_count, \
        result_datatype, target_rank, target_disp, target_count, target_datatype, op, win
    if (MPIDI_CX_USE_DIRECT())
        return MPIDI_get_accumulate_direct(ARGS_);
    int vci = MPIDI_CX_win_vci(win);
    MPIDI_CX_ISSUE(vci, MPIDI_get_accumulate_direct(ARGS_),
                   MPIDI_CX_RMA_DESCR(MPIDI_CX_OP_GET_ACC, vci,.origin_addr = origin_addr,
                                      .origin_count = origin_count,
                                      .origin_datatype = origin_datatype,
                                      .result_addr = result_addr,.result_count = result_count,
                                      .result_datatype = result_datatype,
                                      .target_rank = target_rank,.target_disp = target_disp,
                                      .target_count = target_count,
                                      .target_datatype = target_datatype,.op = op,.win = win),
                   NULL);
#undef ARGS_
}

MPL_STATIC_INLINE_PREFIX int MPIDI_fetch_and_op(const void *origin_addr, void *result_addr,
                                                MPI_Datatype datatype, int target_rank,
                                                MPI_Aint target_disp, MPI_Op op, MPIR_Win * win)
{
#define ARGS_ origin_addr, result_addr, datatype, target_rank, target_disp, op, win
    if (MPIDI_CX_USE_DIRECT())
        return MPIDI_fetch_and_op_direct(ARGS_);
    int vci = MPIDI_CX_win_vci(win);
    MPIDI_CX_ISSUE(vci, MPIDI_fetch_and_op_direct(ARGS_),
                   MPIDI_CX_RMA_DESCR(MPIDI_CX_OP_FETCH_OP, vci,.origin_addr = origin_addr,
                                      .result_addr = result_addr,.origin_datatype = datatype,
                                      .target_rank = target_rank,.target_disp = target_disp,
                                      .op = op,.win = win), NULL);
#undef ARGS_
}

MPL_STATIC_INLINE_PREFIX int MPIDI_compare_and_swap(const void *origin_addr,
                                                    const void *compare_addr, void *result_addr,
                                                    MPI_Datatype datatype, int target_rank,
                                                    MPI_Aint target_disp, MPIR_Win * win)
{
#define ARGS_ origin_addr, compare_addr, result_addr, datatype, target_rank, target_disp, win
    if (MPIDI_CX_USE_DIRECT())
        return MPIDI_compare_and_swap_direct(ARGS_);
    int vci = MPIDI_CX_win_vci(win);
    MPIDI_CX_ISSUE(vci, MPIDI_compare_and_swap_direct(ARGS_),
                   MPIDI_CX_RMA_DESCR(MPIDI_CX_OP_CAS, vci,.origin_addr = origin_addr,
                                      .compare_addr = compare_addr,.result_addr = result_addr,
                                      .origin_datatype = datatype,.target_rank = target_rank,
                                      .target_disp = target_disp,.win = win), NULL);
#undef ARGS_
}

MPL_STATIC_INLINE_PREFIX int MPIDI_rput(const void *origin_addr, int origin_count,
                                        MPI_Datatype origin_datatype, int target_rank,
                                        MPI_Aint target_disp, int target_count,
                                        MPI_Datatype target_datatype, MPIR_Win * win,
                                        MPIR_Request ** request)
{
#define ARGS_ origin_addr, origin_count, origin_datatype, target_rank, target_disp, \
        target_count, target_datatype, win, request
    if (MPIDI_CX_USE_DIRECT())
        return MPIDI_rput_direct(ARGS_);
    int vci = MPIDI_CX_win_vci(win);
    MPIDI_CX_ISSUE_LOCKED(vci, MPIDI_rput_direct(ARGS_),
                          MPIDI_CX_RMA_DESCR(MPIDI_CX_OP_RPUT, vci,.origin_addr = origin_addr,
                                             .origin_count = origin_count,
                                             .origin_datatype = origin_datatype,
                                             .target_rank = target_rank,
                                             .target_disp = target_disp,
                                             .target_count = target_count,
                                             .target_datatype = target_datatype,.win = win),
                          request);
#undef ARGS_
}

MPL_STATIC_INLINE_PREFIX int MPIDI_rget(void *origin_addr, int origin_count,
                                        MPI_Datatype origin_datatype, int target_rank,
                                        MPI_Aint target_disp, int target_count,
                                        MPI_Datatype target_datatype, MPIR_Win * win,
                                        MPIR_Request ** request)
{
#define ARGS_ origin_addr, origin_count, origin_datatype, target_rank, target_disp, \
        target_count, target_datatype, win, request
    if (MPIDI_CX_USE_DIRECT())
        return MPIDI_rget_direct(ARGS_);
    int vci = MPIDI_CX_win_vci(win);
    MPIDI_CX_ISSUE_LOCKED(vci, MPIDI_rget_direct(ARGS_),
                          MPIDI_CX_RMA_DESCR(MPIDI_CX_OP_RGET, vci,.result_addr = origin_addr,
                                             .origin_count = origin_count,
                                             .origin_datatype = origin_datatype,
                                             .target_rank = target_rank,
                                             .target_disp = target_disp,
                                             .target_count = target_count,
                                             .target_datatype = target_datatype,.win = win),
                          request);
#undef ARGS_
}

MPL_STATIC_INLINE_PREFIX int MPIDI_raccumulate(const void *origin_addr, int origin_count,
                                               MPI_Datatype origin_datatype, int target_rank,
                                               MPI_Aint target_disp, int target_count,
                                               MPI_Datatype target_datatype, MPI_Op op,
                                               MPIR_Win * win, MPIR_Request ** request)
{
#define ARGS_ origin_addr, origin_count, origin_datatype, target_rank, target_disp, \
        target_count, target_datatype, op, win, request
    if (MPIDI_CX_USE_DIRECT())
        return MPIDI_raccumulate_direct(ARGS_);
    int vci = MPIDI_CX_win_vci(win);
    MPIDI_CX_ISSUE_LOCKED(vci, MPIDI_raccumulate_direct(ARGS_),
                          MPIDI_CX_RMA_DESCR(MPIDI_CX_OP_RACC, vci,.origin_addr = origin_addr,
                                             .origin_count = origin_count,
                                             .origin_datatype = origin_datatype,
                                             .target_rank = target_rank,
                                             .target_disp = target_disp,
                                             .target_count = target_count,
                                             .target_datatype = target_datatype,.op = op,
                                             .win = win), request);
#undef ARGS_
}

MPL_STATIC_INLINE_PREFIX int MPIDI_rget_accumulate(const void *origin_addr, int origin_count,
                                                   MPI_Datatype origin_datatype,
                                                   void *result_addr, int result_count,
                                                   MPI_Datatype result_datatype, int target_rank,
                                                   MPI_Aint target_disp, int target_count,
                                                   MPI_Datatype target_datatype, MPI_Op op,
                                                   MPIR_Win * win, MPIR_Request ** request)
{
#define ARGS_ origin_addr, origin_count, origin_datatype, result_addr, result_count, \
        result_datatype, target_rank, target_disp, target_count, target_datatype, op, win, request
    if (MPIDI_CX_USE_DIRECT())
        return MPIDI_rget_accumulate_direct(ARGS_);
    int vci = MPIDI_CX_win_vci(win);
    MPIDI_CX_ISSUE_LOCKED(vci, MPIDI_rget_accumulate_direct(ARGS_),
                          MPIDI_CX_RMA_DESCR(MPIDI_CX_OP_RGET_ACC, vci,
                                             .origin_addr = origin_addr,
                                             .origin_count = origin_count,
                                             .origin_datatype = origin_datatype,
                                             .result_addr = result_addr,
                                             .result_count = result_count,
                                             .result_datatype = result_datatype,
                                             .target_rank = target_rank,
                                             .target_disp = target_disp,
                                             .target_count = target_count,
                                             .target_datatype = target_datatype,.op = op,
                                             .win = win), request);
#undef ARGS_
}

#endif /* CX_MT_RMA_H_INCLUDED */
