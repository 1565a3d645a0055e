/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 */
/* A descriptor's operation run by whichever thread holds the VCI: the
 * issuer itself, a LockQ lock holder or a CSync combiner. */
#include "mpidimpl.h"
#include "cx_mt_impl.h"

int MPIDI_CX_descr_issue(MPIDI_CX_descr_t * d, MPIR_Request ** req)
{
    MPIDI_CX_rma_args_t *a = &d->rma;
/* *INDENT-OFF* */
    switch (d->op) {
#define ISSUE_CASE(OP_, name_, vci_, params_, args_, descr_, dargs_, req_) \
        case MPIDI_CX_OP_##OP_: \
            return MPIDI_##name_##_direct dargs_;
            MPIDI_CX_OPS(ISSUE_CASE)
#undef ISSUE_CASE
    }
/* *INDENT-ON* */
    MPIR_Assert(0);
    return MPI_ERR_INTERN;
}

/* What a queued operation keeps alive until it ran: its datatypes and its
 * communicator (the user may free them right after the call returns). */
void MPIDI_CX_descr_add_refs(MPIDI_CX_descr_t * d)
{
    if (MPIDI_CX_descr_is_pt2pt(d)) {
        MPIR_Datatype_add_ref_if_not_builtin(d->datatype);
        MPIR_Comm_add_ref(d->comm);
        return;
    }
    MPIDI_CX_rma_args_t *a = &d->rma;
    /* unused datatype fields are 0 in the descriptor */
    if (!a->origin_datatype)
        a->origin_datatype = MPI_DATATYPE_NULL;
    if (!a->target_datatype)
        a->target_datatype = MPI_DATATYPE_NULL;
    if (!a->result_datatype)
        a->result_datatype = MPI_DATATYPE_NULL;
    MPIR_Datatype_add_ref_if_not_builtin(a->origin_datatype);
    MPIR_Datatype_add_ref_if_not_builtin(a->target_datatype);
    MPIR_Datatype_add_ref_if_not_builtin(a->result_datatype);
}

void MPIDI_CX_descr_release_refs(MPIDI_CX_descr_t * d)
{
    if (MPIDI_CX_descr_is_pt2pt(d)) {
        MPIR_Datatype_release_if_not_builtin(d->datatype);
        MPIR_Comm_release(d->comm);
        return;
    }
    MPIR_Datatype_release_if_not_builtin(d->rma.origin_datatype);
    MPIR_Datatype_release_if_not_builtin(d->rma.target_datatype);
    MPIR_Datatype_release_if_not_builtin(d->rma.result_datatype);
}
