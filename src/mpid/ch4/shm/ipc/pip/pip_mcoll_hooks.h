/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * MPICH-CX PiP-MColl: the choice CH4's collectives make before MPICH's
 * selection (the cx-pip-mcoll patch of ch4_coll.h). A collective runs by
 * posted addresses when its algorithm CVAR says pip_mcoll, or says auto
 * while MPIR_CVAR_CH4_CX_MCOLL is auto, and its communicator's ranks are
 * all tasks of this process, or (scatter, allgather, allreduce) sit on
 * nodes whose ranks are each one process's tasks. Every rank of the
 * communicator gets the same answer, so all take the same path.
 */
#ifndef PIP_MCOLL_HOOKS_H_INCLUDED
#define PIP_MCOLL_HOOKS_H_INCLUDED

#include <stdbool.h>
#include "mpichcx_mcoll.h"

extern bool MPIDI_PIP_mcoll_on; /* ranks are PiP tasks (mpiexec -pip): on every rank */
extern bool MPIDI_PIP_mcoll_auto;       /* ... and MPIR_CVAR_CH4_CX_MCOLL is auto */

#ifdef MPIDI_CH4_DIRECT_NETMOD
/* no CH4 shared memory (ch4:ucx): the PiP module is not compiled, and no
 * communicator has PiP-MColl state */
static inline void MPIDI_PIP_mcoll_comm_free(MPIR_Comm * comm)
{
    (void) comm;
}
#else
void MPIDI_PIP_mcoll_comm_free(MPIR_Comm * comm);
#endif

/* Which collectives MPIR_CVAR_CH4_CX_MCOLL=auto takes: allgather by posted
 * addresses lost to MPICH's at most sizes measured (doc/performance.md), so
 * it runs only when its algorithm CVAR asks for it. */
#define MPIDI_PIP_MCOLL_AUTO_BCAST 1
#define MPIDI_PIP_MCOLL_AUTO_GATHER 1
#define MPIDI_PIP_MCOLL_AUTO_SCATTER 1
#define MPIDI_PIP_MCOLL_AUTO_REDUCE 1
#define MPIDI_PIP_MCOLL_AUTO_ALLREDUCE 1
#define MPIDI_PIP_MCOLL_AUTO_ALLGATHER 0

/* Which of them auto takes on communicators across nodes (those without
 * an algorithm across nodes are left to MPICH's selection). */
#define MPIDI_PIP_MCOLL_NODES_BCAST 0
#define MPIDI_PIP_MCOLL_NODES_GATHER 0
#define MPIDI_PIP_MCOLL_NODES_SCATTER 1
#define MPIDI_PIP_MCOLL_NODES_REDUCE 0
#define MPIDI_PIP_MCOLL_NODES_ALLREDUCE 1
#define MPIDI_PIP_MCOLL_NODES_ALLGATHER 1

#ifdef MPIDI_CX_MCOLL
#define MPIDI_PIP_MCOLL_CHOSEN(COLL, comm)                                      \
    (unlikely(MPIDI_PIP_mcoll_on) &&                                            \
     (MPIR_CVAR_##COLL##_INTRA_ALGORITHM == MPIR_CVAR_##COLL##_INTRA_ALGORITHM_pip_mcoll || \
      (MPIDI_PIP_mcoll_auto && MPIR_CVAR_##COLL##_INTRA_ALGORITHM == MPIR_CVAR_##COLL##_INTRA_ALGORITHM_auto && \
       MPIR_CX_mcoll_comm_ok(comm) &&                                          \
       (MPIR_CX_mcoll_comm_nodes(comm) ? MPIDI_PIP_MCOLL_NODES_##COLL : MPIDI_PIP_MCOLL_AUTO_##COLL))) && \
     MPIR_CX_mcoll_comm_ok(comm))
#else
/* configured --disable-cx-mcoll: a pip_mcoll algorithm CVAR falls back as
 * MPIR_CVAR_COLLECTIVE_FALLBACK says (MPIR_CX_mcoll_comm_ok is false) */
#define MPIDI_PIP_MCOLL_CHOSEN(COLL, comm) 0
#endif

#endif /* PIP_MCOLL_HOOKS_H_INCLUDED */
