/*
 * Helpers for MPICH-CX's MPI test programs. A test prints "No Errors" on rank
 * 0 and exits 0 when every check held (MPICH's test-suite convention).
 */
#ifndef MPITEST_H_INCLUDED
#define MPITEST_H_INCLUDED

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static _Atomic int mt_errors;     /* threads report errors too */

#define MT_CHECK(cond, ...) \
    do { \
        if (!(cond)) { \
            int r_; \
            MPI_Comm_rank(MPI_COMM_WORLD, &r_); \
            fprintf(stderr, "[rank %d] %s:%d: check failed: %s: ", r_, __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__); \
            fprintf(stderr, "\n"); \
            mt_errors++; \
        } \
    } while (0)

/* Sum the errors of all ranks; rank 0 reports. Returns the exit status. */
static inline int mt_finish(void)
{
    int total = 0, rank, mine = mt_errors;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Reduce(&mine, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        if (total)
            printf("Found %d errors\n", total);
        else
            printf("No Errors\n");
    }
    MPI_Finalize();
    return total ? 1 : 0;
}

#endif /* MPITEST_H_INCLUDED */
