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

/* Intranode MPI_Accumulate/MPI_Get_accumulate on win, whose mutex the
 * caller holds: run the reduction (result_addr: get-accumulate's copy of
 * the old target data first, or NULL) as a task idle ranks share, in the
 * order of the window's post_comm_access; false: not eligible, the caller
 * computes as usual. */
bool MPIDI_PIP_steal_accumulate(const void *origin_addr, int origin_count,
                                MPI_Datatype origin_datatype, void *result_addr,
                                int result_count, MPI_Datatype result_datatype,
                                void *target_addr, int target_count,
                                MPI_Datatype target_datatype, MPI_Op op, int mapped_device,
                                struct MPIR_Win *win);
/* MPI_Win_fence's barrier: while this thread waits in it, it takes the
 * chunks of the window's fence-epoch accumulates to the end. */
void MPIDI_PIP_steal_fence_begin(struct MPIR_Win *win);
void MPIDI_PIP_steal_fence_end(void);

/* Internode noncontiguous messages (OFI's pack path): pack the first bytes
 * bytes of count elements of dt at buf into packed, or unpack them from it
 * (comm: the receive's, for its post_comm_access), as a task idle local
 * ranks share; false: not eligible, the caller packs or unpacks as usual. */
bool MPIDI_PIP_steal_pack(const void *buf, MPI_Aint count, MPI_Datatype dt, void *packed,
                          MPI_Aint bytes, MPI_Aint * actual);
bool MPIDI_PIP_steal_unpack(const void *packed, MPI_Aint bytes, void *buf, MPI_Aint count,
                            MPI_Datatype dt, MPIR_Comm * comm, MPI_Aint * actual);

/* The info key post_comm_access: how the application reads data right after
 * it arrived.  lo-to-hi 1, hi-to-lo 2, random 3; any other value 0 (MPI
 * ignores hints it does not understand). */
#ifdef MPIDI_CH4_DIRECT_NETMOD
/* no CH4 shared memory (ch4:ucx): no CAB-MPI to order; the hint is ignored */
static inline int MPIDI_PIP_steal_order_of(const char *value)
{
    (void) value;
    return 0;
}
#else
int MPIDI_PIP_steal_order_of(const char *value);
#endif
/* MPI_Comm_set_info and the communicator constructors with info. */
void MPIDI_PIP_steal_comm_hints(MPIR_Comm * comm, MPIR_Info * info);

#endif /* PIP_STEAL_HOOKS_H_INCLUDED */
