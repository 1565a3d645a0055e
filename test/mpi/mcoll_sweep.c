/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * PiP-MColl correctness sweep (doc/user/pip-mcoll.md): MPI_Bcast, Gather,
 * Scatter, Allgather, Reduce and Allreduce, every root, in place and not,
 * sizes around the algorithms' switch points, a strided (vector) datatype
 * on one side, a contiguous derived type with a user operation that does
 * not commute (2x2 matrix products, rank order), on MPI_COMM_WORLD, a
 * split of it and a dup; each result checked against one computed here
 * without MPI.
 *   mcoll_sweep [expect-mcoll|expect-nodes|expect-none] [steps=K] [quick]
 * expect-mcoll: every collective must have run by posted addresses (the
 * cx_mcoll_* pvars grew; allgather only where MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM
 * is pip_mcoll, as auto leaves it to MPICH); expect-nodes: the ranks sit on
 * several nodes (cliques), and scatter, allgather and allreduce ran across
 * them (cx_mcoll_nodes_*); steps=K: an allgather on MPI_COMM_WORLD took K
 * internode steps (cx_mcoll_internode_steps_last); expect-none: none ran.
 */
#include "mpitest.h"
#include <stdbool.h>
#include <stdint.h>

static int rank, size;

static int val(int r, long i, int salt)
{
    return (int) ((r + 1) * 1000003L + i * 7919L + salt * 13L) & 0x7fffff;
}

/* 2x2 integer matrices modulo a prime: associative, not commutative. */
#define PR 9973
static void matmul(const int *a, const int *b, int *c)
{
    int r[4];
    r[0] = (a[0] * b[0] + a[1] * b[2]) % PR;
    r[1] = (a[0] * b[1] + a[1] * b[3]) % PR;
    r[2] = (a[2] * b[0] + a[3] * b[2]) % PR;
    r[3] = (a[2] * b[1] + a[3] * b[3]) % PR;
    memcpy(c, r, sizeof(r));
}

/* inoutvec = invec op inoutvec (MPI's order) */
static void matmul_op(void *invec, void *inoutvec, int *len, MPI_Datatype * dt)
{
    int *in = invec, *io = inoutvec;
    for (int k = 0; k < *len; k++)
        matmul(in + 4 * k, io + 4 * k, io + 4 * k);
}

static void mat_of(int r, long i, int *m)
{
    for (int k = 0; k < 4; k++)
        m[k] = (val(r, i, k) % (PR - 1)) + 1;
}

static long counts_full[] = { 0, 1, 3, 1023, 1024, 1025, 4096, 4097, 16384, 70001, 300000 };
static long counts_quick[] = { 0, 1, 1025, 4097, 70001 };

static long *counts = counts_full;
static int ncounts = sizeof(counts_full) / sizeof(counts_full[0]);

static void test_bcast(MPI_Comm comm, int salt)
{
    int me, n;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    MPI_Datatype strided;
    for (int c = 0; c < ncounts; c++) {
        long cnt = counts[c];
        if (cnt > 100000)
            continue;
        MPI_Type_vector(cnt ? cnt : 1, 1, 2, MPI_INT, &strided);
        MPI_Type_commit(&strided);
        for (int root = 0; root < n; root++) {
            for (int vec = 0; vec < 2; vec++) {
                /* vec: the root sends from every other int (a strided type) */
                int *buf = malloc((2 * cnt + 1) * sizeof(int));
                for (long i = 0; i < 2 * cnt + 1; i++)
                    buf[i] = -1;
                if (me == root)
                    for (long i = 0; i < cnt; i++)
                        buf[vec ? 2 * i : i] = val(root, i, salt);
                if (vec && me == root)
                    MPI_Bcast(buf, cnt ? 1 : 0, strided, root, comm);
                else
                    MPI_Bcast(buf, cnt, MPI_INT, root, comm);
                for (long i = 0; i < cnt; i++) {
                    int got = buf[vec && me == root ? 2 * i : i];
                    if (got != val(root, i, salt)) {
                        MT_CHECK(0, "bcast cnt %ld root %d vec %d: [%ld] = %d", cnt, root, vec, i,
                                 got);
                        break;
                    }
                }
                free(buf);
            }
        }
        MPI_Type_free(&strided);
    }
}

