/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 */
/* The out-of-line issue paths of LockQ, CSync and offload: the inline entry points
 * (cx_mt_pt2pt.h, cx_mt_rma.h) come here when the uncontended case does not
 * apply.  One function per operation, generated from cx_mt_ops.h, fills a
 * descriptor on the stack; issue() enters, runs it and leaves. */
#include "mpidimpl.h"
#include "cx_mt_impl.h"

/* Enter the VCI as the model does, issue while holding it, leave.  LockQ:
 * issue under the try-lock, or hand the operation to the holder; a holder
 * that finds work left in the queue (MAX_COMBINE reached, or a producer not
 * yet linked) queues its own operation behind it, to keep the order.
 * Operations with a request wait for the lock and run the queue to its end
 * first.  CSync: a thread that finds the combining queue empty heads it and
 * issues at once; otherwise it announces the operation and waits.  Offload:
 * the operation goes to the VCI's executor (cx_mt_offload.c). */
static int issue(MPIDI_CX_descr_t * d, MPIR_Request ** req)
{
    int vci = d->vci, mpi_errno;

    if (MPIDI_CX_MT == MPIDI_CX_MT_OFFLOAD)
        return MPIDI_CX_offload_post(d, req);

    if (MPIDI_CX_MT == MPIDI_CX_MT_CSYNC) {
        cx_dsm_thread_t *t = MPIDI_CX_csync_fast_enter(vci);
        if (!t)
            return MPIDI_CX_csync_announce(d, req);
        mpi_errno = MPIDI_CX_descr_issue(d, req);
        MPIDI_CX_csync_fast_exit(vci, t);
        return mpi_errno;
    }

    if (MPIDI_CX_descr_is_rma_request(d)) {
        MPIDU_CX_cs_enter(&MPIDI_VCI(vci).lock);
        MPIDI_CX_drain_all(vci);
    } else if (!MPIDI_CX_issue_tryenter(vci)) {
        return MPIDI_CX_lockq_post(d, req, false);
    } else if (unlikely(cx_lockq_pending(MPIDI_CX_global.queues[vci]))) {
        mpi_errno = MPIDI_CX_lockq_post(d, req, true);
        MPIDU_CX_cs_exit(&MPIDI_VCI(vci).lock);
        return mpi_errno;
    }
    mpi_errno = MPIDI_CX_descr_issue(d, req);
    MPIDU_CX_cs_exit(&MPIDI_VCI(vci).lock);
    return mpi_errno;
}

/* *INDENT-OFF* */
#define UNPAREN(...) __VA_ARGS__

#define PT2PT_ENTRY(OP_, name_, vci_, params_, args_, descr_, dargs_, req_) \
    int MPIDI_CX_##name_ params_                                        \
    {                                                                   \
        MPIDI_CX_descr_t d = { .op = MPIDI_CX_OP_##OP_, .vci = vci_, UNPAREN descr_ }; \
        return issue(&d, req_);                                         \
    }
MPIDI_CX_PT2PT_OPS(PT2PT_ENTRY)

#define RMA_ENTRY(OP_, name_, vci_, params_, args_, descr_, dargs_, req_) \
    int MPIDI_CX_##name_ params_                                        \
    {                                                                   \
        MPIDI_CX_descr_t d = { .op = MPIDI_CX_OP_##OP_, .vci = vci_, .rma = { UNPAREN descr_ } }; \
        return issue(&d, req_);                                         \
    }
MPIDI_CX_RMA_OPS(RMA_ENTRY)
/* *INDENT-ON* */
