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
#include "pip_mcoll_vec.h"
#include "mpichcx_mcoll.h"

/* A communicator whose ranks sit on several nodes, each node's ranks tasks
 * of one process (pip_mcoll_nodes.c). Nodes are MPICH's (internode_table:
 * hosts, or cliques under MPIR_CVAR_NUM_CLIQUES); a node's ranks are in
 * ascending rank order, its "local index" is the place in that order. */
typedef struct {
    int n;                      /* nodes */
    int node, local;            /* this rank's node and local index */
    int objects;                /* ranks per node that talk to other nodes: the smallest node's size */
    int *size, *first;          /* by node: ranks, and where they start in rank[] */
    int *rank;                  /* comm ranks, node by node */
    int *node_of, *local_of;    /* by comm rank */
    size_t *off;                /* n + 1 byte offsets, per call */
} MPIDI_PIP_mcoll_nodes_t;

typedef struct MPIDI_PIP_mcoll_comm {
    MPIDI_PIP_mcoll_sync_t sync;        /* the communicator's ranks, or this node's */
    MPIDI_PIP_mcoll_nodes_t *nodes;     /* NULL: every rank in this address space */
    const void **posted;        /* by rank: addresses kept across meetings */
    void *tmp;                  /* scratch, grown on demand */
    size_t tmp_size;
    void *stage;                /* a node's gathered data (nodes only), grown on demand */
    size_t stage_size;
} MPIDI_PIP_mcoll_comm_t;

enum {
    MPIDI_PIP_MCOLL_BCAST, MPIDI_PIP_MCOLL_GATHER, MPIDI_PIP_MCOLL_SCATTER,
    MPIDI_PIP_MCOLL_REDUCE, MPIDI_PIP_MCOLL_ALLREDUCE, MPIDI_PIP_MCOLL_ALLGATHER,
    MPIDI_PIP_MCOLL_NCOLL
};

typedef struct {
    unsigned long long runs[MPIDI_PIP_MCOLL_NCOLL];
    unsigned long long bytes;   /* read from or written to peers' buffers */
    unsigned long long nodes_runs[MPIDI_PIP_MCOLL_NCOLL];       /* of runs: across nodes */
    unsigned long long steps;   /* internode steps, all calls */
    unsigned long long last_steps;      /* internode steps of the last call across nodes */
} MPIDI_PIP_mcoll_global_t;

extern MPIDI_PIP_mcoll_global_t MPIDI_PIP_mcoll_global;

/* The communicator's state, set up by its first pip_mcoll collective (a
 * collective call itself: every rank gets here together). */
int MPIDI_PIP_mcoll_get(MPIR_Comm * comm, MPIDI_PIP_mcoll_comm_t ** st);
/* Scratch of at least size bytes, or NULL; stage: a second one. */
void *MPIDI_PIP_mcoll_tmp(MPIDI_PIP_mcoll_comm_t * st, size_t size);
void *MPIDI_PIP_mcoll_stage(MPIDI_PIP_mcoll_comm_t * st, size_t size);

/* Helpers of the algorithms (pip_mcoll_intra.c, pip_mcoll_nodes.c). */

/* Where count elements of datatype at buf start, if they form one block. */
static inline void *contig_start(const void *buf, MPI_Aint count, MPI_Datatype datatype)
{
    int contig;
    MPIR_Datatype_is_contig(datatype, &contig);
    if (!contig || (count > 1 && !MPIR_CX_mcoll_contig(datatype)))
        return NULL;
    if (HANDLE_IS_BUILTIN(datatype))
        return (void *) buf;
    MPI_Aint true_lb, true_extent;
    MPIR_Type_get_true_extent_impl(datatype, &true_lb, &true_extent);
    return (char *) buf + true_lb;
}

static inline int nomem(void)
{
    return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                MPI_ERR_OTHER, "**nomem", 0);
}

/* A peer this rank depends on could not post its buffer. */
static inline int peer_failed(void)
{
    return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                MPI_ERR_OTHER, "**fail", 0);
}

static inline MPI_Aint type_size(MPI_Datatype datatype)
{
    MPI_Aint size;
    MPIR_Datatype_get_size_macro(datatype, size);
    return size;
}