static void test_gather_scatter(MPI_Comm comm, int salt)
{
    int me, n;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    for (int c = 0; c < ncounts; c++) {
        long cnt = counts[c];
        if (cnt > 100000)
            continue;
        int *mine = malloc((2 * cnt + 1) * sizeof(int));
        int *all = malloc((2 * cnt * n + 1) * sizeof(int));
        MPI_Datatype strided;
        MPI_Type_vector(cnt ? cnt : 1, 1, 2, MPI_INT, &strided);
        MPI_Type_commit(&strided);
        for (int root = 0; root < n; root++) {
            for (int mode = 0; mode < 3; mode++) {
                /* mode 0: plain; 1: root in place; 2: senders strided */
                for (long i = 0; i < cnt; i++)
                    mine[mode == 2 ? 2 * i : i] = val(me, i, salt + root);
                for (long i = 0; i < cnt * n; i++)
                    all[i] = -1;
                if (mode == 1 && me == root)
                    memcpy(all + root * cnt, mine, cnt * sizeof(int));
                const void *sb = mode == 1 && me == root ? MPI_IN_PLACE : mine;
                if (mode == 2)
                    MPI_Gather(sb, cnt ? 1 : 0, strided, all, cnt, MPI_INT, root, comm);
                else
                    MPI_Gather(sb, cnt, MPI_INT, all, cnt, MPI_INT, root, comm);
                if (me == root)
                    for (long i = 0; i < cnt * n; i++)
                        if (all[i] != val(i / cnt, i % cnt, salt + root)) {
                            MT_CHECK(0, "gather cnt %ld root %d mode %d: [%ld] = %d", cnt, root,
                                     mode, i, all[i]);
                            break;
                        }

                /* scatter: the root's blocks; mode 2: receivers strided */
                if (me == root)
                    for (long i = 0; i < cnt * n; i++)
                        all[i] = val(i / cnt, i % cnt, salt + 7 * root);
                for (long i = 0; i < 2 * cnt + 1; i++)
                    mine[i] = -1;
                void *rb = mode == 1 && me == root ? MPI_IN_PLACE : mine;
                if (mode == 2)
                    MPI_Scatter(all, cnt, MPI_INT, rb, cnt ? 1 : 0, strided, root, comm);
                else
                    MPI_Scatter(all, cnt, MPI_INT, rb, cnt, MPI_INT, root, comm);
                if (!(mode == 1 && me == root))
                    for (long i = 0; i < cnt; i++)
                        if (mine[mode == 2 ? 2 * i : i] != val(me, i, salt + 7 * root)) {
                            MT_CHECK(0, "scatter cnt %ld root %d mode %d: [%ld] = %d", cnt, root,
                                     mode, i, mine[mode == 2 ? 2 * i : i]);
                            break;
                        }
            }
        }
        MPI_Type_free(&strided);
        free(mine);
        free(all);
    }
}

