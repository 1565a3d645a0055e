/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 */
/* Between the layers of the thread-safety models (doc/design/map.md):
 * cx_mt_descr.c runs a descriptor, cx_mt_lockq.c and cx_mt_csync.c hand one
 * to another thread, cx_mt_issue.c picks between them, cx_mt_select.c reads
 * the CVARs, sets up the VCI locks and registers the pvars.  Only these
 * files include this header. */
#ifndef CX_MT_IMPL_H_INCLUDED
#define CX_MT_IMPL_H_INCLUDED

#include "cx_mt.h"

/* cx_mt_descr.c: issue a descriptor's operation directly (the VCI held);
 * keep its datatypes and communicator alive while it is queued. */
int MPIDI_CX_descr_issue(MPIDI_CX_descr_t * d, MPIR_Request ** req);
void MPIDI_CX_descr_add_refs(MPIDI_CX_descr_t * d);
void MPIDI_CX_descr_release_refs(MPIDI_CX_descr_t * d);

MPL_STATIC_INLINE_PREFIX bool MPIDI_CX_descr_is_pt2pt(const MPIDI_CX_descr_t * d)
{
    return d->op <= MPIDI_CX_OP_IRECV;
}

/* One-sided operations with a request, which LockQ cannot queue. */
MPL_STATIC_INLINE_PREFIX bool MPIDI_CX_descr_is_rma_request(const MPIDI_CX_descr_t * d)
{
    return d->op >= MPIDI_CX_OP_RPUT;
}

/* cx_mt_lockq.c: LockQ, and the descriptors and proxy requests of
 * operations another thread issues (LockQ's holder, an offload executor) */
int MPIDI_CX_lockq_init_lock(MPIDU_cx_lock_t * l, int vci);
void MPIDI_CX_lockq_finalize(void);
void MPIDI_CX_lockq_register_pvars(void);
int MPIDI_CX_queued_new(MPIDI_CX_descr_t * dd, MPIR_Request ** req, MPIDI_CX_descr_t ** out);
void MPIDI_CX_queued_discard(MPIDI_CX_descr_t * d);
void MPIDI_CX_queued_run(MPIDI_CX_descr_t * d);
void MPIDI_CX_proxy_refill(int vci);

/* cx_mt_offload.c */
int MPIDI_CX_offload_post(MPIDI_CX_descr_t * d, MPIR_Request ** req);
int MPIDI_CX_offload_init(void);
int MPIDI_CX_offload_init_vci(MPIDU_cx_lock_t * l, int vci);
void MPIDI_CX_offload_finalize(void);
void MPIDI_CX_offload_register_pvars(void);

/* cx_mt_csync.c */
void MPIDI_CX_csync_init_lock(MPIDU_cx_lock_t * l);
int MPIDI_CX_csync_announce(MPIDI_CX_descr_t * d, MPIR_Request ** req);

#endif /* CX_MT_IMPL_H_INCLUDED */
