/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 */
/* CSync: operations issued by DSM-Synch software combining
 * (doc/design/csync.md). */
#include "mpidimpl.h"
#include "cx_mt_impl.h"

/* Run by whichever thread combines, under the DSM lock. */
static void csync_apply(void *descr, void *ctx)
{
    MPIDU_cx_lock_t *l = ctx;
    MPIDI_CX_descr_t *d = descr;
    MPIDI_CX_csync_hold(l->index);
    d->mpi_errno = MPIDI_CX_descr_issue(d, d->reqp);
    MPIDI_CX_csync_unhold(l->index);
}

void MPIDI_CX_csync_init_lock(MPIDU_cx_lock_t * l)
{
    l->u.dsm.max_combine = MPIDI_CX_global.max_combine;
    l->u.dsm.apply = csync_apply;
    l->u.dsm.ctx = l;
}

/* Another thread heads the combining queue: announce the operation (d on
 * the issuer's stack) and wait until it, or the combiner, ran it. */
int MPIDI_CX_csync_announce(MPIDI_CX_descr_t * d, MPIR_Request ** req)
{
    MPIDU_cx_lock_t *l = MPIDI_CX_global.locks[d->vci];
    d->reqp = req;
    cx_dsm_synch(&l->u.dsm, MPIDU_CX_dsm_thread(l), d);
    return d->mpi_errno;
}
