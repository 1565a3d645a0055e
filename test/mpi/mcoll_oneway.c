/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * PiP-MColl's small bcast, whose root leaves at once (doc/design/pip-mcoll.md,
 * one-way steps): runs of small bcasts from the same root and from rotating
 * roots with no other collective between them, while some ranks lag (so a
 * root is a step ahead of a slow reader), on communicators created and
 * freed in a loop (so a slot goes back to the pool while a reader may be
 * behind), with the data checked on every rank.
 *   mcoll_oneway [ITERATIONS]
 */
#include "mpitest.h"
#include <unistd.h>

static int rank;

static void lag(int i)
{
    /* ranks lag in turn, for a little while */
    if ((i + rank) % 7 == 0)
        usleep(200);
}

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 300, size;
    unsigned char buf[2048];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 0; i < iters; i++) {
        MPI_Comm comm;
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        for (int k = 0; k < 6; k++) {
            int root = k < 3 ? i % size : (i + k) % size, n = 1 + (i * 37 + k * 301) % 2048;
            for (int b = 0; b < n; b++)
                buf[b] = rank == root ? (unsigned char) (i * 7 + k * 13 + b) : 0xee;
            if (rank != root)
                lag(i + k);
            MPI_Bcast(buf, n, MPI_BYTE, root, comm);
            for (int b = 0; b < n; b++)
                MT_CHECK(buf[b] == (unsigned char) (i * 7 + k * 13 + b),
                         "iteration %d bcast %d from %d: byte %d is %d", i, k, root, b, buf[b]);
            if (mt_errors)
                break;
        }
        MPI_Comm_free(&comm);
        if (mt_errors)
            break;
    }
    long long runs = mt_pvar_read("cx_mcoll_bcast");
    if (argc > 2 && !strcmp(argv[2], "expect-mcoll"))
        MT_CHECK(runs >= 6LL * iters, "cx_mcoll_bcast is %lld, not at least %d", runs, 6 * iters);
    int errs = mt_errors, all;
    MPI_Allreduce(&errs, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all == 0)
        printf("No Errors\n");
    MPI_Finalize();
    return all != 0;
}
