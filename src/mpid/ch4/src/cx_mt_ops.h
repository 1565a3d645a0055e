/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 */
/* The operations the thread-safety models may hand to another thread, one
 * row each; cx_mt.h, cx_mt_rma.h, cx_mt_descr.c and cx_mt_issue.c expand
 * the rows into the descriptor's op codes, MPICH's inline entry points, the
 * out-of-line issue paths and the descriptor's execution.  The columns:
 *   OP      the op code's suffix (MPIDI_CX_OP_<OP>)
 *   name    MPIDI_<name>_direct is MPICH's function, MPIDI_CX_<name> ours
 *   vci     the VCI its transport locks
 *   params  the parameter list, (...)
 *   args    the arguments to pass on, (...)
 *   descr   the descriptor's fields for the arguments (d->rma for one-sided)
 *   dargs   the arguments again, read from descriptor d (one-sided: a = &d->rma)
 *   req     the request the caller gets (NULL: the window's synchronization
 *           completes the operation) */
#ifndef CX_MT_OPS_H_INCLUDED
#define CX_MT_OPS_H_INCLUDED

/* *INDENT-OFF* */
#define MPIDI_CX_PT2PT_PARAMS(buf_qual_) \
    (buf_qual_ void *buf, MPI_Aint count, MPI_Datatype datatype, int rank, int tag, \
     MPIR_Comm * comm, int context_offset, MPIDI_av_entry_t * av, MPIR_Request ** req)
#define MPIDI_CX_PT2PT_ARGS (buf, count, datatype, rank, tag, comm, context_offset, av, req)
#define MPIDI_CX_PT2PT_DESCR(buf_field_) \
    .buf_field_ = buf, .count = count, .datatype = datatype, .rank = rank, .tag = tag, \
    .comm = comm, .context_offset = context_offset, .av = av
#define MPIDI_CX_PT2PT_DARGS(buf_field_) \
    (d->buf_field_, d->count, d->datatype, d->rank, d->tag, d->comm, d->context_offset, d->av, req)

/* Point-to-point: the inline entry points are in cx_mt_pt2pt.h. */
#define MPIDI_CX_PT2PT_OPS(X) \
    X(ISEND, isend, MPIDI_CX_send_vci(comm, rank, tag), MPIDI_CX_PT2PT_PARAMS(const), \
      MPIDI_CX_PT2PT_ARGS, (MPIDI_CX_PT2PT_DESCR(send_buf)), MPIDI_CX_PT2PT_DARGS(send_buf), req) \
    X(ISSEND, issend, MPIDI_CX_send_vci(comm, rank, tag), MPIDI_CX_PT2PT_PARAMS(const), \
      MPIDI_CX_PT2PT_ARGS, (MPIDI_CX_PT2PT_DESCR(send_buf)), MPIDI_CX_PT2PT_DARGS(send_buf), req) \
    X(IRECV, irecv, MPIDI_CX_recv_vci(comm, rank, tag), MPIDI_CX_PT2PT_PARAMS(), \
      MPIDI_CX_PT2PT_ARGS, (MPIDI_CX_PT2PT_DESCR(recv_buf)), MPIDI_CX_PT2PT_DARGS(recv_buf), req)

/* One-sided; the first six complete at the window's synchronization. */
#define MPIDI_CX_RMA_OPS(X) \
    X(PUT, put, MPIDI_CX_win_vci(win), \
      (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, \
       MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPIR_Win * win), \
      (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, \
       target_datatype, win), \
      (.origin_addr = origin_addr, .origin_count = origin_count, \
       .origin_datatype = origin_datatype, .target_rank = target_rank, \
       .target_disp = target_disp, .target_count = target_count, \
       .target_datatype = target_datatype, .win = win), \
      (a->origin_addr, a->origin_count, a->origin_datatype, a->target_rank, a->target_disp, \
       a->target_count, a->target_datatype, a->win), NULL) \
    X(GET, get, MPIDI_CX_win_vci(win), \
      (void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, \
       MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPIR_Win * win), \
      (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, \
       target_datatype, win), \
      (.result_addr = origin_addr, .origin_count = origin_count, \
       .origin_datatype = origin_datatype, .target_rank = target_rank, \
       .target_disp = target_disp, .target_count = target_count, \
       .target_datatype = target_datatype, .win = win), \
      (a->result_addr, a->origin_count, a->origin_datatype, a->target_rank, a->target_disp, \
       a->target_count, a->target_datatype, a->win), NULL) \
    X(ACC, accumulate, MPIDI_CX_win_vci(win), \
      (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, \
       MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, \
       MPIR_Win * win), \
      (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, \
       target_datatype, op, win), \
      (.origin_addr = origin_addr, .origin_count = origin_count, \
       .origin_datatype = origin_datatype, .target_rank = target_rank, \
       .target_disp = target_disp, .target_count = target_count, \
       .target_datatype = target_datatype, .op = op, .win = win), \
      (a->origin_addr, a->origin_count, a->origin_datatype, a->target_rank, a->target_disp, \
       a->target_count, a->target_datatype, a->op, a->win), NULL) \
    X(GET_ACC, get_accumulate, MPIDI_CX_win_vci(win), \
      (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, \
       void *result_addr, int result_count, MPI_Datatype result_datatype, int target_rank, \
       MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, \
       MPIR_Win * win), \
      (origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype, \
       target_rank, target_disp, target_count, target_datatype, op, win), \
      (.origin_addr = origin_addr, .origin_count = origin_count, \
       .origin_datatype = origin_datatype, .result_addr = result_addr, \
       .result_count = result_count, .result_datatype = result_datatype, \
       .target_rank = target_rank, .target_disp = target_disp, .target_count = target_count, \
       .target_datatype = target_datatype, .op = op, .win = win), \
      (a->origin_addr, a->origin_count, a->origin_datatype, a->result_addr, a->result_count, \
       a->result_datatype, a->target_rank, a->target_disp, a->target_count, \
       a->target_datatype, a->op, a->win), NULL) \
    X(FETCH_OP, fetch_and_op, MPIDI_CX_win_vci(win), \
      (const void *origin_addr, void *result_addr, MPI_Datatype datatype, int target_rank, \
       MPI_Aint target_disp, MPI_Op op, MPIR_Win * win), \
      (origin_addr, result_addr, datatype, target_rank, target_disp, op, win), \
      (.origin_addr = origin_addr, .result_addr = result_addr, .origin_datatype = datatype, \
       .target_rank = target_rank, .target_disp = target_disp, .op = op, .win = win), \
      (a->origin_addr, a->result_addr, a->origin_datatype, a->target_rank, a->target_disp, \
       a->op, a->win), NULL) \
    X(CAS, compare_and_swap, MPIDI_CX_win_vci(win), \
      (const void *origin_addr, const void *compare_addr, void *result_addr, \
       MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPIR_Win * win), \
      (origin_addr, compare_addr, result_addr, datatype, target_rank, target_disp, win), \
      (.origin_addr = origin_addr, .compare_addr = compare_addr, .result_addr = result_addr, \
       .origin_datatype = datatype, .target_rank = target_rank, .target_disp = target_disp, \
       .win = win), \
      (a->origin_addr, a->compare_addr, a->result_addr, a->origin_datatype, a->target_rank, \
       a->target_disp, a->win), NULL) \
    MPIDI_CX_RMA_REQUEST_OPS(X)

