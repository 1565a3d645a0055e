/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * Stress: T threads per rank (argument, default 8) with a mix of operations:
 * windows of Isend/Irecv completed by Waitall or by MPI_Test loops, blocking
 * Send/Recv, Iprobe, and an any-source receive; thread i of each rank talks
 * to thread i of the other through tag i.  Every payload is checked.  Must
 * finish without deadlock under every model, oversubscribed included.
 */
#include "mpitest.h"
#include <pthread.h>
#include <string.h>

#define ITERS 60
#define WINDOW 16

static int rank, peer;

static void *worker(void *arg)
{
    int id = (int) (long) arg;
    int sbuf[WINDOW], rbuf[WINDOW];
    MPI_Request reqs[2 * WINDOW];
    for (int it = 0; it < ITERS; it++) {
        int base = (it * 131 + id) % 100000;
        for (int w = 0; w < WINDOW; w++) {
            sbuf[w] = base + w;
            rbuf[w] = -1;
            MPI_Irecv(&rbuf[w], 1, MPI_INT, peer, id, MPI_COMM_WORLD, &reqs[w]);
            MPI_Isend(&sbuf[w], 1, MPI_INT, peer, id, MPI_COMM_WORLD, &reqs[WINDOW + w]);
        }
        if (it % 2) {
            MPI_Waitall(2 * WINDOW, reqs, MPI_STATUSES_IGNORE);
        } else {
            int done = 0;
            while (!done)
                MPI_Testall(2 * WINDOW, reqs, &done, MPI_STATUSES_IGNORE);
        }
        for (int w = 0; w < WINDOW; w++)
            if (rbuf[w] != base + w) {
                MT_CHECK(0, "thread %d iteration %d: slot %d holds %d, want %d", id, it, w,
                         rbuf[w], base + w);
                break;
            }
        /* blocking exchange, ordered by rank to avoid a send-send cycle */
        int v = base, got = -1, flag;
        if (rank == 0) {
            MPI_Send(&v, 1, MPI_INT, peer, id, MPI_COMM_WORLD);
            MPI_Recv(&got, 1, MPI_INT, peer, id, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Status st;
            do
                MPI_Iprobe(peer, id, MPI_COMM_WORLD, &flag, &st);
            while (!flag);
            MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, id, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(&v, 1, MPI_INT, peer, id, MPI_COMM_WORLD);
        }
        MT_CHECK(got == base, "thread %d iteration %d: blocking exchange got %d", id, it, got);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided, size, nthreads = argc > 1 ? atoi(argv[1]) : 8;
    pthread_t t[256];
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MT_CHECK(size == 2 && provided == MPI_THREAD_MULTIPLE, "2 ranks, MPI_THREAD_MULTIPLE");
    MT_CHECK(nthreads >= 1 && nthreads <= 256, "threads: 1 to 256, not %d", nthreads);
    if (size != 2 || provided != MPI_THREAD_MULTIPLE || nthreads < 1 || nthreads > 256)
        return mt_finish();
    peer = 1 - rank;
    for (long i = 0; i < nthreads; i++)
        pthread_create(&t[i], NULL, worker, (void *) i);
    for (int i = 0; i < nthreads; i++)
        pthread_join(t[i], NULL);
    return mt_finish();
}
