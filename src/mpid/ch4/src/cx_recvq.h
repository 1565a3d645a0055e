/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 */
/* MPIDIG's posted and unexpected receive queues, per VCI: a constant-time
 * matcher (src/util/matching/cx_match.h) with MPIR_CVAR_CH4_CX_MATCHING=hash,
 * MPICH's lists with `list` (doc/design/matching.md).  Included at the end of
 * mpidig_recvq.h; callers hold the VCI lock.  Keys follow
 * MPIDIG_match_request; the cell lives in the request (MPIDIG_req_t). */
#ifndef CX_RECVQ_H_INCLUDED
#define CX_RECVQ_H_INCLUDED

#include "cx_match.h"

int MPIDIG_cx_recvq_init(void);
void MPIDIG_cx_recvq_tag_bits_known(void);
void MPIDIG_cx_recvq_finalize(void);

/* A tag without its error bits: MPIR_TAG_MASK_ERROR_BITS's mask, computed
 * once instead of from MPIR_Process.tag_bits per call. */
extern int MPIDIG_cx_tag_mask;

/* Hash or list is chosen for the whole process at MPI_Init.  One matcher
 * per VCI, in place in a static array (no pointer to follow before the
 * short-mode lists), each in a 512-byte slot so that indexing by VCI is a
 * shift. */
typedef union {
    cx_matcher_t m;
    char pad[512];
} MPIDIG_cx_matcher_slot_t;
_Static_assert(sizeof(cx_matcher_t) <= 512, "a matcher fits its slot");

extern bool MPIDIG_cx_hash;
extern MPIDIG_cx_matcher_slot_t MPIDIG_cx_matchers[MPIDI_CH4_MAX_VCIS];

/* The VCI's matcher, or NULL with MPIR_CVAR_CH4_CX_MATCHING=list */
#define MPIDIG_CX_MATCHER(vci_) (MPIDIG_cx_hash ? &MPIDIG_cx_matchers[vci_].m : NULL)
#define MPIDIG_CX_CELL(req_) (&MPIDIG_REQUEST(req_, cx_cell))

/* The request a queued cell belongs to: the cell is part of it. */
MPL_STATIC_INLINE_PREFIX MPIR_Request *MPIDIG_cx_owner(cx_match_cell_t * c)
{
    return (MPIR_Request *) ((char *) c - offsetof(MPIR_Request, dev.ch4.am.cx_cell));
}

/* A stored tag (posted receive or unexpected message): MPI_ANY_TAG stays a
 * wildcard, anything else loses its error bits. */
MPL_STATIC_INLINE_PREFIX int MPIDIG_cx_stored_tag(int tag)
{
    return tag == MPI_ANY_TAG ? -1 : tag & MPIDIG_cx_tag_mask;
}

/* MPIDIG_do_irecv: the receive joins the posted queue. */
MPL_STATIC_INLINE_PREFIX int MPIDIG_cx_enqueue_posted(MPIR_Request * rreq, int vci)
{
    cx_matcher_t *m = MPIDIG_CX_MATCHER(vci);
    if (!m) {
        MPIDIG_enqueue_request(rreq, &MPIDI_global.per_vci[vci].posted_list, MPIDIG_PT2PT_POSTED);
        return MPI_SUCCESS;
    }
    if (cx_match_post(m, MPIDIG_CX_CELL(rreq), MPIDIG_REQUEST(rreq, u.recv.context_id),
                      MPIDIG_REQUEST(rreq, u.recv.source),
                      MPIDIG_cx_stored_tag(MPIDIG_REQUEST(rreq, u.recv.tag))))
        return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                    MPI_ERR_OTHER, "**nomem", 0);
    MPIDIG_PVAR_QUEUE_LEVEL_INC(MPIDIG_PT2PT_POSTED);
    return MPI_SUCCESS;
}

