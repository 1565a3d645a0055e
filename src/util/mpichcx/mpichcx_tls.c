/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * MPICH-CX's initial-exec thread-local variables, in libmpichcx_tls of their
 * own (see Makefile.mk): Daps's pointer from each thread to its slot in the
 * owner guard (mpichcx_daps.h).
 */

#include "mpichcx_daps.h"

#define MPIR_CX_TLS_EXPORT __attribute__((visibility("default")))

MPIR_CX_TLS_EXPORT __thread int *MPIR_CX_daps_my_depth;
MPIR_CX_TLS_EXPORT __thread int MPIR_CX_daps_shared_depth;