static void test_allgather(MPI_Comm comm, int salt)
{
    int me, n;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    for (int c = 0; c < ncounts; c++) {
        long cnt = counts[c];
        if (cnt > 100000)
            continue;
        int *mine = malloc((cnt + 1) * sizeof(int));
        int *all = malloc((2 * cnt * n + 1) * sizeof(int));
        MPI_Datatype strided, block;
        /* mode 2: the receive type is strided: n blocks of cnt ints, every other int */
        MPI_Type_vector(cnt ? cnt : 1, 1, 2, MPI_INT, &strided);
        MPI_Type_create_resized(strided, 0, 2 * (cnt ? cnt : 1) * sizeof(int), &block);
        MPI_Type_commit(&block);
        for (int mode = 0; mode < 3; mode++) {
            for (long i = 0; i < cnt; i++)
                mine[i] = val(me, i, salt + mode);
            for (long i = 0; i < 2 * cnt * n; i++)
                all[i] = -1;
            if (mode == 1) {
                memcpy(all + me * cnt, mine, cnt * sizeof(int));
                MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, cnt, MPI_INT, comm);
            } else if (mode == 2) {
                MPI_Allgather(mine, cnt, MPI_INT, all, cnt ? 1 : 0, block, comm);
            } else {
                MPI_Allgather(mine, cnt, MPI_INT, all, cnt, MPI_INT, comm);
            }
            for (long i = 0; i < cnt * n; i++) {
                int got = all[mode == 2 ? 2 * i : i];
                if (got != val(i / cnt, i % cnt, salt + mode)) {
                    MT_CHECK(0, "allgather cnt %ld mode %d: [%ld] = %d", cnt, mode, i, got);
                    break;
                }
            }
        }
        MPI_Type_free(&strided);
        MPI_Type_free(&block);
        free(mine);
        free(all);
    }
}

static void test_reductions(MPI_Comm comm, int salt, MPI_Op matop, MPI_Datatype mat)
{
    int me, n;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    for (int c = 0; c < ncounts; c++) {
        long cnt = counts[c];
        int *in = malloc((4 * cnt + 1) * sizeof(int)), *out = malloc((4 * cnt + 1) * sizeof(int));
        for (int root = -1; root < n; root++) { /* -1: allreduce */
            for (int inplace = 0; inplace < 2; inplace++) {
                /* sums of ints */
                for (long i = 0; i < cnt; i++)
                    in[i] = val(me, i, salt);
                bool ip = inplace && (root < 0 || me == root);
                if (ip)
                    memcpy(out, in, cnt * sizeof(int));
                if (root < 0)
                    MPI_Allreduce(ip ? MPI_IN_PLACE : in, out, cnt, MPI_INT, MPI_SUM, comm);
                else
                    MPI_Reduce(ip ? MPI_IN_PLACE : in, out, cnt, MPI_INT, MPI_SUM, root, comm);
                if (root < 0 || me == root)
                    for (long i = 0; i < cnt; i++) {
                        int want = 0;
                        for (int r = 0; r < n; r++)
                            want += val(r, i, salt);
                        if (out[i] != want) {
                            MT_CHECK(0, "%s sum cnt %ld root %d inplace %d: [%ld] = %d, not %d",
                                     root < 0 ? "allreduce" : "reduce", cnt, root, inplace, i,
                                     out[i], want);
                            break;
                        }
                    }
                /* matrix products in rank order (a quarter of the count) */
                long m = cnt / 4;
                for (long i = 0; i < m; i++)
                    mat_of(me, i, in + 4 * i);
                if (ip)
                    memcpy(out, in, 4 * m * sizeof(int));
                if (root < 0)
                    MPI_Allreduce(ip ? MPI_IN_PLACE : in, out, m, mat, matop, comm);
                else
                    MPI_Reduce(ip ? MPI_IN_PLACE : in, out, m, mat, matop, root, comm);
                if (root < 0 || me == root)
                    for (long i = 0; i < m; i++) {
                        int want[4], x[4];
                        mat_of(0, i, want);
                        for (int r = 1; r < n; r++) {
                            mat_of(r, i, x);
                            matmul(want, x, want);
                        }
                        if (memcmp(want, out + 4 * i, sizeof(want))) {
                            MT_CHECK(0, "%s matrices cnt %ld root %d inplace %d: [%ld] wrong",
                                     root < 0 ? "allreduce" : "reduce", m, root, inplace, i);
                            break;
                        }
                    }
            }
        }
        free(in);
        free(out);
    }
}

