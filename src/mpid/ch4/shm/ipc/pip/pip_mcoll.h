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

/* The SIMD loop for a builtin arithmetic type (pip_mcoll_vec.h), or -1:
 * every integer type MPICH's MPI_SUM and MPI_PROD take goes by its size. */
static inline int MPIDI_PIP_mcoll_vec_type(MPI_Datatype dt)
{
    if (!HANDLE_IS_BUILTIN(dt))
        return -1;
    if (dt == MPI_FLOAT || dt == MPI_REAL4)
        return MPIDI_PIP_VEC_F32;
    if (dt == MPI_DOUBLE || dt == MPI_REAL8)
        return MPIDI_PIP_VEC_F64;
    if (dt == MPI_CHAR || dt == MPI_SIGNED_CHAR || dt == MPI_UNSIGNED_CHAR ||
        dt == MPI_INT8_T || dt == MPI_UINT8_T || dt == MPI_SHORT || dt == MPI_UNSIGNED_SHORT ||
        dt == MPI_INT16_T || dt == MPI_UINT16_T || dt == MPI_INT || dt == MPI_UNSIGNED ||
        dt == MPI_INT32_T || dt == MPI_UINT32_T || dt == MPI_LONG || dt == MPI_UNSIGNED_LONG ||
        dt == MPI_LONG_LONG || dt == MPI_UNSIGNED_LONG_LONG || dt == MPI_INT64_T ||
        dt == MPI_UINT64_T || dt == MPI_AINT || dt == MPI_OFFSET || dt == MPI_COUNT ||
        dt == MPI_INTEGER || dt == MPI_CHARACTER || dt == MPI_INTEGER1 || dt == MPI_INTEGER2 ||
        dt == MPI_INTEGER4 || dt == MPI_INTEGER8) {
        switch (MPIR_Datatype_get_basic_size(dt)) {
            case 1:
                return MPIDI_PIP_VEC_U8;
            case 2:
                return MPIDI_PIP_VEC_U16;
            case 4:
                return MPIDI_PIP_VEC_U32;
            case 8:
                return MPIDI_PIP_VEC_U64;
        }
    }
    return -1;
}

/* out = in op in2, as MPIR_Reduce_local would leave it in in2 (out may be
 * in2, not in): MPI_SUM and MPI_PROD on the arithmetic types by SIMD loops
 * (pip_mcoll_vec.h) in one pass; the rest by a copy and MPICH. */
static inline int MPIDI_PIP_mcoll_reduce3(const void *in, const void *in2, void *out,
                                          MPI_Aint count, MPI_Datatype datatype, MPI_Op op)
{
    int vop = op == MPI_SUM ? MPIDI_PIP_VEC_SUM : op == MPI_PROD ? MPIDI_PIP_VEC_PROD : -1;
    int vtype = vop >= 0 ? MPIDI_PIP_mcoll_vec_type(datatype) : -1;
    if (vtype >= 0 && MPIDI_PIP_mcoll_vec3(vtype, vop, in, in2, out, (size_t) count))
        return MPI_SUCCESS;
    if (out != in2) {
        MPI_Aint size;
        MPIR_Datatype_get_size_macro(datatype, size);
        memcpy(out, in2, count * size);
    }
    return MPIR_Reduce_local(in, out, count, datatype, op);
}

/* inout = in op inout, as MPIR_Reduce_local */
static inline int MPIDI_PIP_mcoll_reduce_local(const void *in, void *inout, MPI_Aint count,
                                               MPI_Datatype datatype, MPI_Op op)
{
    return MPIDI_PIP_mcoll_reduce3(in, inout, inout, count, datatype, op);
}

/* acc = elements [a, a + n) of every rank's posted input (address 0)
 * folded in rank order (MPI's, for operations that do not commute): the
 * first fold reads the last two inputs and writes acc, which is none of
 * the inputs. */
static inline int MPIDI_PIP_mcoll_fold_inputs(const MPIDI_PIP_mcoll_sync_t * s, size_t a,
                                              size_t n, size_t esz, MPI_Datatype datatype,
                                              MPI_Op op, void *acc)
{
    const void *last = (const char *) MPIDI_PIP_mcoll_addr(s, s->size - 1, 0) + a * esz;
    if (s->size == 1) {
        memcpy(acc, last, n * esz);
        return MPI_SUCCESS;
    }
    int mpi_errno =
        MPIDI_PIP_mcoll_reduce3((const char *) MPIDI_PIP_mcoll_addr(s, s->size - 2, 0) + a * esz,
                                last, acc, n, datatype, op);
    for (int i = s->size - 3; i >= 0 && !mpi_errno; i--)
        mpi_errno =
            MPIDI_PIP_mcoll_reduce_local((const char *) MPIDI_PIP_mcoll_addr(s, i, 0) + a * esz,
                                         acc, n, datatype, op);
    return mpi_errno;
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
