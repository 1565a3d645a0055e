/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * MPI_THREAD_MULTIPLE: T threads per rank exchange verified messages with the
 * same-numbered thread of the peer, concurrently, once with a communicator
 * per thread and once with a tag per thread on one communicator (the
 * receiver then uses MPI_ANY_SOURCE), over eager and rendezvous sizes.
 */
#include "mpitest.h"
#include <pthread.h>
#include <string.h>

#define NTHREADS 4
#define ROUNDS 200

static int rank;
static MPI_Comm comms[NTHREADS];
static int use_comm_per_thread;

static void *exchange(void *arg)
{
    int t = (int) (long) arg, peer = 1 - rank;
    MPI_Comm comm = use_comm_per_thread ? comms[t] : MPI_COMM_WORLD;
    int tag = use_comm_per_thread ? 0 : t;
    static const int sizes[] = { 1, 64, 4096, 200000 };
    for (int s = 0; s < 4; s++) {
        int n = sizes[s];
        int *out = malloc(sizeof(int) * n), *in = malloc(sizeof(int) * n);
        for (int r = 0; r < ROUNDS / (s + 1); r++) {
            for (int i = 0; i < n; i++)
                out[i] = rank * 1000000 + t * 10000 + r + i;
            MPI_Request req[2];
            MPI_Status st;
            MPI_Irecv(in, n, MPI_INT, use_comm_per_thread ? peer : MPI_ANY_SOURCE, tag, comm,
                      &req[0]);
            MPI_Isend(out, n, MPI_INT, peer, tag, comm, &req[1]);
            MPI_Wait(&req[1], MPI_STATUS_IGNORE);
            MPI_Wait(&req[0], &st);
            int count;
            MPI_Get_count(&st, MPI_INT, &count);
            MT_CHECK(count == n && st.MPI_SOURCE == peer && st.MPI_TAG == tag,
                     "thread %d: count %d source %d tag %d", t, count, st.MPI_SOURCE, st.MPI_TAG);
            for (int i = 0; i < n; i++)
                if (in[i] != peer * 1000000 + t * 10000 + r + i) {
                    MT_CHECK(0, "thread %d round %d size %d: element %d is %d", t, r, n, i, in[i]);
                    break;
                }
        }
        free(out);
        free(in);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MT_CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    MT_CHECK(size == 2, "run with 2 ranks, not %d", size);
    if (provided == MPI_THREAD_MULTIPLE && size == 2) {
        for (int t = 0; t < NTHREADS; t++)
            MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]);
        for (use_comm_per_thread = 1; use_comm_per_thread >= 0; use_comm_per_thread--) {
            pthread_t th[NTHREADS];
            for (int t = 0; t < NTHREADS; t++)
                pthread_create(&th[t], NULL, exchange, (void *) (long) t);
            for (int t = 0; t < NTHREADS; t++)
                pthread_join(th[t], NULL);
            MPI_Barrier(MPI_COMM_WORLD);
        }
        for (int t = 0; t < NTHREADS; t++)
            MPI_Comm_free(&comms[t]);
    }
    return mt_finish();
}