/* One-sided with a request: LockQ cannot queue them (they issue under the
 * lock, behind the queue), CSync combines them as any other. */
#define MPIDI_CX_RMA_REQUEST_OPS(X) \
    X(RPUT, rput, MPIDI_CX_win_vci(win), \
      (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, \
       MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPIR_Win * win, \
       MPIR_Request ** request), \
      (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, \
       target_datatype, win, request), \
      (.origin_addr = origin_addr, .origin_count = origin_count, \
       .origin_datatype = origin_datatype, .target_rank = target_rank, \
       .target_disp = target_disp, .target_count = target_count, \
       .target_datatype = target_datatype, .win = win), \
      (a->origin_addr, a->origin_count, a->origin_datatype, a->target_rank, a->target_disp, \
       a->target_count, a->target_datatype, a->win, req), request) \
    X(RGET, rget, MPIDI_CX_win_vci(win), \
      (void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, \
       MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPIR_Win * win, \
       MPIR_Request ** request), \
      (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, \
       target_datatype, win, request), \
      (.result_addr = origin_addr, .origin_count = origin_count, \
       .origin_datatype = origin_datatype, .target_rank = target_rank, \
       .target_disp = target_disp, .target_count = target_count, \
       .target_datatype = target_datatype, .win = win), \
      (a->result_addr, a->origin_count, a->origin_datatype, a->target_rank, a->target_disp, \
       a->target_count, a->target_datatype, a->win, req), request) \
    X(RACC, raccumulate, MPIDI_CX_win_vci(win), \
      (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, \
       MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, \
       MPIR_Win * win, MPIR_Request ** request), \
      (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, \
       target_datatype, op, win, request), \
      (.origin_addr = origin_addr, .origin_count = origin_count, \
       .origin_datatype = origin_datatype, .target_rank = target_rank, \
       .target_disp = target_disp, .target_count = target_count, \
       .target_datatype = target_datatype, .op = op, .win = win), \
      (a->origin_addr, a->origin_count, a->origin_datatype, a->target_rank, a->target_disp, \
       a->target_count, a->target_datatype, a->op, a->win, req), request) \
    X(RGET_ACC, rget_accumulate, MPIDI_CX_win_vci(win), \
      (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, \
       void *result_addr, int result_count, MPI_Datatype result_datatype, int target_rank, \
       MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, \
       MPIR_Win * win, MPIR_Request ** request), \
      (origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype, \
       target_rank, target_disp, target_count, target_datatype, op, win, request), \
      (.origin_addr = origin_addr, .origin_count = origin_count, \
       .origin_datatype = origin_datatype, .result_addr = result_addr, \
       .result_count = result_count, .result_datatype = result_datatype, \
       .target_rank = target_rank, .target_disp = target_disp, .target_count = target_count, \
       .target_datatype = target_datatype, .op = op, .win = win), \
      (a->origin_addr, a->origin_count, a->origin_datatype, a->result_addr, a->result_count, \
       a->result_datatype, a->target_rank, a->target_disp, a->target_count, \
       a->target_datatype, a->op, a->win, req), request)

#define MPIDI_CX_OPS(X) MPIDI_CX_PT2PT_OPS(X) MPIDI_CX_RMA_OPS(X)
/* *INDENT-ON* */

#endif /* CX_MT_OPS_H_INCLUDED */
