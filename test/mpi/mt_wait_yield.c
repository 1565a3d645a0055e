/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * A thread blocked in MPI gives its core to a thread beside it that has work
 * (doc/user/thread-safety.md, "How blocked threads wait": auto waits yield for real once their polls
 * have found nothing for MPIR_CVAR_CH4_CX_WAIT_YIELD_AFTER, where MPICH's
 * MPL_thread_yield does nothing on Linux).
 *
 * Rank 0 runs two threads pinned to one CPU.  The waiter blocks in MPI_Recv
 * for a message that rank 1 sends only after the worker's own message
 * reached it; the worker first computes for 100 ms of CPU time, outside MPI,
 * then sends.  A waiter that yields between its polls leaves the core to
 * the worker; a waiter that polls through its time slices takes about half
 * of it.  The share is read from both threads' CPU clocks over the worker's
 * computation: wall time would also count what other processes and the
 * hypervisor take from this CPU (a loaded CI machine once stretched the
 * worker's 100 ms to 173 ms with the yields working).
 *
 *   mt_wait_yield yields|noyields
 *
 * yields    the cx_wait_yields pvar counts yields, and the waiter took under
 *           a quarter of the CPU time the worker took (a few percent here;
 *           about as much as the worker without the yields).
 * noyields  MPICH's own waits (MPIR_CVAR_CH4_CX_WAIT=poll), or auto with
 *           MPIR_CVAR_CH4_CX_WAIT_YIELD_AFTER=-1: no yield is counted; the
 *           shares are only reported.
 */
#include "mpitest.h"
#include <pthread.h>
#include <stdbool.h>
#include <time.h>

#define WORK_NS 100000000LL

static double worker_wall_ns, waiter_cpu_ns;
static clockid_t waiter_clock;

static long long clock_ns(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return (long long) t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void *worker(void *arg)
{
    /* let the waiter block first */
    struct timespec t = { 0, 20000000 };
    nanosleep(&t, NULL);
    long long wall0 = clock_ns(CLOCK_MONOTONIC), cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    long long waiter0 = clock_ns(waiter_clock);
    while (clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0 < WORK_NS) {
        /* computing, outside MPI */
    }
    waiter_cpu_ns = (double) (clock_ns(waiter_clock) - waiter0);
    worker_wall_ns = (double) (clock_ns(CLOCK_MONOTONIC) - wall0);
    int token = 2;
    MPI_Send(&token, 1, MPI_INT, 1, 2, MPI_COMM_WORLD);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided, rank, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (provided != MPI_THREAD_MULTIPLE || size != 2 || argc != 2 ||
        (strcmp(argv[1], "yields") && strcmp(argv[1], "noyields"))) {
        if (rank == 0)
            fprintf(stderr, "usage: 2 ranks, MPI_THREAD_MULTIPLE: mt_wait_yield yields|noyields\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    bool yields = !strcmp(argv[1], "yields");
    int token = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        /* this thread and the worker it creates share one CPU */
        int cpu = sched_getcpu();
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        MT_CHECK(cpu >= 0 && sched_setaffinity(0, sizeof(set), &set) == 0,
                 "cannot pin rank 0 to CPU %d", cpu);
        long long before = mt_pvar_read("cx_wait_yields");
        MT_CHECK(pthread_getcpuclockid(pthread_self(), &waiter_clock) == 0,
                 "no CPU clock for the waiting thread");
        pthread_t th;
        pthread_create(&th, NULL, worker, NULL);
        MPI_Recv(&token, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        pthread_join(th, NULL);
        long long n = mt_pvar_read("cx_wait_yields") - before;
        double ratio = worker_wall_ns / (double) WORK_NS;
        double waiter_share = waiter_cpu_ns / (double) WORK_NS;
        MT_CHECK(token == 1, "received %d, not 1", token);
        if (yields) {
            MT_CHECK(n > 0, "the waiter yielded %lld times", n);
            MT_CHECK(waiter_share < 0.25, "a thread blocked in MPI_Recv took %.0f ms of CPU "
                     "while the thread beside it computed for 100 ms (%lld yields)",
                     waiter_share * 100, n);
        } else
            MT_CHECK(n == 0, "%lld yields counted with MPICH's waits", n);
        printf("worker: 100 ms of CPU time in %.0f ms beside a blocked MPI_Recv, "
               "which took %.1f ms of CPU meanwhile (%lld yields)\n", ratio * 100,
               waiter_share * 100, n);
    } else {
        MPI_Recv(&token, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        token = 1;
        MPI_Send(&token, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
    }
    return mt_finish();
}