static inline MPI_Aint type_extent(MPI_Datatype datatype)
{
    MPI_Aint extent;
    MPIR_Datatype_get_extent_macro(datatype, extent);
    return extent;
}

/* Across nodes (pip_mcoll_nodes.c); st->nodes is set. */
int MPIDI_PIP_mcoll_scatter_nodes(MPIDI_PIP_mcoll_comm_t * st, const void *sendbuf,
                                  MPI_Aint sendcount, MPI_Datatype sendtype, void *recvbuf,
                                  MPI_Aint recvcount, MPI_Datatype recvtype, int root,
                                  MPIR_Comm * comm, MPIR_Errflag_t * errflag);
int MPIDI_PIP_mcoll_allgather_nodes(MPIDI_PIP_mcoll_comm_t * st, const void *sendbuf,
                                    MPI_Aint sendcount, MPI_Datatype sendtype, void *recvbuf,
                                    MPI_Aint recvcount, MPI_Datatype recvtype,
                                    MPIR_Comm * comm, MPIR_Errflag_t * errflag);
int MPIDI_PIP_mcoll_allreduce_nodes(MPIDI_PIP_mcoll_comm_t * st, const void *sendbuf,
                                    void *recvbuf, MPI_Aint count, MPI_Datatype datatype,
                                    MPI_Op op, MPIR_Comm * comm, MPIR_Errflag_t * errflag);

/* inout = in op inout, as MPIR_Reduce_local: MPI_SUM and MPI_PROD on the
 * 4- and 8-byte arithmetic types by SIMD loops (pip_mcoll_vec.h), the rest
 * by MPICH. */
static inline int MPIDI_PIP_mcoll_reduce_local(const void *in, void *inout, MPI_Aint count,
                                               MPI_Datatype datatype, MPI_Op op)
{
    int vop = op == MPI_SUM ? MPIDI_PIP_VEC_SUM : op == MPI_PROD ? MPIDI_PIP_VEC_PROD : -1;
    int vtype = -1;
    if (vop >= 0 && HANDLE_IS_BUILTIN(datatype)) {
        if (datatype == MPI_FLOAT || datatype == MPI_REAL4)
            vtype = MPIDI_PIP_VEC_F32;
        else if (datatype == MPI_DOUBLE || datatype == MPI_REAL8)
            vtype = MPIDI_PIP_VEC_F64;
        else if (datatype == MPI_INT || datatype == MPI_UNSIGNED || datatype == MPI_INT32_T ||
                 datatype == MPI_UINT32_T || datatype == MPI_INTEGER4)
            vtype = sizeof(int) == 4 ? MPIDI_PIP_VEC_U32 : -1;
        else if (datatype == MPI_LONG || datatype == MPI_UNSIGNED_LONG ||
                 datatype == MPI_LONG_LONG || datatype == MPI_UNSIGNED_LONG_LONG ||
                 datatype == MPI_INT64_T || datatype == MPI_UINT64_T || datatype == MPI_INTEGER8)
            vtype = MPIR_Datatype_get_basic_size(datatype) == 8 ? MPIDI_PIP_VEC_U64 : -1;
    }
    if (vtype >= 0 && MPIDI_PIP_mcoll_vec(vtype, vop, in, inout, (size_t) count))
        return MPI_SUCCESS;
    return MPIR_Reduce_local(in, inout, count, datatype, op);
}

static inline void MPIDI_PIP_mcoll_count(int coll, size_t bytes)
{
    __atomic_fetch_add(&MPIDI_PIP_mcoll_global.runs[coll], 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&MPIDI_PIP_mcoll_global.bytes, bytes, __ATOMIC_RELAXED);
}

static inline void MPIDI_PIP_mcoll_count_nodes(int coll, unsigned steps)
{
    __atomic_fetch_add(&MPIDI_PIP_mcoll_global.nodes_runs[coll], 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&MPIDI_PIP_mcoll_global.steps, steps, __ATOMIC_RELAXED);
    __atomic_store_n(&MPIDI_PIP_mcoll_global.last_steps, steps, __ATOMIC_RELAXED);
}

#endif /* PIP_MCOLL_H_INCLUDED */
