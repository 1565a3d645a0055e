/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * Windows MPICH allocates in shared memory (MPI_Win_allocate and
 * MPI_Win_allocate_shared, with alloc_shared_noncontig so that MPICH tries
 * its symmetric heap): every rank's memory is reachable by MPI_Get and, for
 * shared windows, through MPI_Win_shared_query's pointer.
 *
 * Under mpiexec -pip the tasks of a process share its address space, so a
 * symmetric heap can never be mapped there; run with
 * MPIR_CVAR_SHM_SYMHEAP_RETRY set very high, this test finishes only if
 * MPICH-CX skips the attempt for them (it used to retry 100 times per
 * window: minutes for MPICH's rma/window_noncontig_allocation).
 */
#include "mpitest.h"

#define NWIN 20
#define NINTS 1000      /* 4000 bytes: not a whole page */

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size;

    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_shared_noncontig", "true");

    for (int w = 0; w < NWIN; w++) {
        int shared = w % 2;
        int *mem;
        MPI_Win win;
        if (shared)
            MPI_Win_allocate_shared(NINTS * sizeof(int), sizeof(int), info, MPI_COMM_WORLD,
                                    &mem, &win);
        else
            MPI_Win_allocate(NINTS * sizeof(int), sizeof(int), info, MPI_COMM_WORLD, &mem, &win);
        MPI_Win_fence(0, win);
        for (int i = 0; i < NINTS; i++)
            mem[i] = rank * 1000000 + w * 1000 + i;
        MPI_Win_fence(0, win);

        int got[NINTS];
        MPI_Get(got, NINTS, MPI_INT, right, 0, NINTS, MPI_INT, win);
        MPI_Win_fence(0, win);
        for (int i = 0; i < NINTS; i++)
            MT_CHECK(got[i] == right * 1000000 + w * 1000 + i,
                     "window %d: MPI_Get of rank %d's element %d gave %d", w, right, i, got[i]);

        if (shared) {
            MPI_Aint peer_size;
            int disp_unit, *peer;
            MPI_Win_shared_query(win, right, &peer_size, &disp_unit, &peer);
            MT_CHECK(peer_size == NINTS * sizeof(int) && disp_unit == sizeof(int),
                     "window %d: rank %d's size %ld, unit %d", w, right, (long) peer_size,
                     disp_unit);
            for (int i = 0; i < NINTS; i++)
                MT_CHECK(peer[i] == right * 1000000 + w * 1000 + i,
                         "window %d: rank %d's element %d reads %d through its pointer", w,
                         right, i, peer[i]);
        }
        MPI_Win_free(&win);
    }
    MPI_Info_free(&info);
    return mt_finish();
}
