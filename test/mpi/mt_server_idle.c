/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * The selective-reactivation server between its polls, at SCHED_IDLE or
 * parked until a core goes idle (doc/user/thread-safety.md, "How blocked threads wait";
 * MPIR_CVAR_CH4_CX_SERVER_IDLE and _PARK), under LockQ's auto waits:
 *   1. windows: T threads per rank exchange windows of messages, more
 *      threads than the rank's share of cores, so that waiters sleep and a
 *      server polls; every thread checks after every wait that it runs
 *      SCHED_OTHER again (no thread of the user is left at idle priority);
 *   2. hogs: on rank 1, more threads block in MPI_Recv than may poll while
 *      as many threads as there are cores spin outside MPI; rank 0 sends
 *      their messages late.  An idle server gets no core then: the receives
 *      must still complete (the watchdog moves the server back after a
 *      millisecond; a parked server polls at least every millisecond);
 *      within 2 s, where they take 1-120 ms here (doc/performance.md).
 *   mt_server_idle idle|normal park|nopark: whether cx_server_idle_tenures
 *   must be positive (the server moved to SCHED_IDLE) or 0, and whether
 *   rank 1's server parked and was rung (cx_server_parks, _park_rings) or
 *   never parked.
 */
#include "mpitest.h"
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <unistd.h>

#define WINDOW 32
#define ITERS 200

/* tags: thread t's data t, its acknowledgements nthreads + t, its message
 * of part 2 2 * nthreads + t */
static int rank, cores, nthreads;
static atomic_int receives_left;

static void check_policy(const char *where)
{
    int policy = sched_getscheduler(0); /* this thread's, from the kernel */
    MT_CHECK(policy == SCHED_OTHER, "thread left at policy %d after %s", policy, where);
}

