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

/* The static libmpi.a carries the guard's thread-local pointer itself: a
 * program linked with it needs no static TLS reserve, and the compiler
 * wrappers link no other library. The shared libmpi takes it from
 * libmpichcx_tls (libtool compiles shared objects with -DPIC). */
#ifndef PIC
#include "mpichcx_tls.c"
#endif
