/*
 * cx_yield (cx_sync_common.h): a thread that polls in vain and yields
 * leaves its core to a thread beside it that has work, which MPICH-CX's
 * waits rely on (README, "Yielding for real").
 *
 *     test_yield sibling
 *
 * sibling  two threads pinned to one CPU: a waiter polls a flag and calls
 *          cx_yield until a sibling has computed for 100 ms of CPU time
 *          without yielding; the sibling's wall time must stay under 1.5x
 *          its CPU time (about 1.0x; a waiter that keeps its core through
 *          its time slices takes about half of it).
 */
#define _GNU_SOURCE     /* sched_getcpu, CPU_SET */
#include "test_common.h"
#include <sched.h>

#define WORK_NS 100000000LL

static atomic_int started, done;
static int cpu;
static double sibling_wall_ns;

static long long clock_ns(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return (long long) t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void pin(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    CHECK(sched_setaffinity(0, sizeof(set), &set) == 0, "cannot pin a thread to CPU %d", cpu);
}

static void *sibling(void *arg)
{
    (void) arg;
    pin();
    atomic_store(&started, 1);
    long long wall0 = clock_ns(CLOCK_MONOTONIC), cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    while (clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0 < WORK_NS) {
        /* computing */
    }
    sibling_wall_ns = (double) (clock_ns(CLOCK_MONOTONIC) - wall0);
    atomic_store(&done, 1);
    return NULL;
}

static void sibling_test(void)
{
    cpu = sched_getcpu();
    CHECK(cpu >= 0, "sched_getcpu failed");
    pin();
    pthread_t th;
    pthread_create(&th, NULL, sibling, NULL);
    while (!atomic_load(&started))
        cx_yield();
    long polls = 0;
    while (!atomic_load(&done)) {
        polls++;
        cx_yield();
    }
    pthread_join(th, NULL);
    double ratio = sibling_wall_ns / (double) WORK_NS;
    CHECK(ratio < 1.5, "100 ms of work beside a yielding waiter took %.0f ms on one CPU",
          ratio * 100);
    printf("sibling: 100 ms of work beside a waiter that yielded %ld times: %.0f ms: ok\n",
           polls, ratio * 100);
}

int main(int argc, char **argv)
{
    if (argc != 2 || strcmp(argv[1], "sibling")) {
        fprintf(stderr, "usage: %s sibling\n", argv[0]);
        return 2;
    }
    sibling_test();
    return 0;
}
