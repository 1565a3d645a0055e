/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * PiP single-copy transfers (doc/user/pip.md, src/mpid/ch4/shm/ipc/pip).
 * Ranks pair up (r, r^1).  Each rank learns which ranks are tasks of its own
 * process from the kernel's process id (syscall, not the per-task getpid)
 * and from that, and MPIR_CVAR_CH4_CX_PIP_ENABLE, works out how many
 * messages and bytes it must have received by single copy (those of at
 * least MPIR_CVAR_CH4_CX_PIP_P2P_THRESHOLD bytes from a peer of its
 * process); at the end the pvars cx_pip_copies and cx_pip_copy_bytes must
 * have grown by exactly that much.  Without -pip, or disabled, that is 0.
 *   p2p: contiguous sizes around the threshold up to 4 MiB; vector sender
 *     and vector receiver; truncation (MPI_ERR_TRUNCATE, nothing written
 *     past the buffer, a single copy copies what fits, both sides go on);
 *     MPI_ANY_SOURCE; the unexpected path; MPI_Ssend; eight messages in
 *     flight received in reverse order; the sender reusing its buffer right
 *     after MPI_Wait;
 *   copy tasks (CAB-MPI): single copies contiguous at both ends and of at
 *     least MPIR_CVAR_CH4_CX_STEAL_THRESHOLD bytes must grow cx_steal_tasks
 *     exactly (the 16-byte pieces of the vector test are too small to
 *     share); twenty blocking 4 MiB sends report the bytes their sender
 *     stole while waiting (cx_steal_bytes; test/mpi/run requires some with
 *     2 ranks on 2 cores, where the sender waits on a core of its own);
 *   rma: MPI_Win_create on malloc'd memory, then a dynamic window with the
 *     same memory attached: Put, Get, Accumulate under fence, Fetch_and_op,
 *     Compare_and_swap and a 1 MiB Put under passive-target locks; K
 *     accumulates from every rank to every rank in one lock_all epoch
 *     (exact sums); cx_pip_windows grows by 1 for each when two ranks of
 *     the node share a process, cx_pip_split_windows when the node's ranks
 *     are tasks of several processes (16 ranks, MPMD): peers in this
 *     process are accessed directly, the others by active messages.
 */
#define _GNU_SOURCE
#include "mpitest.h"
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

static int rank, size, peer = -1;
static int peer_same;           /* the peer is a task of this process */
static long threshold = 32768, steal_threshold;
static int enabled = 1, steal;
static long long want_copies, want_bytes, want_tasks;

/* A message of n bytes this rank received from src; contig: contiguous at
 * both ends, so a copy of at least the stealing threshold is a task. */
static void received(int src_same, long n, int contig)
{
    if (enabled && src_same && n >= threshold) {
        want_copies++;
        want_bytes += n;
        if (contig && steal && n >= steal_threshold && n > 0)
            want_tasks++;
    }
}

static void fill(unsigned char *b, long n, int seed)
{
    for (long i = 0; i < n; i++)
        b[i] = (unsigned char) (i * 7 + seed);
}

static long bad_bytes(const unsigned char *b, long n, int seed)
{
    for (long i = 0; i < n; i++)
        if (b[i] != (unsigned char) (i * 7 + seed))
            return i;
    return -1;
}

/* rank with the lower number of the pair sends first, then the other */
static void exchange(long n, int tag)
{
    unsigned char *s = malloc(n ? n : 1), *r = malloc(n ? n : 1);
    fill(s, n, rank + tag);
    memset(r, 0, n);
    for (int turn = 0; turn < 2; turn++) {
        int sender = (turn == 0) == (rank < peer);
        if (sender) {
            MPI_Send(s, (int) n, MPI_BYTE, peer, tag, MPI_COMM_WORLD);
        } else {
            MPI_Status st;
            int count;
            MPI_Recv(r, (int) n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &st);
            MPI_Get_count(&st, MPI_BYTE, &count);
            MT_CHECK(count == n, "size %ld: count %d", n, count);
            long bad = bad_bytes(r, n, peer + tag);
            MT_CHECK(bad < 0, "size %ld: byte %ld wrong", n, bad);
            received(peer_same, n, 1);
        }
    }
    free(s);
    free(r);
}

