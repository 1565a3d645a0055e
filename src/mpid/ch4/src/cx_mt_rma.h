/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 */
/* The one-sided entry points of the thread-safety models, included by
 * ch4_rma.h after MPICH's own functions (renamed *_direct), one per row of
 * cx_mt_ops.h: MPICH's model inline, the others out of line (cx_mt_issue.c). */
#ifndef CX_MT_RMA_H_INCLUDED
#define CX_MT_RMA_H_INCLUDED

#include "cx_mt.h"

/* *INDENT-OFF* */
#define MPIDI_CX_RMA_ENTRY(OP_, name_, vci_, params_, args_, descr_, dargs_, req_) \
    MPL_STATIC_INLINE_PREFIX int MPIDI_##name_ params_                  \
    {                                                                   \
        if (MPIDI_CX_USE_DIRECT())                                      \
            return MPIDI_##name_##_direct args_;                        \
        return MPIDI_CX_##name_ args_;                                  \
    }
MPIDI_CX_RMA_OPS(MPIDI_CX_RMA_ENTRY)
#undef MPIDI_CX_RMA_ENTRY
/* *INDENT-ON* */

#endif /* CX_MT_RMA_H_INCLUDED */