/* A message arrived: the oldest posted receive it matches, dequeued. */
MPL_STATIC_INLINE_PREFIX MPIR_Request *MPIDIG_cx_dequeue_posted(int rank, int tag,
                                                                MPIR_Context_id_t context_id,
                                                                int vci)
{
    cx_matcher_t *m = MPIDIG_CX_MATCHER(vci);
    if (!m)
        return MPIDIG_rreq_dequeue(rank, tag, context_id, &MPIDI_global.per_vci[vci].posted_list,
                                   MPIDIG_PT2PT_POSTED);
    cx_match_cell_t *c = cx_match_posted_find(m, context_id, rank, tag);
    if (!c)
        return NULL;
    cx_match_unpost(m, c);
    MPIDIG_PVAR_QUEUE_LEVEL_DEC(MPIDIG_PT2PT_POSTED);
    return MPIDIG_cx_owner(c);
}

/* MPI_Cancel of a receive: 1 when it was still posted (now removed). */
MPL_STATIC_INLINE_PREFIX int MPIDIG_cx_delete_posted(MPIR_Request * rreq, int vci)
{
    cx_matcher_t *m = MPIDIG_CX_MATCHER(vci);
    if (!m)
        return MPIDIG_delete_posted(rreq, &MPIDI_global.per_vci[vci].posted_list);
    cx_match_cell_t *c = MPIDIG_CX_CELL(rreq);
    if (c->state != CX_MATCH_CELL_POSTED)
        return 0;
    cx_match_unpost(m, c);
    MPIR_T_PVAR_LEVEL_DEC(RECVQ, posted_recvq_length, 1);
    return 1;
}

/* A message nobody waits for yet joins the unexpected queue. */
MPL_STATIC_INLINE_PREFIX int MPIDIG_cx_enqueue_unexp(MPIR_Request * req, int vci)
{
    cx_matcher_t *m = MPIDIG_CX_MATCHER(vci);
    if (!m) {
        MPIDIG_enqueue_request(req, &MPIDI_global.per_vci[vci].unexp_list, MPIDIG_PT2PT_UNEXP);
        return MPI_SUCCESS;
    }
    if (cx_match_unexp_add(m, MPIDIG_CX_CELL(req), MPIDIG_REQUEST(req, u.recv.context_id),
                           MPIDIG_REQUEST(req, u.recv.source),
                           MPIDIG_cx_stored_tag(MPIDIG_REQUEST(req, u.recv.tag))))
        return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                    MPI_ERR_OTHER, "**nomem", 0);
    MPIDIG_DO_ENQUEUE_EVENT(MPIDIG_PT2PT_UNEXP);
    MPIDIG_PVAR_QUEUE_LEVEL_INC(MPIDIG_PT2PT_UNEXP);
    return MPI_SUCCESS;
}

/* Receive, probe and mprobe: the oldest unexpected message the pattern
 * (wildcards allowed) matches; dequeued when asked. */
MPL_STATIC_INLINE_PREFIX MPIR_Request *MPIDIG_cx_search_unexp(int rank, int tag,
                                                              MPIR_Context_id_t context_id,
                                                              int vci, bool dequeue)
{
    cx_matcher_t *m = MPIDIG_CX_MATCHER(vci);
    if (!m)
        return MPIDIG_recvq_search(rank, tag, context_id, &MPIDI_global.per_vci[vci].unexp_list,
                                   MPIDIG_PT2PT_UNEXP, dequeue);
    cx_match_cell_t *c = cx_match_unexp_find(m, context_id, rank, tag == MPI_ANY_TAG ? -1 : tag);
    if (!c)
        return NULL;
    MPIR_Request *req = MPIDIG_cx_owner(c);
    if (dequeue) {
        cx_match_unexp_remove(m, c);
        MPIDIG_DO_DEQUEUE_EVENT(MPIDIG_PT2PT_UNEXP);
        MPIDIG_PVAR_QUEUE_LEVEL_DEC(MPIDIG_PT2PT_UNEXP);
    }
    return req;
}

#endif /* CX_RECVQ_H_INCLUDED */