static void test_noncontig(void)
{
    /* 4096 blocks of 16 bytes every 32 bytes: 64 KiB of data */
    enum { BLOCKS = 4096, BLEN = 16, STRIDE = 32 };
    MPI_Datatype vec;
    MPI_Type_vector(BLOCKS, BLEN, STRIDE, MPI_BYTE, &vec);
    MPI_Type_commit(&vec);
    unsigned char *sparse = malloc(BLOCKS * STRIDE), *dense = malloc(BLOCKS * BLEN);
    for (int dir = 0; dir < 2; dir++) {
        /* dir 0: the lower rank sends the vector, the other receives it dense;
         * dir 1: dense sent into a vector receive */
        int sender = (dir == 0) == (rank < peer);
        memset(sparse, 0xee, BLOCKS * STRIDE);
        memset(dense, 0, BLOCKS * BLEN);
        if (sender) {
            for (int b = 0; b < BLOCKS; b++)
                for (int i = 0; i < BLEN; i++) {
                    unsigned char v = (unsigned char) (b * 3 + i + dir);
                    sparse[b * STRIDE + i] = v;
                    dense[b * BLEN + i] = v;
                }
            if (dir == 0)
                MPI_Send(sparse, 1, vec, peer, 20, MPI_COMM_WORLD);
            else
                MPI_Send(dense, BLOCKS * BLEN, MPI_BYTE, peer, 21, MPI_COMM_WORLD);
        } else {
            int errs = 0;
            if (dir == 0) {
                MPI_Recv(dense, BLOCKS * BLEN, MPI_BYTE, peer, 20, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
                for (int b = 0; b < BLOCKS; b++)
                    for (int i = 0; i < BLEN; i++)
                        errs += dense[b * BLEN + i] != (unsigned char) (b * 3 + i + dir);
            } else {
                MPI_Recv(sparse, 1, vec, peer, 21, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                for (int b = 0; b < BLOCKS; b++)
                    for (int i = 0; i < STRIDE; i++)
                        errs += sparse[b * STRIDE + i] !=
                            (i < BLEN ? (unsigned char) (b * 3 + i + dir) : 0xee);
            }
            MT_CHECK(errs == 0, "noncontiguous direction %d: %d bytes wrong", dir, errs);
            received(peer_same, BLOCKS * BLEN, 0);
        }
    }
    free(sparse);
    free(dense);
    MPI_Type_free(&vec);
}

static void test_truncation(void)
{
    long n = 256 * 1024, fits = 100 * 1000;
    unsigned char *b = malloc(n);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (rank < peer) {
        fill(b, n, 5);
        MPI_Send(b, (int) n, MPI_BYTE, peer, 30, MPI_COMM_WORLD);
    } else {
        MPI_Status st;
        memset(b, 0, n);
        long long before = mt_pvar_read("cx_pip_copies");
        int err = MPI_Recv(b, (int) fits, MPI_BYTE, peer, 30, MPI_COMM_WORLD, &st);
        int cls = -1;
        MPI_Error_class(err, &cls);
        MT_CHECK(cls == MPI_ERR_TRUNCATE, "truncated receive returned class %d", cls);
        MT_CHECK(b[fits] == 0, "truncated receive wrote past its buffer");
        received(peer_same, fits, 1);
        /* MPI leaves the buffer undefined; the single copy fills what fits */
        if (mt_pvar_read("cx_pip_copies") > before)
            MT_CHECK(bad_bytes(b, fits, 5) < 0,
                     "truncated single copy: the part that fits is wrong");
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    exchange(64 * 1024, 31);    /* both sides go on */
    free(b);
}

/* The pair's barrier: a 1-byte exchange, counted like any message (a
 * collective's traffic takes the single copy too under a low threshold). */
static void pair_sync(void)
{
    char out = 1, in = 0;
    MPI_Sendrecv(&out, 1, MPI_CHAR, peer, 70, &in, 1, MPI_CHAR, peer, 70, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    received(peer_same, 1, 1);
}

static void test_any_source_unexpected_ssend(void)
{
    long n = 1 << 20;
    unsigned char *b = malloc(n);
    MPI_Request req;
    /* ANY_SOURCE, posted first */
    if (rank < peer) {
        MPI_Irecv(b, (int) n, MPI_BYTE, MPI_ANY_SOURCE, 40, MPI_COMM_WORLD, &req);
        pair_sync();
        MPI_Status st;
        MPI_Wait(&req, &st);
        MT_CHECK(st.MPI_SOURCE == peer && bad_bytes(b, n, 40) < 0, "ANY_SOURCE receive wrong");
        received(peer_same, n, 1);
    } else {
        fill(b, n, 40);
        pair_sync();
        MPI_Send(b, (int) n, MPI_BYTE, rank ^ 1, 40, MPI_COMM_WORLD);
    }
    /* unexpected: the send's header arrives before the receive is posted */
    if (rank < peer) {
        fill(b, n, 41);
        MPI_Isend(b, (int) n, MPI_BYTE, peer, 41, MPI_COMM_WORLD, &req);
        pair_sync();
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        fill(b, n, 99); /* reuse right away: the peer must have its copy */
    } else {
        pair_sync();
        int flag = 0;
        while (!flag)
            MPI_Iprobe(peer, 41, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        memset(b, 0, n);
        MPI_Recv(b, (int) n, MPI_BYTE, MPI_ANY_SOURCE, 41, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MT_CHECK(bad_bytes(b, n, 41) < 0, "unexpected-path receive wrong");
        received(peer_same, n, 1);
    }
    /* synchronous: correct whatever path it takes (counted if single copy) */
    long copies_before = mt_pvar_read("cx_pip_copies");
    if (rank < peer) {
        fill(b, n, 42);
        MPI_Ssend(b, (int) n, MPI_BYTE, peer, 42, MPI_COMM_WORLD);
    } else {
        memset(b, 0, n);
        MPI_Recv(b, (int) n, MPI_BYTE, peer, 42, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MT_CHECK(bad_bytes(b, n, 42) < 0, "MPI_Ssend receive wrong");
        long copied = mt_pvar_read("cx_pip_copies") - copies_before;
        want_copies += copied;
        want_bytes += copied * n;
        if (steal && n >= steal_threshold)
            want_tasks += copied;
    }
    free(b);
}

static void test_in_flight(void)
{
    enum { K = 8 };
    long n = 256 * 1024;
    unsigned char *b[K];
    MPI_Request req[K];
    for (int k = 0; k < K; k++)
        b[k] = malloc(n);
    if (rank < peer) {
        for (int k = 0; k < K; k++) {
            fill(b[k], n, 50 + k);
            MPI_Isend(b[k], (int) n, MPI_BYTE, peer, 50 + k, MPI_COMM_WORLD, &req[k]);
        }
    } else {
        for (int k = K - 1; k >= 0; k--)
            MPI_Irecv(b[k], (int) n, MPI_BYTE, peer, 50 + k, MPI_COMM_WORLD, &req[K - 1 - k]);
    }
    MPI_Waitall(K, req, MPI_STATUSES_IGNORE);
    if (rank > peer)
        for (int k = 0; k < K; k++) {
            MT_CHECK(bad_bytes(b[k], n, 50 + k) < 0, "in-flight message %d wrong", k);
            received(peer_same, n, 1);
        }
    for (int k = 0; k < K; k++)
        free(b[k]);
}

/* The sender steals: the lower rank of each pair sends 4 MiB with blocking
 * sends, so it waits inside MPI while its peer copies.  Returns the bytes
 * the sender stole (cx_steal_bytes). */
static long long test_blocking_sender(void)
{
    enum { REPS = 20 };
    long n = 4 << 20;
    unsigned char *b = malloc(n);
    long long before = mt_pvar_read("cx_steal_bytes");
    for (int i = 0; i < REPS; i++) {
        if (rank < peer) {
            fill(b, n, 60 + i);
            MPI_Send(b, (int) n, MPI_BYTE, peer, 60, MPI_COMM_WORLD);
        } else {
            memset(b, 0, n);
            MPI_Recv(b, (int) n, MPI_BYTE, peer, 60, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            long bad = bad_bytes(b, n, 60 + i);
            MT_CHECK(bad < 0, "4 MiB copy %d: byte %ld wrong", i, bad);
            received(peer_same, n, 1);
        }
    }
    free(b);
    return mt_pvar_read("cx_steal_bytes") - before;
}

/* Window displacements of element i at target t: indices for a created
 * window (displacement unit sizeof(int)), addresses for a dynamic one. */
static MPI_Aint *dyn_addr;
static MPI_Aint disp(int t, int i)
{
    return dyn_addr ? dyn_addr[t] + (MPI_Aint) i *(MPI_Aint) sizeof(int) : i;
}

static void test_rma(int node_all_same, int node_pairs, int dynamic)
{
    enum { N = 1 << 18, K = 20, M = 4096 };     /* 1 MiB of int; accumulates per target */
    long long windows_before = mt_pvar_read("cx_pip_windows");
    long long split_before = mt_pvar_read("cx_pip_split_windows");
    int *mem = malloc(N * sizeof(int)), *src = malloc(N * sizeof(int));
    for (int i = 0; i < N; i++)
        mem[i] = -1;
    MPI_Win win;
    if (dynamic) {
        MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
        MPI_Win_attach(win, mem, N * sizeof(int));
        MPI_Aint mine;
        MPI_Get_address(mem, &mine);
        dyn_addr = malloc(size * sizeof(MPI_Aint));
        MPI_Allgather(&mine, 1, MPI_AINT, dyn_addr, 1, MPI_AINT, MPI_COMM_WORLD);
    } else {
        MPI_Win_create(mem, N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    }
    const char *what = dynamic ? "dynamic window" : "MPI_Win_create window";
    long long windows = mt_pvar_read("cx_pip_windows") - windows_before;
    long long split = mt_pvar_read("cx_pip_split_windows") - split_before;
    MT_CHECK(windows == (enabled && node_pairs) &&
             split == (enabled && node_pairs &&
                       !node_all_same),
             "%s: cx_pip_windows grew by %lld, cx_pip_split_windows by %lld (node in one process: %d, "
             "ranks sharing a process: %d)", what, windows, split, node_all_same, node_pairs);

    int right = (rank + 1) % size, left = (rank + size - 1) % size, got = 0;
    MPI_Win_fence(0, win);
    MPI_Put(&rank, 1, MPI_INT, right, disp(right, 0), 1, MPI_INT, win);
    MPI_Accumulate(&rank, 1, MPI_INT, 0, disp(0, 1), 1, MPI_INT, MPI_SUM, win);
    MPI_Win_fence(0, win);
    MT_CHECK(mem[0] == left, "%s: fence Put: %d, not %d", what, mem[0], left);
    if (rank == 0)
        MT_CHECK(mem[1] == -1 + size * (size - 1) / 2, "%s: fence Accumulate: %d", what, mem[1]);
    MPI_Get(&got, 1, MPI_INT, right, disp(right, 0), 1, MPI_INT, win);
    MPI_Win_fence(0, win);
    MT_CHECK(got == rank, "%s: fence Get: %d, not %d", what, got, rank);

    /* every rank adds 1 to elements 4 .. 4 + M - 1 of every rank K times in
     * one epoch: on a node of several processes, direct accumulates (peers
     * of this process) and active-message ones (the others) overlap on the
     * same elements */
    int one = 1, old = 0, cmp, newv, bad = 0;
    for (int i = 0; i < M; i++)
        src[i] = 1;
    MPI_Win_lock_all(0, win);
    for (int k = 0; k < K; k++)
        for (int t = 0; t < size; t++)
            MPI_Accumulate(src, M, MPI_INT, t, disp(t, 4), M, MPI_INT, MPI_SUM, win);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
    for (int i = 4; i < 4 + M; i++)
        bad += mem[i] != -1 + K * size;
    MT_CHECK(bad == 0, "%s: %d accumulates from every rank: %d of %d elements wrong (first %d)",
             what, K, bad, M, mem[4]);
    MPI_Win_unlock(rank, win);

    /* passive target: atomics on rank 0, then a 1 MiB Put to the right */
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    MPI_Fetch_and_op(&one, &old, MPI_INT, 0, disp(0, 2), MPI_SUM, win);
    MPI_Win_unlock(0, win);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
    cmp = -1;
    newv = 1000 + rank;
    MPI_Compare_and_swap(&newv, &cmp, &old, MPI_INT, 0, disp(0, 3), win);
    MPI_Win_unlock(0, win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        MT_CHECK(mem[2] == -1 + size, "%s: Fetch_and_op total %d, not %d", what, mem[2], size - 1);
        MT_CHECK(mem[3] >= 1000 && mem[3] < 1000 + size, "%s: Compare_and_swap left %d", what,
                 mem[3]);
        MPI_Win_unlock(0, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < N; i++)
        src[i] = rank * 7 + i;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win);
    MPI_Put(src, N, MPI_INT, right, disp(right, 0), N, MPI_INT, win);
    MPI_Win_unlock(right, win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
    int errs = 0;
    for (int i = 0; i < N; i++)
        errs += mem[i] != left * 7 + i;
    MPI_Win_unlock(rank, win);
    MT_CHECK(errs == 0, "%s: 1 MiB passive Put: %d ints wrong", what, errs);
    if (dynamic) {
        MPI_Win_detach(win, mem);
        free(dyn_addr);
        dyn_addr = NULL;
    }
    MPI_Win_free(&win);
    free(mem);
    free(src);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *e = getenv("MPIR_CVAR_CH4_CX_PIP_ENABLE");
    if (e)
        enabled = atoi(e);
    e = getenv("MPIR_CVAR_CH4_CX_PIP_P2P_THRESHOLD");
    if (e)
        threshold = atol(e);
    /* whether this rank steals, and from what size: the library says so
     * ("throughput stealing from 262144 bytes"; nothing when it does not:
     * no peer task, MPIR_CVAR_CH4_CX_STEAL=off, --disable-cx-steal) */
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int version_len;
    MPI_Get_library_version(version, &version_len);
    const char *from = strstr(version, " stealing from ");
    steal = from != NULL;
    if (from)
        steal_threshold = atol(from + strlen(" stealing from "));

    /* who shares this address space: the kernel's process id */
    int tgid = (int) syscall(SYS_getpid), *tgids = malloc(size * sizeof(int));
    MPI_Allgather(&tgid, 1, MPI_INT, tgids, 1, MPI_INT, MPI_COMM_WORLD);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int node_same = 1, node_pairs = 0, node_size, *node_tgids;
    MPI_Comm_size(node, &node_size);
    node_tgids = malloc(node_size * sizeof(int));
    MPI_Allgather(&tgid, 1, MPI_INT, node_tgids, 1, MPI_INT, node);
    for (int i = 0; i < node_size; i++) {
        node_same &= node_tgids[i] == tgid;
        for (int j = i + 1; j < node_size; j++)
            node_pairs |= node_tgids[i] == node_tgids[j];
    }
    long long copies0 = mt_pvar_read("cx_pip_copies"), bytes0 = mt_pvar_read("cx_pip_copy_bytes");
    long long tasks0 = mt_pvar_read("cx_steal_tasks"), stolen = 0;
    MT_CHECK(copies0 >= 0 && bytes0 >= 0 && tasks0 >= 0 && mt_pvar_read("cx_steal_bytes") >= 0,
             "the cx_pip and cx_steal pvars are missing");

    if ((rank ^ 1) < size) {
        peer = rank ^ 1;
        peer_same = tgids[peer] == tgid;
    }
    /* every rank takes part in the collectives inside the tests */
    long sizes[] = { 0, 1000, threshold - 1, threshold, 64 * 1024, 1 << 20, 4 << 20 };
    if (peer >= 0) {
        for (int i = 0; i < (int) (sizeof(sizes) / sizeof(sizes[0])); i++)
            if (sizes[i] >= 0)
                exchange(sizes[i], i);
        test_noncontig();
        test_truncation();
        stolen = test_blocking_sender();
    }
    if (size % 2 == 0) {
        test_any_source_unexpected_ssend();
        test_in_flight();
    }
    long long copies = mt_pvar_read("cx_pip_copies") - copies0;
    long long bytes = mt_pvar_read("cx_pip_copy_bytes") - bytes0;
    MT_CHECK(copies == want_copies && bytes == want_bytes,
             "single copies: %lld messages, %lld bytes; expected %lld, %lld (peer %d %s)",
             copies, bytes, want_copies, want_bytes, peer,
             peer_same ? "in this process" : "in another process");
    long long tasks = mt_pvar_read("cx_steal_tasks") - tasks0;
    MT_CHECK(tasks == want_tasks, "copy tasks: %lld, expected %lld", tasks, want_tasks);
    MT_CHECK(stolen >= 0 && stolen <= 20LL * (4 << 20), "stole %lld bytes", stolen);
    /* any rank of this address space may have lent a hand, not only the peer */
    int any_same = 0;
    for (int i = 0; i < size; i++)
        any_same |= i != rank && tgids[i] == tgid;
    if (!(enabled && any_same && steal))
        MT_CHECK(stolen == 0, "stole %lld bytes without stealing", stolen);
    long long windows0 = mt_pvar_read("cx_pip_windows");
    long long split0 = mt_pvar_read("cx_pip_split_windows");
    test_rma(node_same, node_pairs, 0);
    test_rma(node_same, node_pairs, 1);
    long long windows = mt_pvar_read("cx_pip_windows") - windows0;
    long long split = mt_pvar_read("cx_pip_split_windows") - split0;

    int errs = mt_errors, all;
    MPI_Allreduce(&errs, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("single copies on rank 0: %lld (%lld bytes), %lld copy tasks\n", copies, bytes,
               tasks);
        printf("rank 0 stole %lld bytes while waiting in its own sends\n", stolen);
        printf("windows with direct access on rank 0: %lld, %lld of them split\n", windows, split);
        if (all == 0)
            printf("No Errors\n");
    }
    MPI_Comm_free(&node);
    MPI_Finalize();
    return all != 0;
}
