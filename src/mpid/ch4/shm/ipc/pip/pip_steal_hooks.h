/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * MPICH-CX CAB-MPI: the calls MPICH's code makes (the copy-stealing patch,
 * cx_mt.h's wait hooks); the mechanism is in pip_steal.c.
 */
#ifndef PIP_STEAL_HOOKS_H_INCLUDED
#define PIP_STEAL_HOOKS_H_INCLUDED

#include <stdbool.h>

/* Whether this rank steals: PiP peers exist and MPIR_CVAR_CH4_CX_STEAL is
 * not off.  Read on every idle poll, so a plain flag. */
extern bool MPIDI_PIP_steal_on;

/* A blocking call polled in vain: steal one chunk; true if it ran one. */
bool MPIDI_PIP_steal_idle(void);
/* The blocking call is over: this rank is possibly active again. */
void MPIDI_PIP_steal_wait_done(void);

/* Intranode MPI_Accumulate/MPI_Get_accumulate on a window whose mutex the
 * caller holds: run the reduction (result_addr: get-accumulate's copy of
 * the old target data first, or NULL) as a task idle ranks share; false:
 * not eligible, the caller computes as usual. */
bool MPIDI_PIP_steal_accumulate(const void *origin_addr, int origin_count,
                                MPI_Datatype origin_datatype, void *result_addr,
                                int result_count, MPI_Datatype result_datatype,
                                void *target_addr, int target_count,
                                MPI_Datatype target_datatype, MPI_Op op, int mapped_device);

#endif /* PIP_STEAL_HOOKS_H_INCLUDED */
