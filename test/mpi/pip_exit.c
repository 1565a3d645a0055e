/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * Under `mpiexec -pip -n 4` (test/mpi/run): after MPI_Finalize, rank 1
 * calls exit(3) inside a shared library of its own (libpip_exit_lib.so,
 * as libgfortran calls exit for a Fortran STOP).  That must end rank 1
 * only: its atexit handler runs and its buffered stdout is flushed, mpiexec
 * reports code 3, and the other ranks, still running, finish normally (each
 * prints a line half a second after rank 1's exit).  Without -pip the same
 * holds for processes.
 */
#include "mpitest.h"
#include <time.h>

void pip_exit_lib_end(int code);        /* lib/pip_exit_lib.c */

static void at_exit_handler(void)
{
    printf("rank 1: atexit handler ran\n");
}

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int rc = mt_finish();
    if (rank == 1) {
        static char buf[BUFSIZ];
        setvbuf(stdout, buf, _IOFBF, sizeof(buf));      /* only exit flushes this */
        atexit(at_exit_handler);
        printf("rank 1: buffered line before exit(3)\n");
        pip_exit_lib_end(3);
    }
    struct timespec ts = {.tv_sec = 0,.tv_nsec = 500000000L };
    nanosleep(&ts, NULL);
    printf("rank %d: done after rank 1's exit\n", rank);
    return rc;
}
