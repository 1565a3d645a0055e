/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * Under `mpiexec -pip` (test/mpi/run): the ranks of a node are PiP tasks of
 * one process.
 *   1. every rank is a task (MPICH_CX_PIP_TASK set) with its own copy of
 *      the program's globals: the same global lives at a different address
 *      in each rank, and holds that rank's value;
 *   2. the ranks of one host share its address space: each rank fills a
 *      buffer, exchanges its address (and the host's process id, from the
 *      system call) with MPI_Allgather, and reads the buffer of the next
 *      rank of its host through the pointer; no host has more than 15 ranks;
 *      getpid() differs between the ranks of a host (one per task);
 *   each rank prints one line (for the -l labels test);
 *   3. argv `exit N`: after MPI_Finalize, rank 1 exits with code N (the
 *      others with 0), to check per-rank exit codes reach mpiexec;
 *      `crash`: rank 1 dereferences NULL after MPI_Init; `abort`: rank 1
 *      calls MPI_Abort(MPI_COMM_WORLD, 7).
 * Each rank's line ends with the CPUs it may run on (for -bind-to).
 * Without -pip (no MPICH_CX_PIP_TASK) it says so and fails.
 */
#define _GNU_SOURCE
#include "mpitest.h"
#include <sched.h>
#include <stdint.h>
#include <unistd.h>
#include <sys/syscall.h>

static int my_global = -1;
static char buffer[64];

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    if (argc > 1 && !strcmp(argv[1], "crash") && rank == 1) {
        volatile int *p = NULL;
        *p = 1;
    }
    if (argc > 1 && !strcmp(argv[1], "abort") && rank == 1)
        MPI_Abort(MPI_COMM_WORLD, 7);
    MT_CHECK(getenv("MPICH_CX_PIP_TASK") != NULL, "rank %d is not a PiP task (run with -pip)",
             rank);

    /* 1. private globals */
    my_global = rank;
    uint64_t mine = (uintptr_t) & my_global, *all = malloc(size * sizeof(uint64_t));
    MPI_Allgather(&mine, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++) {
        if (r != rank)
            MT_CHECK(all[r] != mine, "ranks %d and %d share their globals at %p", rank, r,
                     (void *) &my_global);
    }

    /* 2. one address space per host: read the next rank of the host in place */
    snprintf(buffer, sizeof(buffer), "buffer of rank %d", rank);
    mine = (uintptr_t) buffer;
    MPI_Allgather(&mine, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, MPI_COMM_WORLD);
    int pid = (int) syscall(SYS_getpid), *pids = malloc(size * sizeof(int));
    int task_pid = (int) getpid(), *task_pids = malloc(size * sizeof(int));
    MPI_Allgather(&pid, 1, MPI_INT, pids, 1, MPI_INT, MPI_COMM_WORLD);
    MPI_Allgather(&task_pid, 1, MPI_INT, task_pids, 1, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++)
        if (r != rank)
            MT_CHECK(task_pids[r] != task_pid, "ranks %d and %d both have getpid() %d", rank, r,
                     task_pid);
    int in_host = 0, next = -1;
    for (int k = 1; k <= size; k++) {
        int r = (rank + k) % size;
        if (pids[r] == pid) {
            in_host++;
            if (next < 0 && r != rank)
                next = r;
        }
    }
    MT_CHECK(in_host <= 15, "rank %d's host runs %d ranks (at most 15)", rank, in_host);
    if (next >= 0) {
        char want[64];
        snprintf(want, sizeof(want), "buffer of rank %d", next);
        const char *peer = (const char *) (uintptr_t) all[next];
        MT_CHECK(!strcmp(peer, want), "rank %d read '%.63s' through rank %d's pointer", rank,
                 peer, next);
    }
    const char *task = getenv("MPICH_CX_PIP_TASK");
    char cpus[256] = "";
    cpu_set_t set;
    sched_getaffinity(0, sizeof(set), &set);
    for (int i = 0, n = 0; i < CPU_SETSIZE && n < (int) sizeof(cpus) - 8; i++)
        if (CPU_ISSET(i, &set))
            n += snprintf(cpus + n, sizeof(cpus) - n, " %d", i);
    printf("rank %d: task %s of a host with %d ranks, read rank %d's buffer in place; cpus:%s\n",
           rank, task ? task : "(none)", in_host, next, cpus);
    fflush(stdout);
    free(pids);
    free(task_pids);
    MPI_Barrier(MPI_COMM_WORLD);        /* the buffers stay until everyone read */
    free(all);

    int code = (argc > 2 && !strcmp(argv[1], "exit") && rank == 1) ? atoi(argv[2]) : 0;
    int rc = mt_finish();
    return code ? code : rc;
}
