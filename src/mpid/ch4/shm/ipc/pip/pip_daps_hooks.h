/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * MPICH-CX Daps: the calls MPICH's code makes (the progress-stealing patch,
 * cx_mt.h's idle hook); the mechanism is in pip_daps.c.
 */
#ifndef PIP_DAPS_HOOKS_H_INCLUDED
#define PIP_DAPS_HOOKS_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include "mpichcx_daps.h"

/* This rank runs idle peers' progress (between MPI_Init and MPI_Finalize). */
extern bool MPIDI_PIP_daps_on MPIR_CX_DAPS_HIDDEN;
/* This rank counts the operations it leaves pending for workers. */
extern bool MPIDI_PIP_daps_track_on MPIR_CX_DAPS_HIDDEN;

/* A blocking call polled in vain: one steal step; true if it progressed. */
bool MPIDI_PIP_daps_idle(void);

/* Receives of at least this many bytes need a handshake with the sender
 * (set at MPI_Init; cx_mt.h). */
extern size_t MPIDI_PIP_daps_track_bytes MPIR_CX_DAPS_HIDDEN;

/* A nonblocking operation left incomplete by its issue: kind 1 through the
 * netmod, 2 shared memory, 3 either (MPI_ANY_SOURCE). Counted until the
 * request's reference is first dropped (MPIDI_PIP_daps_untrack). */
void MPIDI_PIP_daps_posted(struct MPIR_Request *req, int kind);
void MPIDI_PIP_daps_untrack(struct MPIR_Request *req);
/* A window was created (+1) or freed (-1); callers test
 * MPIDI_PIP_daps_track_on (cx_mt.h). */
void MPIDI_PIP_daps_window(int delta);

#endif /* PIP_DAPS_HOOKS_H_INCLUDED */
