/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * MPICH-CX PiP-MColl: collectives among ranks that share one address space
 * (paper ch. 4, §4.3.4: bcast, gather and reduce by posted addresses; plus
 * scatter, allgather and allreduce built the same way). Each rank posts the
 * address of what it gives or where it wants data, and after one meeting
 * every rank copies or reduces straight between the buffers: one copy per
 * byte, no bounce through shared memory. Design: doc/design/pip-mcoll.md.
 *
 * Datatype handles mean nothing in a peer's copy of MPICH, so a rank never
 * reads a peer's datatype: a posted buffer is bytes laid out contiguously
 * (a rank whose own datatype is not contiguous packs it first, or unpacks
 * a peer's bytes into its own buffer).
 */

#include "pip_mcoll.h"

/* Called through a JSON tuning file (CSEL) the algorithms may meet a
 * communicator or datatype they do not apply to: they then run an MPICH
 * algorithm that applies to every case, named at the top of each. Across
 * nodes (pip_mcoll_nodes.c) run scatter, allgather and allreduce (the
 * latter for operations that commute); bcast and reduce there run MPICH's
 * node-aware algorithms (smp), whose node steps come back here on the node
 * communicator, and gather MPICH's binomial tree. */

/* Reductions work in blocks of this size, so that the running result stays
 * in cache while every source is folded into it. */
#define REDUCE_BLOCK 32768

/* The bytes of (buf, count, datatype) as one block: the buffer itself, or
 * a packed copy in scratch. */
static int bytes_of(MPIDI_PIP_mcoll_comm_t * st, const void *buf, MPI_Aint count,
                    MPI_Datatype datatype, size_t bytes, const void **out)
{
    *out = contig_start(buf, count, datatype);
    if (*out || !bytes)
        return MPI_SUCCESS;
    void *tmp = MPIDI_PIP_mcoll_tmp(st, bytes);
    if (!tmp)
        return nomem();
    *out = tmp;
    return MPIR_Localcopy(buf, count, datatype, tmp, bytes, MPI_BYTE);
}

/* bytes at src into (buf, count, datatype). */
static int bytes_to(const void *src, size_t bytes, void *buf, MPI_Aint count, MPI_Datatype datatype)
{
    void *dst = contig_start(buf, count, datatype);
    if (dst) {
        if (bytes)
            memcpy(dst, src, bytes);
        return MPI_SUCCESS;
    }
    return MPIR_Localcopy(src, bytes, MPI_BYTE, buf, count, datatype);
}

static int ok(int mpi_errno)
{
    return mpi_errno == MPI_SUCCESS;
}

/* Every collective ends the same way: the meeting after which no rank
 * reads another's buffers, the counters, the error flag. */
static int finish(MPIDI_PIP_mcoll_sync_t * s, int coll, size_t bytes, int mpi_errno,
                  MPIR_Errflag_t * errflag)
{
    MPIDI_PIP_mcoll_meet(s);
    MPIDI_PIP_mcoll_count(coll, bytes);
    if (mpi_errno)
        *errflag = MPIR_ERR_OTHER;
    return mpi_errno;
}

struct stage_fill {
    const void *buf;
    MPI_Aint count;
    MPI_Datatype datatype;
    size_t bytes;
    int mpi_errno;
};

static uint64_t fill_stage(char *stage, void *arg)
{
    struct stage_fill *f = arg;
    f->mpi_errno = MPIR_Localcopy(f->buf, f->count, f->datatype, stage, f->bytes, MPI_BYTE);
    return f->mpi_errno == MPI_SUCCESS;
}

/* Paper §4.3.4, small bcast: the root copies the data into its slot's
 * stage and leaves at once (a one-way step, pip_mcoll_sync.h); the others
 * copy it out. The stage lives in the pooled slot, which outlives the
 * communicator (a freed communicator's slot is given up only once every
 * peer has finished its last step). */
static int staged_bcast(MPIDI_PIP_mcoll_sync_t * s, void *buffer, MPI_Aint count,
                        MPI_Datatype datatype, size_t bytes, int root, MPIR_Errflag_t * errflag)
{
    int mpi_errno = MPI_SUCCESS;
    if (s->rank == root) {
        struct stage_fill f = { buffer, count, datatype, bytes, MPI_SUCCESS };
        MPIDI_PIP_mcoll_publish(s, fill_stage, &f);
        mpi_errno = f.mpi_errno;
    } else {
        const char *stage = MPIDI_PIP_mcoll_take(s, root);
        if (MPIDI_PIP_mcoll_take_info(s, root))
            mpi_errno = bytes_to(stage, bytes, buffer, count, datatype);
        else
            mpi_errno = peer_failed();
        MPIDI_PIP_mcoll_taken(s);
    }
    MPIDI_PIP_mcoll_count(MPIDI_PIP_MCOLL_BCAST, s->rank == root ? 0 : bytes);
    if (mpi_errno)
        *errflag = MPIR_ERR_OTHER;
    return mpi_errno;
}

int MPIR_Bcast_intra_pip_mcoll(void *buffer, MPI_Aint count, MPI_Datatype datatype, int root,
                               MPIR_Comm * comm, MPIR_Errflag_t * errflag)
{
    if (!MPIR_CX_mcoll_comm_ok(comm) || MPIR_CX_mcoll_comm_nodes(comm))
        return MPIR_Comm_is_parent_comm(comm) ?
            MPIR_Bcast_intra_smp(buffer, count, datatype, root, comm, errflag) :
            MPIR_Bcast_intra_binomial(buffer, count, datatype, root, comm, errflag);
    MPIDI_PIP_mcoll_comm_t *st;
    const void *src = NULL;
    size_t bytes = (size_t) count * type_size(datatype);
    int mpi_errno = MPIDI_PIP_mcoll_get(comm, &st);
    if (mpi_errno)
        return mpi_errno;
    MPIDI_PIP_mcoll_sync_t *s = &st->sync;

    if (bytes <= MPIDI_PIP_MCOLL_STAGE)
        return staged_bcast(s, buffer, count, datatype, bytes, root, errflag);
    if (s->rank == root)
        mpi_errno = bytes_of(st, buffer, count, datatype, bytes, &src);
    MPIDI_PIP_mcoll_post(s, src, NULL, ok(mpi_errno));
    if (s->rank != root) {
        if (MPIDI_PIP_mcoll_info(s, root))
            mpi_errno = bytes_to(MPIDI_PIP_mcoll_addr(s, root, 0), bytes, buffer, count, datatype);
        else
            mpi_errno = peer_failed();
    }
    return finish(s, MPIDI_PIP_MCOLL_BCAST, s->rank == root ? 0 : bytes, mpi_errno, errflag);
}

int MPIR_Gather_intra_pip_mcoll(const void *sendbuf, MPI_Aint sendcount, MPI_Datatype sendtype,
                                void *recvbuf, MPI_Aint recvcount, MPI_Datatype recvtype,
                                int root, MPIR_Comm * comm, MPIR_Errflag_t * errflag)
{
    if (!MPIR_CX_mcoll_comm_ok(comm) || MPIR_CX_mcoll_comm_nodes(comm))
        return MPIR_Gather_intra_binomial(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                          recvtype, root, comm, errflag);
    MPIDI_PIP_mcoll_comm_t *st;
    const void *mine = NULL;
    char *dst = NULL;
    int mpi_errno = MPIDI_PIP_mcoll_get(comm, &st);
    if (mpi_errno)
        return mpi_errno;
    MPIDI_PIP_mcoll_sync_t *s = &st->sync;
    size_t bytes, moved = 0;

    /* the root posts its receive buffer if a block there is plain bytes,
     * the others what they send */
    if (s->rank == root) {
        bytes = (size_t) recvcount *type_size(recvtype);
        dst = contig_start(recvbuf, recvcount * s->size, recvtype);
        MPIDI_PIP_mcoll_post(s, dst, NULL, 1);
    } else {
        bytes = (size_t) sendcount *type_size(sendtype);
        mpi_errno = bytes_of(st, sendbuf, sendcount, sendtype, bytes, &mine);
        MPIDI_PIP_mcoll_post(s, mine, NULL, ok(mpi_errno));
    }

    if (s->rank != root) {
        /* into the root's buffer; or the root unpacks from ours */
        dst = (char *) MPIDI_PIP_mcoll_addr(s, root, 0);
        if (dst && ok(mpi_errno) && bytes) {
            memcpy(dst + s->rank * bytes, mine, bytes);
            moved = bytes;
        }
    } else {
        MPI_Aint extent = type_extent(recvtype);
        for (int j = 0; j < s->size; j++) {
            int err = MPI_SUCCESS;
            char *block = (char *) recvbuf + j * recvcount * extent;
            if (j == root) {
                if (sendbuf != MPI_IN_PLACE)
                    err = MPIR_Localcopy(sendbuf, sendcount, sendtype, block, recvcount, recvtype);
            } else if (!MPIDI_PIP_mcoll_info(s, j)) {
                err = peer_failed();
            } else if (!dst) {
                err = bytes_to(MPIDI_PIP_mcoll_addr(s, j, 0), bytes, block, recvcount, recvtype);
                moved += bytes;
            }
            if (err && !mpi_errno)
                mpi_errno = err;
        }
    }
    return finish(s, MPIDI_PIP_MCOLL_GATHER, moved, mpi_errno, errflag);
}

int MPIR_Scatter_intra_pip_mcoll(const void *sendbuf, MPI_Aint sendcount, MPI_Datatype sendtype,
                                 void *recvbuf, MPI_Aint recvcount, MPI_Datatype recvtype,
                                 int root, MPIR_Comm * comm, MPIR_Errflag_t * errflag)
{
    if (!MPIR_CX_mcoll_comm_ok(comm))
        return MPIR_Scatter_intra_binomial(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                           recvtype, root, comm, errflag);
    MPIDI_PIP_mcoll_comm_t *st;
    const void *src = NULL;
    int mpi_errno = MPIDI_PIP_mcoll_get(comm, &st);
    if (mpi_errno)
        return mpi_errno;
    if (st->nodes)
        return MPIDI_PIP_mcoll_scatter_nodes(st, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                             recvtype, root, comm, errflag);
    MPIDI_PIP_mcoll_sync_t *s = &st->sync;
    size_t bytes;

    if (s->rank == root) {
        bytes = (size_t) sendcount *type_size(sendtype);
        mpi_errno = bytes_of(st, sendbuf, sendcount * s->size, sendtype, bytes * s->size, &src);
        MPIDI_PIP_mcoll_post(s, src, NULL, ok(mpi_errno));
        if (recvbuf != MPI_IN_PLACE && ok(mpi_errno))
            mpi_errno = MPIR_Localcopy((const char *) sendbuf +
                                       root * sendcount * type_extent(sendtype), sendcount,
                                       sendtype, recvbuf, recvcount, recvtype);
    } else {
        bytes = (size_t) recvcount *type_size(recvtype);
        MPIDI_PIP_mcoll_post(s, NULL, NULL, 1);
        if (MPIDI_PIP_mcoll_info(s, root))
            mpi_errno = bytes_to((const char *) MPIDI_PIP_mcoll_addr(s, root, 0) +
                                 s->rank * bytes, bytes, recvbuf, recvcount, recvtype);
        else
            mpi_errno = peer_failed();
    }
    return finish(s, MPIDI_PIP_MCOLL_SCATTER, s->rank == root ? 0 : bytes, mpi_errno, errflag);
}

int MPIR_Allgather_intra_pip_mcoll(const void *sendbuf, MPI_Aint sendcount,
                                   MPI_Datatype sendtype, void *recvbuf, MPI_Aint recvcount,
                                   MPI_Datatype recvtype, MPIR_Comm * comm,
                                   MPIR_Errflag_t * errflag)
{
    if (!MPIR_CX_mcoll_comm_ok(comm))
        return MPIR_Allgather_intra_ring(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                         recvtype, comm, errflag);
    MPIDI_PIP_mcoll_comm_t *st;
    const void *mine = NULL;
    int mpi_errno = MPIDI_PIP_mcoll_get(comm, &st);
    if (mpi_errno)
        return mpi_errno;
    if (st->nodes)
        return MPIDI_PIP_mcoll_allgather_nodes(st, sendbuf, sendcount, sendtype, recvbuf,
                                               recvcount, recvtype, comm, errflag);
    MPIDI_PIP_mcoll_sync_t *s = &st->sync;
    size_t bytes = (size_t) recvcount * type_size(recvtype);
    MPI_Aint extent = type_extent(recvtype);
    char *my_block = (char *) recvbuf + s->rank * recvcount * extent;

    if (sendbuf == MPI_IN_PLACE)
        mpi_errno = bytes_of(st, my_block, recvcount, recvtype, bytes, &mine);
    else
        mpi_errno = bytes_of(st, sendbuf, sendcount, sendtype, bytes, &mine);
    MPIDI_PIP_mcoll_post(s, mine, NULL, ok(mpi_errno));
    for (int k = 1; k < s->size; k++) {
        int j = (s->rank + k) % s->size, err;
        if (MPIDI_PIP_mcoll_info(s, j))
            err = bytes_to(MPIDI_PIP_mcoll_addr(s, j, 0), bytes,
                           (char *) recvbuf + j * recvcount * extent, recvcount, recvtype);
        else
            err = peer_failed();
        if (err && !mpi_errno)
            mpi_errno = err;
    }
    if (sendbuf != MPI_IN_PLACE && !mpi_errno)
        mpi_errno = MPIR_Localcopy(sendbuf, sendcount, sendtype, my_block, recvcount, recvtype);
    return finish(s, MPIDI_PIP_MCOLL_ALLGATHER, bytes * (s->size - 1), mpi_errno, errflag);
}

/* Elements [lo, hi) of every rank's posted source (address 0), reduced in
 * rank order (MPI's order, for operations that do not commute) into out,
 * which holds element lo. bounce: a REDUCE_BLOCK scratch, given when out is
 * also a source. */
static int reduce_part(MPIDI_PIP_mcoll_sync_t * s, size_t lo, size_t hi, size_t esz,
                       MPI_Datatype datatype, MPI_Op op, char *out, char *bounce)
{
    size_t block = REDUCE_BLOCK / esz ? REDUCE_BLOCK / esz : 1;
    for (size_t a = lo; a < hi; a += block) {
        size_t n = hi - a < block ? hi - a : block;
        char *acc = bounce ? bounce : out + (a - lo) * esz;
        int mpi_errno = MPIDI_PIP_mcoll_fold_inputs(s, a, n, esz, datatype, op, acc);
        if (mpi_errno)
            return mpi_errno;
        if (bounce)
            memcpy(out + (a - lo) * esz, bounce, n * esz);
    }
    return MPI_SUCCESS;
}

/* Paper §4.3.4, large reduce: every rank reduces its part of all sources
 * straight into the root's buffer (parts of at least
 * MPIR_CVAR_CH4_CX_MCOLL_PART_MIN bytes, so small vectors take one rank:
 * the root). The datatype is contiguous (the algorithm's restriction). */
int MPIR_Reduce_intra_pip_mcoll(const void *sendbuf, void *recvbuf, MPI_Aint count,
                                MPI_Datatype datatype, MPI_Op op, int root,
                                MPIR_Comm * comm, MPIR_Errflag_t * errflag)
{
    if (MPIR_CX_mcoll_comm_ok(comm) && MPIR_CX_mcoll_comm_nodes(comm) &&
        MPIR_Comm_is_parent_comm(comm) && MPIR_Op_is_commutative(op))
        return MPIR_Reduce_intra_smp(sendbuf, recvbuf, count, datatype, op, root, comm, errflag);
    if (!MPIR_CX_mcoll_comm_ok(comm) || MPIR_CX_mcoll_comm_nodes(comm) ||
        !MPIR_CX_mcoll_contig(datatype))
        return MPIR_Reduce_intra_binomial(sendbuf, recvbuf, count, datatype, op, root, comm,
                                          errflag);
    MPIDI_PIP_mcoll_comm_t *st;
    int mpi_errno = MPIDI_PIP_mcoll_get(comm, &st);
    if (mpi_errno)
        return mpi_errno;
    MPIDI_PIP_mcoll_sync_t *s = &st->sync;
    size_t esz = type_size(datatype), lo, hi, moved = 0;
    const char *src = contig_start(sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, count, datatype);
    char *dst = s->rank == root ? contig_start(recvbuf, count, datatype) : NULL;
    int nparts = MPIDI_PIP_mcoll_nparts(count, esz, s->size, MPIR_CVAR_CH4_CX_MCOLL_PART_MIN);
    int part = (s->rank - root + s->size) % s->size;

    MPIDI_PIP_mcoll_post(s, src, dst, 1);
    if (part < nparts && count) {
        MPIDI_PIP_mcoll_part(count, nparts, part, &lo, &hi);
        dst = (char *) MPIDI_PIP_mcoll_addr(s, root, 1);
        /* in place at the root, its part of the result overwrites a source */
        char *bounce = NULL;
        if (dst == MPIDI_PIP_mcoll_addr(s, root, 0)) {
            size_t b = (REDUCE_BLOCK / esz ? REDUCE_BLOCK / esz : 1) * esz;
            bounce = MPIDI_PIP_mcoll_tmp(st, b);
            if (!bounce)
                mpi_errno = nomem();
        }
        if (!mpi_errno)
            mpi_errno = reduce_part(s, lo, hi, esz, datatype, op, dst + lo * esz, bounce);
        moved = (hi - lo) * esz * s->size;
    }
    return finish(s, MPIDI_PIP_MCOLL_REDUCE, moved, mpi_errno, errflag);
}

/* Small vectors (a rank reads up to MPIR_CVAR_CH4_CX_MCOLL_ALLREDUCE_SMALL
 * bytes of its peers' inputs): every rank reduces all sources itself and
 * writes nothing another rank reads. Larger: reduce-scatter then
 * allgather, both by posted addresses: each rank reduces its part into its
 * own receive buffer, then copies the others' parts from theirs. */
int MPIR_Allreduce_intra_pip_mcoll(const void *sendbuf, void *recvbuf, MPI_Aint count,
                                   MPI_Datatype datatype, MPI_Op op, MPIR_Comm * comm,
                                   MPIR_Errflag_t * errflag)
{
    if (!MPIR_CX_mcoll_comm_ok(comm) || !MPIR_CX_mcoll_contig(datatype) ||
        (MPIR_CX_mcoll_comm_nodes(comm) && !MPIR_Op_is_commutative(op)))
        return MPIR_Allreduce_intra_recursive_doubling(sendbuf, recvbuf, count, datatype, op,
                                                       comm, errflag);
    MPIDI_PIP_mcoll_comm_t *st;
    int mpi_errno = MPIDI_PIP_mcoll_get(comm, &st);
    if (mpi_errno)
        return mpi_errno;
    if (st->nodes)
        return MPIDI_PIP_mcoll_allreduce_nodes(st, sendbuf, recvbuf, count, datatype, op, comm,
                                               errflag);
    MPIDI_PIP_mcoll_sync_t *s = &st->sync;
    size_t esz = type_size(datatype), bytes = count * esz, lo, hi;
    bool in_place = sendbuf == MPI_IN_PLACE;
    char *dst = contig_start(recvbuf, count, datatype);
    const char *src = in_place ? dst : contig_start(sendbuf, count, datatype);
    int nparts = MPIDI_PIP_mcoll_nparts(count, esz, s->size, MPIR_CVAR_CH4_CX_MCOLL_PART_MIN);
    char *tmp = NULL;

    if (bytes * (s->size - 1) <= (size_t) MPIR_CVAR_CH4_CX_MCOLL_ALLREDUCE_SMALL || nparts == 1) {
        if (in_place && bytes && !(tmp = MPIDI_PIP_mcoll_tmp(st, bytes)))
            mpi_errno = nomem();
        MPIDI_PIP_mcoll_post(s, src, NULL, ok(mpi_errno));
        for (int j = 0; j < s->size; j++)
            if (!MPIDI_PIP_mcoll_info(s, j) && !mpi_errno)
                mpi_errno = peer_failed();
        if (!mpi_errno && count)
            mpi_errno = reduce_part(s, 0, count, esz, datatype, op, tmp ? tmp : dst, NULL);
        /* in place, the result waits until nobody reads this rank's source */
        MPIDI_PIP_mcoll_meet(s);
        if (tmp && !mpi_errno)
            memcpy(dst, tmp, bytes);
        MPIDI_PIP_mcoll_count(MPIDI_PIP_MCOLL_ALLREDUCE, bytes * (s->size - 1));
        if (mpi_errno)
            *errflag = MPIR_ERR_OTHER;
        return mpi_errno;
    }

    bool mine = s->rank < nparts;
    if (mine)
        MPIDI_PIP_mcoll_part(count, nparts, s->rank, &lo, &hi);
    if (in_place && mine && !(tmp = MPIDI_PIP_mcoll_tmp(st, (hi - lo) * esz)))
        mpi_errno = nomem();
    MPIDI_PIP_mcoll_post(s, src, dst, ok(mpi_errno));
    /* the receive buffers stay put until the last meeting; their addresses
     * in the slots do not (the meetings in between post their own) */
    for (int j = 0; j < s->size; j++) {
        st->posted[j] = MPIDI_PIP_mcoll_addr(s, j, 1);
        if (!MPIDI_PIP_mcoll_info(s, j) && !mpi_errno)
            mpi_errno = peer_failed();
    }
    if (mine && !mpi_errno)
        mpi_errno = reduce_part(s, lo, hi, esz, datatype, op, tmp ? tmp : dst + lo * esz, NULL);
    MPIDI_PIP_mcoll_meet(s);
    if (in_place) {
        /* the part goes home once nobody reads the sources; every rank
         * meets, with a part or not (the step counts must line up) */
        if (tmp && !mpi_errno)
            memcpy(dst + lo * esz, tmp, (hi - lo) * esz);
        MPIDI_PIP_mcoll_meet(s);
    }
    for (int k = 1; k < s->size && !mpi_errno; k++) {
        int j = (s->rank + k) % s->size;
        size_t jlo, jhi;
        if (j >= nparts)
            continue;
        MPIDI_PIP_mcoll_part(count, nparts, j, &jlo, &jhi);
        memcpy(dst + jlo * esz, (const char *) st->posted[j] + jlo * esz, (jhi - jlo) * esz);
    }
    return finish(s, MPIDI_PIP_MCOLL_ALLREDUCE, bytes * 2, mpi_errno, errflag);
}
