/*
 * MPICH-CX: CH4's progress body (MPIDI_PROGRESS_BODY in ch4_progress.h) with
 * the netmod poll skipped while shared memory delivers (cx_nm_poll.h,
 * MPIR_CVAR_CH4_CX_NM_POLL_SKIP).  Included by ch4_progress.h where the body
 * is defined, after MPIDI_THREAD_CS_{ENTER,EXIT}_VCI_OPTIONAL, which use
 * `state`.
 */
#ifndef CX_NM_POLL_PROGRESS_H_INCLUDED
#define CX_NM_POLL_PROGRESS_H_INCLUDED

#include "cx_nm_poll.h"

/* One round of progress on vci: the netmod (when due), then shared memory.
 * Returns the first error.  Always inlined, like the macro body it replaces
 * (MPL_STATIC_INLINE_PREFIX is a plain `static inline` by default). */
__attribute__((always_inline))
static inline int MPIDI_CX_nm_poll_progress_body(MPID_Progress_state * state, int vci)
{
    int mpi_errno = MPI_SUCCESS;
    bool nm_skipped = false;

    if (state->flag & MPIDI_PROGRESS_NM) {
        if (MPIDI_CX_nm_poll_due(vci, state->flag & MPIDI_PROGRESS_SHM)) {
            int mark = MPIDI_CX_nm_poll_mark(vci, nm);
            MPIDI_THREAD_CS_ENTER_VCI_OPTIONAL(vci);
            mpi_errno = MPIDI_NM_progress(vci, 0);
            MPIDI_THREAD_CS_EXIT_VCI_OPTIONAL(vci);
            MPIDI_CX_nm_poll_done(vci, nm, mark);
        } else {
            nm_skipped = true;
        }
    }
    if (state->flag & MPIDI_PROGRESS_SHM && mpi_errno == MPI_SUCCESS) {
        MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(vci).lock);
        int mark = MPIDI_CX_nm_poll_mark(vci, shm);
        mpi_errno = MPIDI_SHM_progress(vci, 0);
        MPIDI_CX_nm_poll_done(vci, shm, mark);
        MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(vci).lock);
    }
    /* not inside a CX lock's section (MPIDI_PROGRESS): no pause while
     * holding a VCI lock */
    if (nm_skipped && !(MPIDI_VCI(vci).lock.cx && MPIR_ThreadInfo.isThreaded))
        MPIDI_CX_nm_poll_skipped(vci);
    return mpi_errno;
}

#endif /* CX_NM_POLL_PROGRESS_H_INCLUDED */
