/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * Communicator creation in a loop (issue 28 item 2):
 *     comm_create_loop [THREADS [ITERATIONS [mixed]]]     (defaults 1 and 200)
 * THREADS threads per rank, each on a communicator of its own, repeat
 * ITERATIONS times: MPI_Comm_idup + MPI_Wait, two overlapping
 * MPI_Comm_idup + MPI_Waitall, MPI_Comm_idup completed by an MPI_Test
 * loop, MPI_Comm_dup and MPI_Comm_split_type.
 * MPICH runs parts of these from inside progress (the schedule of
 * MPI_Comm_idup allocates its context id with a blocking MPI_Allreduce and
 * commits the communicator with a blocking broadcast, both called by a
 * schedule callback, i.e. inside the progress poll of the thread's own
 * MPI_Wait): with selective reactivation such a nested wait used to sleep
 * as a waiter while its own thread held the polling server role, and the
 * rank hung (under usc, ksc and crowded auto waits, every model).  Every new communicator is checked
 * (size, congruence, an allreduce over it); a hang is caught by the time
 * limit of the runner (test/mpi/run).
 *
 * The threads of a rank create communicators nonblocking (the idups) and
 * blocking (dup, split_type, and every MPI_Comm_free) in separate phases,
 * with a barrier between: MPICH 4.0.2's context-id code is not thread-safe
 * across the two in a per-VCI build (its schedule callbacks change
 * context_mask and next_gcn holding the schedule list's lock only, while
 * blocking allocations and MPIR_Free_contextid hold the context-id mutex:
 * threads/comm/idup_nb's "Assertion failed in contextid.c:239"; patch
 * 0018-contextid-nbc-lock takes that mutex in the callbacks too), and this
 * test is about MPICH-CX's waits.  Run with "mixed" as third argument, the
 * threads do not wait for each other (a reproducer of that MPICH race).
 */
#include "mpitest.h"
#include <pthread.h>
#include <time.h>

#define MAXT 16

static int nthreads = 1, iterations = 200, rank, size, mixed;
static MPI_Comm comms[MAXT];
static pthread_barrier_t phase;

/* the threads of this rank move from one kind of creation to the other */
static void next_phase(void)
{
    if (!mixed)
        pthread_barrier_wait(&phase);
}

/* A new communicator is a working copy of c. */
static void check_comm(MPI_Comm c, MPI_Comm n, int tid, int it, const char *what)
{
    int result, nsize, sum = -1;
    MPI_Comm_compare(c, n, &result);
    MT_CHECK(result == MPI_CONGRUENT, "thread %d iteration %d: %s not congruent (%d)", tid, it,
             what, result);
    MPI_Comm_size(n, &nsize);
    MT_CHECK(nsize == size, "thread %d iteration %d: %s of size %d", tid, it, what, nsize);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, n);
    MT_CHECK(sum == size * (size - 1) / 2, "thread %d iteration %d: allreduce over %s gave %d",
             tid, it, what, sum);
}

static void *loop(void *p)
{
    int tid = (int) (long) p;
    MPI_Comm c = comms[tid];
    for (int it = 0; it < iterations; it++) {
        MPI_Comm a, b[2], d, s;
        MPI_Request r, rr[2];

        MPI_Comm_idup(c, &a, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);

        MPI_Comm_idup(c, &b[0], &rr[0]);
        MPI_Comm_idup(c, &b[1], &rr[1]);
        MPI_Waitall(2, rr, MPI_STATUSES_IGNORE);

        /* the schedule's blocking calls then run inside MPI_Test's poll,
         * a progress call that is no registered wait */
        MPI_Comm e;
        int flag = 0;
        MPI_Comm_idup(c, &e, &r);
        while (!flag)
            MPI_Test(&r, &flag, MPI_STATUS_IGNORE);

        next_phase();   /* blocking creations and frees from here */
        MPI_Comm_dup(c, &d);
        MPI_Comm_split_type(c, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &s);
        int ssize;
        MPI_Comm_size(s, &ssize);
        MT_CHECK(ssize >= 1 && ssize <= size, "thread %d iteration %d: split_type size %d", tid,
                 it, ssize);

        /* one of them checked in full each time, in turn */
        switch (it % 4) {
            case 0:
                check_comm(c, a, tid, it, "idup");
                break;
            case 1:
                check_comm(c, b[it / 4 % 2], tid, it, "overlapping idup");
                break;
            case 2:
                check_comm(c, it / 4 % 2 ? d : e, tid, it, it / 4 % 2 ? "dup" : "tested idup");
                break;
            default:{
                    int sum = -1;
                    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_MAX, s);
                    MT_CHECK(sum >= 0 && sum < size, "thread %d iteration %d: split_type max %d",
                             tid, it, sum);
                }
        }
        MPI_Comm_free(&a);
        MPI_Comm_free(&b[0]);
        MPI_Comm_free(&b[1]);
        MPI_Comm_free(&d);
        MPI_Comm_free(&e);
        MPI_Comm_free(&s);
        next_phase();   /* nonblocking creations from here */
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    if (argc > 1)
        nthreads = atoi(argv[1]);
    if (argc > 2)
        iterations = atoi(argv[2]);
    mixed = argc > 3 && !strcmp(argv[3], "mixed");
    if (nthreads < 1 || nthreads > MAXT || iterations < 1) {
        fprintf(stderr, "usage: comm_create_loop [THREADS (1-%d) [ITERATIONS [mixed]]]\n", MAXT);
        return 2;
    }
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MT_CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);

    /* collective calls of different threads go to different communicators */
    for (int t = 0; t < nthreads; t++)
        MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]);

    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pthread_barrier_init(&phase, NULL, nthreads);
    pthread_t th[MAXT];
    for (int t = 1; t < nthreads; t++)
        pthread_create(&th[t], NULL, loop, (void *) (long) t);
    loop((void *) 0L);
    for (int t = 1; t < nthreads; t++)
        pthread_join(th[t], NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);

    pthread_barrier_destroy(&phase);
    for (int t = 0; t < nthreads; t++)
        MPI_Comm_free(&comms[t]);
    if (rank == 0) {
        const char *wait = getenv("MPIR_CVAR_CH4_CX_WAIT");
        printf("# %s (wait %s): %d threads x %d iterations of idup, 2 idups, tested idup, dup, "
               "split_type: %.2f s; cx_server_elections %lld, cx_stalled_server_polls %lld\n",
               mt_model(), wait && *wait ? wait : "default", nthreads, iterations,
               (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9,
               mt_pvar_read("cx_server_elections"), mt_pvar_read("cx_stalled_server_polls"));
    }
    return mt_finish();
}
