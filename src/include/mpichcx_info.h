/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * MPICH-CX: identification of the fork, its base and its extensions.
 */

#ifndef MPICHCX_INFO_H_INCLUDED
#define MPICHCX_INFO_H_INCLUDED

/* MPICHCX_VERSION (from VERSION) and MPICHCX_BASE_VERSION (the pinned MPICH):
 * scripts/assemble generates this header in the assembled tree. */
#include "mpichcx_version.h"

/* Append the "MPICH-CX ..." lines of MPI_Get_library_version (version, base,
 * extensions compiled in and whether each is active) to buf, which has room
 * for len bytes. Returns the number of characters written (truncated output
 * stays NUL-terminated). */
int MPIR_CX_info_string(char *buf, int len);

#endif /* MPICHCX_INFO_H_INCLUDED */