/* 1. thread t of rank 0 sends windows to thread t of rank 1, acknowledged */
static void *window_thread(void *arg)
{
    int t = (int) (long) arg, peer = 1 - rank;
    char buf[WINDOW][8];
    MPI_Request r[WINDOW];
    for (int i = 0; i < ITERS; i++) {
        for (int w = 0; w < WINDOW; w++) {
            if (rank == 0) {
                snprintf(buf[w], sizeof(buf[w]), "%d.%d", t, w);
                MPI_Isend(buf[w], 8, MPI_CHAR, peer, t, MPI_COMM_WORLD, &r[w]);
            } else
                MPI_Irecv(buf[w], 8, MPI_CHAR, peer, t, MPI_COMM_WORLD, &r[w]);
        }
        MPI_Waitall(WINDOW, r, MPI_STATUSES_IGNORE);
        check_policy("MPI_Waitall");
        if (rank == 1) {
            for (int w = 0; w < WINDOW; w++) {
                char want[8];
                snprintf(want, sizeof(want), "%d.%d", t, w);
                MT_CHECK(!strcmp(buf[w], want), "thread %d got %s, not %s", t, buf[w], want);
            }
            MPI_Send(NULL, 0, MPI_BYTE, peer, nthreads + t, MPI_COMM_WORLD);
        } else
            MPI_Recv(NULL, 0, MPI_BYTE, peer, nthreads + t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        check_policy("MPI_Send/MPI_Recv");
    }
    return NULL;
}

/* 2. a receiver blocked while the hogs spin */
static void *hog_receiver(void *arg)
{
    int t = (int) (long) arg, got = -1;
    MPI_Recv(&got, 1, MPI_INT, 0, 2 * nthreads + t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MT_CHECK(got == t, "receiver %d got %d", t, got);
    check_policy("MPI_Recv");
    atomic_fetch_sub(&receives_left, 1);
    return NULL;
}

static void *hog(void *arg)
{
    double give_up = *(double *) arg;
    volatile unsigned long spin = 0;
    while (atomic_load(&receives_left) > 0 && MPI_Wtime() < give_up)
        spin++;
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MT_CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    MT_CHECK(argc == 3 && (!strcmp(argv[1], "idle") || !strcmp(argv[1], "normal")) &&
             (!strcmp(argv[2], "park") || !strcmp(argv[2], "nopark")),
             "usage: mt_server_idle idle|normal park|nopark");
    cores = mt_cpus();
    nthreads = mt_auto_limit() + 2;     /* more than auto lets poll */
    pthread_t *th = malloc(sizeof(pthread_t) * (size_t) nthreads);
    pthread_t *hogs = malloc(sizeof(pthread_t) * (size_t) cores);

    /* 1. windows */
    for (int t = 0; t < nthreads; t++)
        pthread_create(&th[t], NULL, window_thread, (void *) (long) t);
    for (int t = 0; t < nthreads; t++)
        pthread_join(th[t], NULL);
    MPI_Barrier(MPI_COMM_WORLD);

    /* 2. hogs */
    if (rank == 1) {
        atomic_store(&receives_left, nthreads);
        for (int t = 0; t < nthreads; t++)
            pthread_create(&th[t], NULL, hog_receiver, (void *) (long) t);
        MPI_Barrier(MPI_COMM_WORLD);
        usleep(50000);  /* the receivers are blocked by now */
        double start = MPI_Wtime(), give_up = start + 10.0;
        for (int h = 0; h < cores; h++)
            pthread_create(&hogs[h], NULL, hog, &give_up);
        MPI_Barrier(MPI_COMM_WORLD);    /* rank 0 sends now */
        for (int t = 0; t < nthreads; t++)
            pthread_join(th[t], NULL);
        double took = MPI_Wtime() - start;
        for (int h = 0; h < cores; h++)
            pthread_join(hogs[h], NULL);
        fprintf(stderr, "# %d receives under %d spinning threads took %.3f s\n", nthreads, cores,
                took);
        MT_CHECK(took < 2.0, "%d receives under %d spinning threads took %.3f s", nthreads,
                 cores, took);
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        for (int t = 0; t < nthreads; t++)
            MPI_Send(&t, 1, MPI_INT, 1, 2 * nthreads + t, MPI_COMM_WORLD);
    }

    free(hogs);
    free(th);
    long long tenures = mt_pvar_read("cx_server_idle_tenures");
    long long elections = mt_pvar_read("cx_server_elections");
    long long kicks = mt_pvar_read("cx_server_idle_kicks");
    fprintf(stderr, "# rank %d: cx_server_elections %lld, cx_server_idle_tenures %lld, "
            "cx_server_idle_kicks %lld\n", rank, elections, tenures, kicks);
    if (!strcmp(argv[1], "idle")) {
        /* rank 1's receivers crowd it in part 2; rank 0 may never crowd */
        if (rank == 1)
            MT_CHECK(tenures > 0 && tenures <= elections,
                     "%lld tenures at SCHED_IDLE of %lld elections", tenures, elections);
    } else
        MT_CHECK(tenures == 0 && kicks == 0, "%lld tenures at SCHED_IDLE and %lld kicks, "
                 "none expected", tenures, kicks);
    long long parks = mt_pvar_read("cx_server_parks");
    long long rings = mt_pvar_read("cx_server_park_rings");
    long long ptimeouts = mt_pvar_read("cx_server_park_timeouts");
    fprintf(stderr, "# rank %d: cx_server_parks %lld, cx_server_park_rings %lld, "
            "cx_server_park_timeouts %lld\n", rank, parks, rings, ptimeouts);
    MT_CHECK(parks == rings + ptimeouts, "%lld parks, %lld rung and %lld timed out", parks, rings,
             ptimeouts);
    if (!strcmp(argv[2], "park")) {
        if (rank == 1)
            MT_CHECK(rings > 0, "the server never parked and was rung (%lld parks)", parks);
    } else
        MT_CHECK(parks == 0, "%lld parks, none expected", parks);
    return mt_finish();
}
