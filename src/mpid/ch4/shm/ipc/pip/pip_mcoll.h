/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * MPICH-CX PiP-MColl: a communicator's meeting state and the counters
 * (pip_mcoll_comm.c), shared by the algorithms (pip_mcoll_intra.c).
 */
#ifndef PIP_MCOLL_H_INCLUDED
#define PIP_MCOLL_H_INCLUDED

#include "mpidimpl.h"
#include "cx_mt.h"

/* A rank waiting for its peers polls progress as MPID_Progress_wait does (a
 * peer may wait on one of this rank's operations before it reaches the
 * collective), with its yield: the GLOBAL section to the rank's other
 * threads, CAB-MPI and Daps work, the core when ranks outnumber cores. */
#define MPIDI_PIP_MCOLL_IDLE()                  \
    do {                                        \
        MPID_Progress_test(NULL);               \
        MPIDI_PROGRESS_YIELD();                 \
    } while (0)
#include "pip_mcoll_sync.h"
#include "mpichcx_mcoll.h"

typedef struct MPIDI_PIP_mcoll_comm {
    MPIDI_PIP_mcoll_sync_t sync;
    const void **posted;        /* by rank: addresses kept across meetings */
    void *tmp;                  /* scratch, grown on demand */
    size_t tmp_size;
} MPIDI_PIP_mcoll_comm_t;

enum {
    MPIDI_PIP_MCOLL_BCAST, MPIDI_PIP_MCOLL_GATHER, MPIDI_PIP_MCOLL_SCATTER,
    MPIDI_PIP_MCOLL_REDUCE, MPIDI_PIP_MCOLL_ALLREDUCE, MPIDI_PIP_MCOLL_ALLGATHER,
    MPIDI_PIP_MCOLL_NCOLL
};

typedef struct {
    unsigned long long runs[MPIDI_PIP_MCOLL_NCOLL];
    unsigned long long bytes;   /* read from or written to peers' buffers */
} MPIDI_PIP_mcoll_global_t;

extern MPIDI_PIP_mcoll_global_t MPIDI_PIP_mcoll_global;

/* The communicator's state, set up by its first pip_mcoll collective (a
 * collective call itself: every rank gets here together). */
int MPIDI_PIP_mcoll_get(MPIR_Comm * comm, MPIDI_PIP_mcoll_comm_t ** st);
/* Scratch of at least size bytes, or NULL. */
void *MPIDI_PIP_mcoll_tmp(MPIDI_PIP_mcoll_comm_t * st, size_t size);

static inline void MPIDI_PIP_mcoll_count(int coll, size_t bytes)
{
    __atomic_fetch_add(&MPIDI_PIP_mcoll_global.runs[coll], 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&MPIDI_PIP_mcoll_global.bytes, bytes, __ATOMIC_RELAXED);
}

#endif /* PIP_MCOLL_H_INCLUDED */
