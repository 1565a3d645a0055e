/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * MPICH-CX Daps: this rank's owner guard (mpichcx_daps.h); off unless CH4's
 * PiP module turns it on (pip_daps.c).
 */

#include "mpichcx_daps.h"

MPIR_CX_daps_guard_t MPIR_CX_daps_guard;
void (*MPIR_CX_daps_start)(void);
void (*MPIR_CX_daps_stop)(void);