static const char *pvars[] = { "cx_mcoll_bcast", "cx_mcoll_gather", "cx_mcoll_scatter",
    "cx_mcoll_reduce", "cx_mcoll_allreduce", "cx_mcoll_allgather"
};

static const char *nodes_pvars[] = { "cx_mcoll_nodes_scatter", "cx_mcoll_nodes_allgather",
    "cx_mcoll_nodes_allreduce"
};

int main(int argc, char **argv)
{
    int expect = 0;             /* 1: mcoll, 2: across nodes, -1: none */
    int steps = -1;
    long long before[6], nodes_before[3];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "expect-mcoll"))
            expect = 1;
        else if (!strcmp(argv[a], "expect-nodes"))
            expect = 2;
        else if (!strcmp(argv[a], "expect-none"))
            expect = -1;
        else if (!strncmp(argv[a], "steps=", 6))
            steps = atoi(argv[a] + 6);
        else if (!strcmp(argv[a], "quick")) {
            counts = counts_quick;
            ncounts = sizeof(counts_quick) / sizeof(counts_quick[0]);
        }
    }
    for (int k = 0; k < 6; k++)
        before[k] = mt_pvar_read(pvars[k]);
    for (int k = 0; k < 3; k++)
        nodes_before[k] = mt_pvar_read(nodes_pvars[k]);

    MPI_Datatype mat;
    MPI_Op matop;
    MPI_Type_contiguous(4, MPI_INT, &mat);
    MPI_Type_commit(&mat);
    MPI_Op_create(matmul_op, 0, &matop);

    MPI_Comm split, dup;
    /* reversed order: comm rank differs from world rank */
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &split);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm comms[] = { MPI_COMM_WORLD, split, dup };
    for (int k = 0; k < 3; k++) {
        test_bcast(comms[k], k);
        test_gather_scatter(comms[k], k);
        test_allgather(comms[k], k);
        test_reductions(comms[k], k, matop, mat);
    }
    MPI_Comm_free(&split);
    MPI_Comm_free(&dup);
    MPI_Op_free(&matop);
    MPI_Type_free(&mat);

    /* MPIR_CVAR_CH4_CX_MCOLL=auto leaves allgather to MPICH unless its
     * algorithm CVAR asks for pip_mcoll */
    const char *ag = getenv("MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM");
    int allgather_forced = ag && !strcmp(ag, "pip_mcoll");
    for (int k = 0; k < 3 && expect; k++) {
        long long now = mt_pvar_read(nodes_pvars[k]);
        if (expect == 2)
            MT_CHECK(now > nodes_before[k], "%s did not grow (%lld)", nodes_pvars[k], now);
        else
            MT_CHECK(now <= 0 || now == nodes_before[k], "%s grew to %lld", nodes_pvars[k], now);
    }
    if (steps >= 0) {
        int one = rank, *all = malloc(size * sizeof(int));
        MPI_Allgather(&one, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
        for (int r = 0; r < size; r++)
            MT_CHECK(all[r] == r, "allgather: got %d from rank %d", all[r], r);
        free(all);
        long long last = mt_pvar_read("cx_mcoll_internode_steps_last");
        MT_CHECK(last == steps, "an allgather across nodes took %lld internode steps, not %d",
                 last, steps);
    }
    for (int k = 0; k < 6 && expect && expect != 2; k++) {
        long long now = mt_pvar_read(pvars[k]);
        if (expect > 0 && k == 5 && !allgather_forced)
            MT_CHECK(now <= 0 || now == before[k], "%s grew to %lld under auto", pvars[k], now);
        else if (expect > 0)
            MT_CHECK(now > before[k], "%s did not grow (%lld)", pvars[k], now);
        else
            MT_CHECK(now <= 0 || now == before[k], "%s grew to %lld", pvars[k], now);
    }
    int errs = mt_errors, all_errs;
    MPI_Allreduce(&errs, &all_errs, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all_errs == 0)
        printf("No Errors\n");
    MPI_Finalize();
    return all_errs != 0;
}
