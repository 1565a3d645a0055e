/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * MPICH-CX PiP-MColl across nodes (paper ch. 4, §4.3.3): "multi-object"
 * collectives, in which the first P ranks of every node (P: the smallest
 * node's size, so nodes of unequal sizes work) each talk to the rank of
 * the same local index on other nodes, while a node's ranks share their
 * data by posted addresses. Design: doc/design/pip-mcoll.md.
 *
 * A node's data is gathered at one of its ranks (the holder: local index
 * 0, or a scatter's root), in a "stage" buffer the others read and write
 * by address. Nodes are taken in a rotated order (the rank's own node, or
 * the root's, first), so that what a node holds is one contiguous range.
 * The node meetings are the communicator state's sync (this node's ranks).
 */

#include "pip_mcoll.h"

/* The comm rank of local index l on node m. */
static int rank_at(const MPIDI_PIP_mcoll_nodes_t * ns, int m, int l)
{
    return ns->rank[ns->first[m] + l];
}

static int keep(int mpi_errno, int err)
{
    return mpi_errno ? mpi_errno : err;
}

/* How many steps a tree or Bruck's algorithm with this base takes over n
 * nodes: ceil(log_base n). */
static unsigned log_steps(int n, int base)
{
    unsigned steps = 0;
    for (long held = 1; held < n; held *= base)
        steps++;
    return steps;
}

/* Failures travel as MPICH's do: a rank that failed sets *errflag before
 * it sends, MPIC marks its messages (the tag's error bit), and receivers
 * see it in *errflag; or its message is short. Within a node they travel
 * in the meetings' info word (meet_ok). */
static int received(const MPI_Status * status, size_t expected, MPIR_Errflag_t * errflag)
{
    return *errflag || (size_t) MPIR_STATUS_GET_COUNT(*status) != expected ? peer_failed() :
        MPI_SUCCESS;
}

/* Send sbytes at sbuf to rank to and receive rbytes at rbuf from rank from
 * (either may be 0 bytes), both at once. Whatever fails, the peer gets a
 * message (an empty one), so that its step ends. */
static int exchange(const void *sbuf, size_t sbytes, int to, void *rbuf, size_t rbytes, int from,
                    int tag, MPIR_Comm * comm, MPIR_Errflag_t * errflag)
{
    MPIR_Request *req[2];
    MPI_Status status[2];
    int mpi_errno = MPIC_Irecv(rbuf, rbytes, MPI_BYTE, from, tag, comm, &req[0]);
    if (mpi_errno) {
        *errflag = MPIR_ERR_OTHER;
        MPIC_Send(NULL, 0, MPI_BYTE, to, tag, comm, errflag);
        return mpi_errno;
    }
    mpi_errno = MPIC_Isend(sbuf, sbytes, MPI_BYTE, to, tag, comm, &req[1], errflag);
    if (mpi_errno) {
        MPIC_Wait(req[0], errflag);
        MPIR_Request_free(req[0]);
        return mpi_errno;
    }
    mpi_errno = MPIC_Waitall(2, req, status, errflag);
    return keep(mpi_errno, received(&status[0], rbytes, errflag));
}

/* A meeting that carries whether this rank failed; a peer's failure
 * becomes this rank's error. */
static void meet_ok(MPIDI_PIP_mcoll_sync_t * s, int *mpi_errno)
{
    MPIDI_PIP_mcoll_post(s, NULL, NULL, *mpi_errno == MPI_SUCCESS);
    for (int j = 0; j < s->size && !*mpi_errno; j++)
        if (!MPIDI_PIP_mcoll_info(s, j))
            *mpi_errno = peer_failed();
}

/* Paper §4.3.3, allgather for small messages (fixing notes §7 erratum 1:
 * the peer is node * P + local, here rank_at(node, local)): the stage
 * (the holder's, at the last meeting's address 0 of local index 0) holds
 * off[i] bytes before the block of node (node + i) % n; this node's block
 * is in place. With cur blocks held, object k-1 (k = 1..P) receives the
 * first min(cur, n - k cur) blocks held by node + k cur and sends as many
 * of its own to node - k cur; then cur grows P+1 times. The node meets
 * after each step: the next one sends what other objects received. No
 * remainder stage: the last step's counts are cut to what is missing. */
static int bruck(MPIDI_PIP_mcoll_comm_t * st, char *stage, int tag, MPIR_Comm * comm,
                 MPIR_Errflag_t * errflag)
{
    MPIDI_PIP_mcoll_nodes_t *ns = st->nodes;
    int n = ns->n, base = ns->objects + 1, k = ns->local + 1, mpi_errno = MPI_SUCCESS;
    const size_t *off = ns->off;

    for (long cur = 1; cur < n; cur *= base) {
        if (k < base && k * cur < n) {
            int cnt = (int) (cur < n - k * cur ? cur : n - k * cur);
            int to = (int) ((ns->node - k * cur % n + n) % n);
            int from = (int) ((ns->node + k * cur) % n);
            int err = MPI_SUCCESS;
            if (stage)
                err = exchange(stage, off[cnt], rank_at(ns, to, ns->local), stage + off[k * cur],
                               off[k * cur + cnt] - off[k * cur], rank_at(ns, from, ns->local),
                               tag, comm, errflag);
            else if (off[n]) {
                /* the holder had no memory: empty messages end the peers' steps */
                *errflag = MPIR_ERR_OTHER;
                exchange(NULL, 0, rank_at(ns, to, ns->local), NULL, 0,
                         rank_at(ns, from, ns->local), tag, comm, errflag);
                err = peer_failed();
            }
            mpi_errno = keep(mpi_errno, err);
        }
        meet_ok(&st->sync, &mpi_errno);
    }
    return mpi_errno;
}

/* The first meeting of the stage algorithms: the holder (local index 0)
 * posts a stage of bytes, every rank its input src; returns the stage or
 * NULL (the holder had no memory). */
static char *stage_meet(MPIDI_PIP_mcoll_comm_t * st, size_t bytes, const void *src, int *mpi_errno)
{
    char *stage = NULL;
    if (st->sync.rank == 0 && bytes && !(stage = MPIDI_PIP_mcoll_stage(st, bytes)))
        *mpi_errno = keep(*mpi_errno, nomem());
    MPIDI_PIP_mcoll_post(&st->sync, src, stage, stage || !bytes);
    if (!MPIDI_PIP_mcoll_info(&st->sync, 0))
        *mpi_errno = keep(*mpi_errno, peer_failed());
    return (char *) MPIDI_PIP_mcoll_addr(&st->sync, 0, 1);
}

/* Paper §4.3.3, allgather for medium and large messages: the multi-object
 * ring. Object l forwards, around the ring of nodes, the blocks of local
 * indices l, l+P, ... of every node (one block per step when nodes are
 * equal), each received straight into its own receive buffer at its place;
 * after every step's meeting the node's other ranks copy those blocks from
 * it (the intranode bcast, overlapped with the next step's traffic). A rank
 * whose receive type is not contiguous lands the blocks in scratch and
 * unpacks them at the end (the choice of algorithm cannot depend on it:
 * a peer may use another type). */
static int ring_allgather(MPIDI_PIP_mcoll_comm_t * st, const void *sendbuf, MPI_Aint sendcount,
                          MPI_Datatype sendtype, void *recvbuf, MPI_Aint recvcount,
                          MPI_Datatype recvtype, MPIR_Comm * comm, MPIR_Errflag_t * errflag)
{
    MPIDI_PIP_mcoll_nodes_t *ns = st->nodes;
    MPIDI_PIP_mcoll_sync_t *s = &st->sync;
    int n = ns->n, p = ns->objects, li = ns->local, size = comm->local_size;
    int mpi_errno = MPI_SUCCESS;
    size_t cb = (size_t) recvcount * type_size(recvtype);
    MPI_Aint extent = type_extent(recvtype);
    int right = rank_at(ns, (ns->node + 1) % n, li), left = rank_at(ns, (ns->node + n - 1) % n, li);
    char *land;

    if (MPIR_CX_mcoll_contig(recvtype)) {
        land = contig_start(recvbuf, recvcount * size, recvtype);
        if (sendbuf != MPI_IN_PLACE)
            mpi_errno = MPIR_Localcopy(sendbuf, sendcount, sendtype, land + comm->rank * cb, cb,
                                       MPI_BYTE);
    } else if ((land = MPIDI_PIP_mcoll_tmp(st, size * cb))) {
        mpi_errno = sendbuf != MPI_IN_PLACE ?
            MPIR_Localcopy(sendbuf, sendcount, sendtype, land + comm->rank * cb, cb, MPI_BYTE) :
            MPIR_Localcopy((char *) recvbuf + comm->rank * recvcount * extent, recvcount,
                           recvtype, land + comm->rank * cb, cb, MPI_BYTE);
    } else {
        mpi_errno = nomem();
    }
    MPIDI_PIP_mcoll_post(s, land, NULL, land && !mpi_errno);
    bool all_posted = true;
    for (int j = 0; j < s->size; j++) {
        st->posted[j] = MPIDI_PIP_mcoll_addr(s, j, 0);
        all_posted = all_posted && MPIDI_PIP_mcoll_info(s, j);
    }
    if (!all_posted) {
        mpi_errno = keep(mpi_errno, peer_failed());
        *errflag = MPIR_ERR_OTHER;      /* the next node learns it from our messages */
    }
    /* this node's blocks, from their owners */
    for (int j = 0; j < s->size && all_posted; j++) {
        int r = rank_at(ns, ns->node, j);
        if (j != li)
            memcpy(land + r * cb, (const char *) st->posted[j] + r * cb, cb);
    }
    for (int step = 0; step < n; step++) {
        int nreq = 0;
        MPIR_Request **req = NULL;
        if (li < p && step < n - 1) {
            int sm = (ns->node - step + n) % n, rm = (ns->node - step - 1 + n) % n;
            req = MPL_malloc(((ns->size[sm] + ns->size[rm]) / p + 2) * sizeof(*req), MPL_MEM_COLL);
            if (!req)
                mpi_errno = keep(mpi_errno, nomem());
            for (int j = li; j < ns->size[rm] && req; j += p) {
                int r = rank_at(ns, rm, j);
                int err = MPIC_Irecv(all_posted ? land + r * cb : NULL, all_posted ? cb : 0,
                                     MPI_BYTE, left, MPIR_ALLGATHER_TAG, comm, &req[nreq]);
                if (err)
                    mpi_errno = keep(mpi_errno, err);
                else
                    nreq++;
            }
            for (int j = li; j < ns->size[sm] && req; j += p) {
                int r = rank_at(ns, sm, j);
                const char *from = step ? land : (const char *) st->posted[j];
                int err = MPIC_Isend(all_posted ? from + r * cb : NULL, all_posted ? cb : 0,
                                     MPI_BYTE, right, MPIR_ALLGATHER_TAG, comm, &req[nreq],
                                     errflag);
                if (err)
                    mpi_errno = keep(mpi_errno, err);
                else
                    nreq++;
            }
        }
        /* the blocks the node's other objects received at the last step */
        if (step > 0 && all_posted) {
            int m = (ns->node - step + n) % n;
            for (int j = 0; j < ns->size[m]; j++) {
                int r = rank_at(ns, m, j);
                if (j % p != li)
                    memcpy(land + r * cb, (const char *) st->posted[j % p] + r * cb, cb);
            }
        }
        if (nreq) {
            mpi_errno = keep(mpi_errno, MPIC_Waitall(nreq, req, MPI_STATUSES_IGNORE, errflag));
            if (*errflag)
                mpi_errno = keep(mpi_errno, peer_failed());
        }
        MPL_free(req);
        if (step < n - 1)
            meet_ok(s, &mpi_errno);
    }
    if (land && land != (char *) recvbuf && all_posted && !MPIR_CX_mcoll_contig(recvtype))
        mpi_errno = keep(mpi_errno, MPIR_Localcopy(land, size * cb, MPI_BYTE, recvbuf,
                                                   recvcount * size, recvtype));
    MPIDI_PIP_mcoll_meet(s);
    MPIDI_PIP_mcoll_count(MPIDI_PIP_MCOLL_ALLGATHER, cb * size);
    MPIDI_PIP_mcoll_count_nodes(MPIDI_PIP_MCOLL_ALLGATHER, n - 1);
    if (mpi_errno)
        *errflag = MPIR_ERR_OTHER;
    return mpi_errno;
}

int MPIDI_PIP_mcoll_allgather_nodes(MPIDI_PIP_mcoll_comm_t * st, const void *sendbuf,
                                    MPI_Aint sendcount, MPI_Datatype sendtype, void *recvbuf,
                                    MPI_Aint recvcount, MPI_Datatype recvtype,
                                    MPIR_Comm * comm, MPIR_Errflag_t * errflag)
{
    MPIDI_PIP_mcoll_nodes_t *ns = st->nodes;
    int n = ns->n, mpi_errno = MPI_SUCCESS;
    size_t cb = (size_t) recvcount * type_size(recvtype);
    MPI_Aint extent = type_extent(recvtype);

    if (cb > (size_t) MPIR_CVAR_CH4_CX_MCOLL_NODES_ALLGATHER_RING)
        return ring_allgather(st, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                              comm, errflag);
    for (int i = 0; i < n; i++)
        ns->off[i + 1] = ns->off[i] + ns->size[(ns->node + i) % n] * cb;
    char *stage = stage_meet(st, ns->off[n], NULL, &mpi_errno);
    /* this rank's block into this node's block, at the head of the stage */
    if (stage && cb) {
        int err = sendbuf == MPI_IN_PLACE ?
            MPIR_Localcopy((char *) recvbuf + comm->rank * recvcount * extent, recvcount,
                           recvtype, stage + ns->local * cb, cb, MPI_BYTE) :
            MPIR_Localcopy(sendbuf, sendcount, sendtype, stage + ns->local * cb, cb, MPI_BYTE);
        mpi_errno = keep(mpi_errno, err);
    }
    meet_ok(&st->sync, &mpi_errno);
    if (mpi_errno)
        *errflag = MPIR_ERR_OTHER;
    mpi_errno = keep(mpi_errno, bruck(st, stage, MPIR_ALLGATHER_TAG, comm, errflag));
    /* every rank copies every block to its place (the intranode bcast) */
    for (int i = 0; i < n && stage && cb; i++) {
        int m = (ns->node + i) % n;
        for (int j = 0; j < ns->size[m]; j++) {
            int r = rank_at(ns, m, j);
            if (r == comm->rank && sendbuf == MPI_IN_PLACE)
                continue;
            mpi_errno = keep(mpi_errno, MPIR_Localcopy(stage + ns->off[i] + j * cb, cb, MPI_BYTE,
                                                       (char *) recvbuf + r * recvcount * extent,
                                                       recvcount, recvtype));
        }
    }
    MPIDI_PIP_mcoll_meet(&st->sync);
    MPIDI_PIP_mcoll_count(MPIDI_PIP_MCOLL_ALLGATHER, cb * comm->local_size);
    MPIDI_PIP_mcoll_count_nodes(MPIDI_PIP_MCOLL_ALLGATHER, log_steps(n, ns->objects + 1));
    if (mpi_errno)
        *errflag = MPIR_ERR_OTHER;
    return mpi_errno;
}

/* Elements [*lo, *hi) of the part of chunk c (of n) that object l (of p)
 * carries in the rings. */
static void ring_part(size_t count, int n, int c, int p, int l, size_t *lo, size_t *hi)
{
    size_t clo, chi, slo, shi;
    MPIDI_PIP_mcoll_part(count, n, c, &clo, &chi);
    MPIDI_PIP_mcoll_part(chi - clo, p, l, &slo, &shi);
    *lo = clo + slo;
    *hi = clo + shi;
}

/* Paper §4.3.3, allreduce for medium and large messages: the vector is cut
 * into n chunks (one per node), each chunk into P parts; object l runs a
 * ring over the nodes with part l of every chunk: reduce-scatter (after
 * n-1 steps node m holds chunk m+1 complete), then allgather, both in the
 * stage. The rings of a node touch disjoint parts: no meetings between
 * steps. The operation commutes (the rings reduce in ring order). */
static int rings(MPIDI_PIP_mcoll_comm_t * st, char *stage, size_t count, size_t esz,
                 MPI_Datatype datatype, MPI_Op op, MPIR_Comm * comm, MPIR_Errflag_t * errflag)
{
    MPIDI_PIP_mcoll_nodes_t *ns = st->nodes;
    int n = ns->n, p = ns->objects, l = ns->local, mpi_errno = MPI_SUCCESS;
    int right = rank_at(ns, (ns->node + 1) % n, l), left = rank_at(ns, (ns->node + n - 1) % n, l);
    size_t slo, shi, rlo, rhi, most = (count + (size_t) n * p - 1) / ((size_t) n * p) + 1;
    char *tmp = MPIDI_PIP_mcoll_tmp(st, most * esz);

    if (!tmp || !stage)
        mpi_errno = tmp ? peer_failed() : nomem();
    for (int s = 0; s < n - 1; s++) {
        ring_part(count, n, (ns->node - s + n) % n, p, l, &slo, &shi);
        ring_part(count, n, (ns->node - s - 1 + 2 * n) % n, p, l, &rlo, &rhi);
        if (mpi_errno) {
            /* still send (nothing) and receive, so that the ring ends */
            *errflag = MPIR_ERR_OTHER;
            exchange(NULL, 0, right, tmp, tmp ? (rhi - rlo) * esz : 0, left,
                     MPIR_ALLREDUCE_TAG, comm, errflag);
            continue;
        }
        mpi_errno = exchange(stage + slo * esz, (shi - slo) * esz, right, tmp, (rhi - rlo) * esz,
                             left, MPIR_ALLREDUCE_TAG, comm, errflag);
        if (!mpi_errno)
            mpi_errno =
                MPIDI_PIP_mcoll_reduce_local(tmp, stage + rlo * esz, rhi - rlo, datatype, op);
    }
    for (int s = 0; s < n - 1; s++) {
        ring_part(count, n, (ns->node + 1 - s + n) % n, p, l, &slo, &shi);
        ring_part(count, n, (ns->node - s + n) % n, p, l, &rlo, &rhi);
        if (mpi_errno) {
            *errflag = MPIR_ERR_OTHER;
            exchange(NULL, 0, right, tmp, tmp ? (rhi - rlo) * esz : 0, left,
                     MPIR_ALLREDUCE_TAG, comm, errflag);
            continue;
        }
        mpi_errno = exchange(stage + slo * esz, (shi - slo) * esz, right, stage + rlo * esz,
                             (rhi - rlo) * esz, left, MPIR_ALLREDUCE_TAG, comm, errflag);
    }
    return mpi_errno;
}

/* Each node first reduces its ranks' inputs into the head of the stage
 * (every rank a part, as the single-node reduce). Small vectors: Bruck's
 * allgather of the node results (log_{P+1} n steps), and every rank folds
 * them in node order, the same on every rank (fixing notes §7 erratum 2,
 * the paper's recursive Bruck with remainder buffers: this needs no
 * remainder stage). Larger: the rings above, then every rank copies the
 * result. */
int MPIDI_PIP_mcoll_allreduce_nodes(MPIDI_PIP_mcoll_comm_t * st, const void *sendbuf,
                                    void *recvbuf, MPI_Aint count, MPI_Datatype datatype,
                                    MPI_Op op, MPIR_Comm * comm, MPIR_Errflag_t * errflag)
{
    MPIDI_PIP_mcoll_nodes_t *ns = st->nodes;
    MPIDI_PIP_mcoll_sync_t *s = &st->sync;
    int n = ns->n, mpi_errno = MPI_SUCCESS;
    size_t esz = type_size(datatype), bytes = count * esz, lo, hi;
    char *dst = contig_start(recvbuf, count, datatype);
    const char *src = sendbuf == MPI_IN_PLACE ? dst : contig_start(sendbuf, count, datatype);
    bool small = bytes <= (size_t) MPIR_CVAR_CH4_CX_MCOLL_NODES_ALLREDUCE_SMALL;
    unsigned steps;

    for (int i = 0; i <= n; i++)
        ns->off[i] = i * bytes;
    char *stage = stage_meet(st, small ? n * bytes : bytes, src, &mpi_errno);
    int nparts = MPIDI_PIP_mcoll_nparts(count, esz, s->size, MPIR_CVAR_CH4_CX_MCOLL_PART_MIN);
    if (s->rank < nparts && stage && !mpi_errno) {
        MPIDI_PIP_mcoll_part(count, nparts, s->rank, &lo, &hi);
        mpi_errno =
            MPIDI_PIP_mcoll_fold_inputs(s, lo, hi - lo, esz, datatype, op, stage + lo * esz);
    }
    /* after this meeting nobody reads the inputs: recvbuf may be written;
     * a node whose result is not whole marks its messages failed */
    meet_ok(s, &mpi_errno);
    if (mpi_errno)
        *errflag = MPIR_ERR_OTHER;
    if (small) {
        mpi_errno = keep(mpi_errno, bruck(st, stage, MPIR_ALLREDUCE_TAG, comm, errflag));
        steps = log_steps(n, ns->objects + 1);
        /* node m's result is at stage index (m - node) mod n */
        if (stage && bytes && !mpi_errno) {
            /* dst = result 0 op ... op result n-1 */
            mpi_errno = MPIDI_PIP_mcoll_reduce3(stage + ((n - 2 - ns->node + n) % n) * bytes,
                                                stage + ((n - 1 - ns->node + n) % n) * bytes,
                                                dst, count, datatype, op);
            for (int m = n - 3; m >= 0 && !mpi_errno; m--)
                mpi_errno =
                    MPIDI_PIP_mcoll_reduce_local(stage + ((m - ns->node + n) % n) * bytes, dst,
                                                 count, datatype, op);
        }
    } else {
        if (ns->local < ns->objects)
            mpi_errno = keep(mpi_errno, rings(st, stage, count, esz, datatype, op, comm, errflag));
        steps = 2 * (n - 1);
        meet_ok(s, &mpi_errno);
        if (stage && !mpi_errno)
            memcpy(dst, stage, bytes);
    }
    MPIDI_PIP_mcoll_meet(s);
    MPIDI_PIP_mcoll_count(MPIDI_PIP_MCOLL_ALLREDUCE, bytes * (small ? n : 1));
    MPIDI_PIP_mcoll_count_nodes(MPIDI_PIP_MCOLL_ALLREDUCE, steps);
    if (mpi_errno)
        *errflag = MPIR_ERR_OTHER;
    return mpi_errno;
}

/* Paper §4.3.3, scatter over a (P+1)-ary tree of nodes, any root and node
 * sizes (the paper's root 0 and power-of-(P+1) node counts lifted). Nodes
 * are numbered from the root's (v = node - root node mod n); node v
 * receives, at its holder, the blocks of every node of its subtree [v, e)
 * in that order, once; then its objects send the subtrees of its children
 * at every level at once (object k-1 the k-th child of each level) while
 * every rank copies its own block out (the overlapped intranode scatter).
 * The holder is local index 0, on the root's node the root. */
int MPIDI_PIP_mcoll_scatter_nodes(MPIDI_PIP_mcoll_comm_t * st, const void *sendbuf,
                                  MPI_Aint sendcount, MPI_Datatype sendtype, void *recvbuf,
                                  MPI_Aint recvcount, MPI_Datatype recvtype, int root,
                                  MPIR_Comm * comm, MPIR_Errflag_t * errflag)
{
    MPIDI_PIP_mcoll_nodes_t *ns = st->nodes;
    MPIDI_PIP_mcoll_sync_t *s = &st->sync;
    int n = ns->n, base = ns->objects + 1, mpi_errno = MPI_SUCCESS;
    int rnode = ns->node_of[root], v = (ns->node - rnode + n) % n;
    bool root_node = v == 0, is_root = comm->rank == root;
    size_t cb = (size_t) (is_root ? sendcount * type_size(sendtype) :
                          recvcount * type_size(recvtype));
    int holder = root_node ? ns->local_of[root] : 0;

    for (int u = 0; u < n; u++)
        ns->off[u + 1] = ns->off[u] + ns->size[(rnode + u) % n] * cb;
    /* where this node sits in the tree: its subtree [v, end), its parent */
    int start = 0, end = n, parent = -1, pk = 0;
    while (start != v) {
        int sub = (end - start + base - 1) / base, k = (v - start) / sub;
        if (k) {
            parent = start;
            pk = k;
            start += k * sub;
        }
        end = start + sub < end ? start + sub : end;
    }
    size_t lo = ns->off[v], bytes = ns->off[end] - lo;
    char *stage = NULL;

    if (s->rank == holder && !root_node && bytes && !(stage = MPIDI_PIP_mcoll_stage(st, bytes)))
        mpi_errno = nomem();
    if (!root_node) {
        if (s->rank == holder) {
            /* object pk-1 of the parent sends (nothing if it failed) */
            int from = rank_at(ns, (parent + rnode) % n, pk - 1);
            MPI_Status status;
            int err = MPIC_Recv(stage, stage ? bytes : 0, MPI_BYTE, from, MPIR_SCATTER_TAG, comm,
                                &status, errflag);
            mpi_errno = keep(mpi_errno, err ? err : received(&status, bytes, errflag));
        }
        MPIDI_PIP_mcoll_post(s, stage, NULL, !mpi_errno);
        if (!MPIDI_PIP_mcoll_info(s, holder))
            mpi_errno = keep(mpi_errno, peer_failed());
        stage = (char *) MPIDI_PIP_mcoll_addr(s, holder, 0);
    } else {
        /* the root's blocks go to the stage in node order, each rank of
         * the node copying its share, unless they are in it already */
        const void *src = NULL;
        bool in_order = true;
        for (int u = 0; u < n && in_order; u++)
            for (int j = 0; j < ns->size[(rnode + u) % n] && in_order; j++)
                in_order = rank_at(ns, (rnode + u) % n, j) * cb == ns->off[u] + j * cb;
        if (is_root) {
            /* the root's blocks as one range, or NULL: packed first */
            char *block = contig_start(sendbuf, sendcount * comm->local_size, sendtype);
            if (block && in_order) {
                src = stage = block;
            } else if (ns->off[n] &&
                       !(stage = MPIDI_PIP_mcoll_stage(st, ns->off[n] * (block ? 1 : 2)))) {
                mpi_errno = nomem();
            } else if (!block) {
                src = stage + ns->off[n];
                mpi_errno = MPIR_Localcopy(sendbuf, sendcount * comm->local_size, sendtype,
                                           stage + ns->off[n], ns->off[n], MPI_BYTE);
            } else {
                src = block;
            }
        }
        MPIDI_PIP_mcoll_post(s, stage, src, !mpi_errno);
        if (!MPIDI_PIP_mcoll_info(s, holder))
            mpi_errno = keep(mpi_errno, peer_failed());
        stage = (char *) MPIDI_PIP_mcoll_addr(s, holder, 0);
        src = MPIDI_PIP_mcoll_addr(s, holder, 1);
        if (stage != src && stage && cb) {
            int i = 0;
            for (int u = 0; u < n; u++)
                for (int j = 0; j < ns->size[(rnode + u) % n]; j++, i++)
                    if (i % s->size == s->rank)
                        memcpy(stage + ns->off[u] + j * cb,
                               (const char *) src + rank_at(ns, (rnode + u) % n, j) * cb, cb);
        }
        MPIDI_PIP_mcoll_meet(s);
    }

    /* children: at each level of [v, end) the k-th goes to object k-1
     * (marked failed if this node's data is not whole) */
    if (mpi_errno)
        *errflag = MPIR_ERR_OTHER;
    int nreq = 0;
    MPIR_Request *req[64];
    for (int a = v, e = end; e - a > 1;) {
        int sub = (e - a + base - 1) / base;
        int k = s->rank + 1;
        int c = a + k * sub;
        if (k < base && c < e && nreq < 64) {
            int ce = c + sub < e ? c + sub : e;
            int to = rank_at(ns, (c + rnode) % n, 0);
            int err = MPIC_Isend(stage ? stage + ns->off[c] - lo : NULL,
                                 stage ? ns->off[ce] - ns->off[c] : 0, MPI_BYTE, to,
                                 MPIR_SCATTER_TAG, comm, &req[nreq], errflag);
            if (err)
                mpi_errno = keep(mpi_errno, err);
            else
                nreq++;
        }
        e = a + sub;
    }
    /* this rank's own block, while the sends go */
    if (!(is_root && recvbuf == MPI_IN_PLACE) && stage && cb)
        mpi_errno = keep(mpi_errno, MPIR_Localcopy(stage + s->rank * cb,
                                                   cb, MPI_BYTE, recvbuf, recvcount, recvtype));
    if (nreq)
        mpi_errno = keep(mpi_errno, MPIC_Waitall(nreq, req, MPI_STATUSES_IGNORE, errflag));
    MPIDI_PIP_mcoll_meet(s);
    MPIDI_PIP_mcoll_count(MPIDI_PIP_MCOLL_SCATTER, cb);
    MPIDI_PIP_mcoll_count_nodes(MPIDI_PIP_MCOLL_SCATTER, log_steps(n, base));
    if (mpi_errno)
        *errflag = MPIR_ERR_OTHER;
    return mpi_errno;
}
