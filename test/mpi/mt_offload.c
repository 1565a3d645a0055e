/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * The offload model (MPIR_CVAR_CH4_MT_MODEL=offload) on 2 ranks with
 * MPI_THREAD_MULTIPLE: threads exchange sequence-numbered messages, each on
 * its own tag (a thread's sends arrive in the order it issued them, through
 * the executor's queue), then the rank sits idle in no MPI call for 120 ms,
 * then exchanges again and finalizes with its executors alive.
 *   mt_offload dynamic|static [THREADS]
 * dynamic: the executors retired in the idle phase (cx_offload_alive 0,
 * cx_offload_retires grew) and the process took under 1 ms of CPU in its
 * last 100 ms; the next exchange started them again. static: the executor
 * never retired and was alive all along.
 */
#include "mpitest.h"
#include <pthread.h>
#include <time.h>

#define MSGS 300
#define LEN 64

static int rank, peer, nthreads = 4;

static void *exchange(void *arg)
{
    int t = (int) (long) arg;
    MPI_Request reqs[2 * MSGS];
    static _Thread_local int sendbuf[MSGS][LEN], recvbuf[MSGS][LEN];
    for (int i = 0; i < MSGS; i++) {
        MPI_Irecv(recvbuf[i], LEN, MPI_INT, peer, t, MPI_COMM_WORLD, &reqs[i]);
        for (int j = 0; j < LEN; j++)
            sendbuf[i][j] = i * 1000 + t * 10 + rank;
    }
    for (int i = 0; i < MSGS; i++) {
        if (i % 3 == 0)
            MPI_Send(sendbuf[i], LEN, MPI_INT, peer, t, MPI_COMM_WORLD);
        else
            MPI_Isend(sendbuf[i], LEN, MPI_INT, peer, t, MPI_COMM_WORLD, &reqs[MSGS + i]);
        if (i % 3 == 0)
            reqs[MSGS + i] = MPI_REQUEST_NULL;
    }
    MPI_Waitall(2 * MSGS, reqs, MPI_STATUSES_IGNORE);
    for (int i = 0; i < MSGS; i++)
        MT_CHECK(recvbuf[i][0] == i * 1000 + t * 10 + peer && recvbuf[i][LEN - 1] == recvbuf[i][0],
                 "thread %d message %d: got %d, want %d (out of order or lost)", t, i,
                 recvbuf[i][0], i * 1000 + t * 10 + peer);
    return NULL;
}

static void exchange_all(void)
{
    pthread_t th[64];
    for (int t = 0; t < nthreads; t++)
        pthread_create(&th[t], NULL, exchange, (void *) (long) t);
    for (int t = 0; t < nthreads; t++)
        pthread_join(th[t], NULL);
}

static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
    int provided, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2 || size != 2 || provided != MPI_THREAD_MULTIPLE) {
        fprintf(stderr, "usage: mpiexec -n 2 mt_offload dynamic|static [THREADS] "
                "(MPI_THREAD_MULTIPLE)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int dynamic = !strcmp(argv[1], "dynamic");
    if (argc > 2)
        nthreads = atoi(argv[2]);
    if (nthreads < 1 || nthreads > 64)
        nthreads = 4;
    peer = 1 - rank;

    exchange_all();
    long long ops = mt_pvar_read("cx_offload_ops"), starts = mt_pvar_read("cx_offload_starts");
    MT_CHECK(ops > 0, "no operation went through an executor (cx_offload_ops %lld)", ops);
    MT_CHECK(starts >= 1, "no executor started (cx_offload_starts %lld)", starts);
    long long batches = mt_pvar_read("cx_offload_batches");
    MT_CHECK(batches >= 1 && batches <= ops, "cx_offload_batches %lld for %lld operations",
             batches, ops);

    /* idle: no MPI call for 120 ms; the last 100 ms are measured */
    long long retires = mt_pvar_read("cx_offload_retires");
    struct timespec settle = { 0, 20 * 1000 * 1000 }, idle = { 0, 100 * 1000 * 1000 };
    nanosleep(&settle, NULL);
    double c0 = cpu_ms();
    nanosleep(&idle, NULL);
    double idle_cpu = cpu_ms() - c0;
    long long alive = mt_pvar_level("cx_offload_alive");
    long long retired = mt_pvar_read("cx_offload_retires") - retires;
    if (dynamic) {
        MT_CHECK(alive == 0, "%lld executors alive after 120 ms without MPI calls", alive);
        MT_CHECK(retired + retires >= 1, "no executor retired (cx_offload_retires %lld)",
                 retired + retires);
        MT_CHECK(idle_cpu < 1.0, "the idle phase took %.3f ms of CPU in 100 ms (1%% is 1 ms)",
                 idle_cpu);
    } else {
        MT_CHECK(alive >= 1, "static: no executor alive in the idle phase");
        MT_CHECK(retires == 0 && retired == 0, "static: executors retired (%lld)",
                 retires + retired);
    }
    printf("[rank %d] %s: %lld operations offloaded in %lld batches, %lld starts, "
           "%lld retirements; idle phase: %.3f ms CPU in 100 ms, %lld executors alive\n",
           rank, argv[1], ops, batches, starts, retires + retired, idle_cpu, alive);

    /* again: executors start again (dynamic), then MPI_Finalize with them alive */
    exchange_all();
    if (dynamic) {
        long long again = mt_pvar_read("cx_offload_starts");
        MT_CHECK(again > starts, "no executor started after the idle phase (%lld starts)", again);
    }
    MPI_Request r;
    int v = rank, w = -1;
    MPI_Irecv(&w, 1, MPI_INT, peer, 99, MPI_COMM_WORLD, &r);
    MPI_Send(&v, 1, MPI_INT, peer, 99, MPI_COMM_WORLD);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MT_CHECK(w == peer, "last message %d, want %d", w, peer);
    return mt_finish();
}
