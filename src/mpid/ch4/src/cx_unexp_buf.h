/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 */
/* Buffers of unexpected eager messages (MPIDIG): messages of at most
 * MPIR_CVAR_CH4_CX_UNEXP_SMALL_BUFFER_SIZE bytes take a cell from a per-VCI
 * pool of small cells instead of a 68 KiB pack buffer, so that a burst of
 * small unexpected messages does not touch a fresh page each
 * (doc/design/matching.md).  The pool follows from the message size alone;
 * callers hold the VCI lock. */
#ifndef CX_UNEXP_BUF_H_INCLUDED
#define CX_UNEXP_BUF_H_INCLUDED

#include "ch4_types.h"

typedef struct {
    MPIDU_genq_private_pool_t pool;     /* small cells; NULL when turned off */
    unsigned long long small_buffers;   /* messages buffered in small cells */
} MPL_ATTR_ALIGNED(64) MPIDIG_cx_unexp_buf_t;

extern MPIDIG_cx_unexp_buf_t MPIDIG_cx_unexp_buf[MPIDI_CH4_MAX_VCIS];
extern MPI_Aint MPIDIG_cx_unexp_small_size;

/* MPIDIG_am_init, after the pack-buffer pools: checks the CVAR and creates
 * the small pools with the same allocator (registered host memory). */
int MPIDIG_cx_unexp_buf_init(MPIDU_genq_malloc_fn malloc_fn, MPIDU_genq_free_fn free_fn);
void MPIDIG_cx_unexp_buf_finalize(void);

MPL_STATIC_INLINE_PREFIX bool MPIDIG_cx_unexp_is_small(MPI_Aint data_sz)
{
    return data_sz <= MPIDIG_cx_unexp_small_size;
}

/* A buffer for data_sz (> 0) bytes of an unexpected message. */
MPL_STATIC_INLINE_PREFIX int MPIDIG_cx_unexp_buf_alloc(int vci, MPI_Aint data_sz, void **buf)
{
    if (MPIDIG_cx_unexp_is_small(data_sz)) {
        MPIDIG_cx_unexp_buf[vci].small_buffers++;
        return MPIDU_genq_private_pool_alloc_cell(MPIDIG_cx_unexp_buf[vci].pool, buf);
    }
    return MPIDU_genq_private_pool_alloc_cell(MPIDI_global.per_vci[vci].unexp_pack_buf_pool, buf);
}

/* Gives back the buffer of a data_sz-byte unexpected message (the size it
 * arrived with, before any truncation). */
MPL_STATIC_INLINE_PREFIX void MPIDIG_cx_unexp_buf_free(int vci, MPI_Aint data_sz, void *buf)
{
    if (!buf)
        return; /* an empty message has no buffer */
    MPIDU_genq_private_pool_free_cell(MPIDIG_cx_unexp_is_small(data_sz) ?
                                      MPIDIG_cx_unexp_buf[vci].pool :
                                      MPIDI_global.per_vci[vci].unexp_pack_buf_pool, buf);
}

#endif /* CX_UNEXP_BUF_H_INCLUDED */
