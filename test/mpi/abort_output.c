/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * Output written before MPI_Abort reaches mpiexec's output: rank 1 writes
 * LINES lines to stderr (more than a pipe holds) and calls
 * MPI_Abort(MPI_COMM_WORLD, 7) at once; the runner expects exit status 7,
 * every line and MPICH's "MPI_Abort(MPI_COMM_WORLD, 7)" line.  Hydra's
 * proxy used to forward the abort before the output still in the rank's
 * pipe, and mpiexec exits on the abort (patch 0019-hydra-abort-output).
 *     abort_output [LINES]      (default 2000)
 */
#include "mpitest.h"

int main(int argc, char **argv)
{
    int rank, lines = argc > 1 ? atoi(argv[1]) : 2000;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 1) {
        for (int i = 1; i <= lines; i++)
            fprintf(stderr, "rank 1 line %d of %d before MPI_Abort\n", i, lines);
        MPI_Abort(MPI_COMM_WORLD, 7);
    }
    MPI_Barrier(MPI_COMM_WORLD);        /* never returns: rank 1 aborts */
    MPI_Finalize();
    return 0;
}
