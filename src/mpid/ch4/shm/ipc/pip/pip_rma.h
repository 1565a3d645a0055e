/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * MPICH-CX: which path an RMA operation on a local target takes.  A node
 * with more than 15 ranks, or an MPMD launch, has several PiP hosting
 * processes: a window's peers in this process are accessed directly at
 * their own addresses, those in the others through MPICH's active messages
 * (pip_win.c marks them).  Both paths serialize accumulates on the window's
 * shared mutex, and MPICH's synchronization completes both.
 */
#ifndef PIP_RMA_H_INCLUDED
#define PIP_RMA_H_INCLUDED

/* ipc_mapped_device of a shared-table entry whose memory is in another
 * address space (GPU devices are >= 0, none -1) */
#define MPIDI_PIP_WIN_UNMAPPED (-2)

/* Whether an operation on target_rank goes through active messages. */
MPL_STATIC_INLINE_PREFIX bool MPIDI_PIP_rma_via_am(MPIR_Win * win, MPIDI_winattr_t winattr,
                                                   int target_rank)
{
    if (!(winattr & MPIDI_WINATTR_SHM_ALLOCATED))
        return target_rank != MPIDIU_win_comm_rank(win, winattr);
    if (likely(!(winattr & MPIDI_WINATTR_CX_SOME_UNMAPPED)) ||
        target_rank == MPIDIU_win_comm_rank(win, winattr))
        return false;
    int i = MPIDIU_win_rank_to_intra_rank(win, target_rank, winattr);
    return MPIDIG_WIN(win, shared_table)[i].ipc_mapped_device == MPIDI_PIP_WIN_UNMAPPED;
}

#endif /* PIP_RMA_H_INCLUDED */
