/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * cx_yield and cx_wait_yield_due (cx_sync_common.h): a thread that polls in
 * vain and yields leaves its core to a thread beside it that has work,
 * which MPICH-CX's auto waits rely on (doc/user/thread-safety.md,
 * "Yielding for real").
 *
 *     test_yield rules|sibling
 *
 * rules    cx_wait_yield_due with a simulated clock: never with a negative
 *          limit, after every poll in vain with 0; with 100 us, not before
 *          the polls in vain span 100 us, then after each further one, and
 *          counting starts over after progress; the clock is not read after
 *          progress nor with 0 or a negative limit.
 * sibling  two threads pinned to one CPU: a waiter polls a flag, yielding
 *          as cx_wait_yield_due says with 100 us (from 100 us of polls in
 *          vain on), until a sibling has computed for 100 ms of CPU time
 *          without yielding; the sibling's wall time must stay under 1.5x
 *          its CPU time (about 1.0x; a waiter that keeps its core through
 *          its time slices takes about half of it).
 * oversub  cx_oversub.h: the modes' names, and auto yielding exactly when
 *          the node's ranks outnumber their CPUs; this thread's affinity
 *          count matches sched_getaffinity.
 */
#define _GNU_SOURCE     /* t_pin_first_cpu */
#include "test_common.h"
#include "cx_oversub.h"
#include <sched.h>

#define WORK_NS 100000000LL

static atomic_int started, done;
static double sibling_wall_ns;

static long long clock_ns(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return (long long) t.tv_sec * 1000000000LL + t.tv_nsec;
}

static long long monotonic_ns(void)
{
    return clock_ns(CLOCK_MONOTONIC);
}

static void *sibling(void *arg)
{
    (void) arg;
    atomic_store(&started, 1);
    long long wall0 = clock_ns(CLOCK_MONOTONIC), cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    while (clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0 < WORK_NS) {
        /* computing */
    }
    sibling_wall_ns = (double) (clock_ns(CLOCK_MONOTONIC) - wall0);
    atomic_store(&done, 1);
    return NULL;
}

static long long fake_now;
static int clock_reads;
static long long fake_clock(void)
{
    clock_reads++;
    return fake_now;
}

static void rules_test(void)
{
    cx_wait_yield_t y = CX_WAIT_YIELD_INITIALIZER;
    fake_now = 1000;
    for (int i = 0; i < 10; i++, fake_now += 1000000) {
        CHECK(!cx_wait_yield_due(&y, false, -1, fake_clock), "a yield with the limit off");
        CHECK(cx_wait_yield_due(&y, false, 0, fake_clock), "no yield with limit 0");
    }
    CHECK(clock_reads == 0, "the clock was read %d times with limits -1 and 0", clock_reads);

    /* polls in vain every 10 us with 100 us: the first yield on the poll
     * 100 us after the first, then on every poll in vain */
    int polls = 0;
    while (!cx_wait_yield_due(&y, false, 100000, fake_clock)) {
        fake_now += 10000;
        polls++;
        CHECK(polls < 100, "no yield after %d polls in vain over %d us", polls, polls * 10);
    }
    CHECK(polls == 10, "the first yield after %d polls of 10 us, not 10", polls);
    for (int i = 0; i < 5; i++) {
        fake_now += 1000;
        CHECK(cx_wait_yield_due(&y, false, 100000, fake_clock), "no yield on the %d-th poll in "
              "vain after the first yield", i + 1);
    }

    /* progress starts the count over, without reading the clock */
    int reads = clock_reads;
    CHECK(!cx_wait_yield_due(&y, true, 100000, fake_clock), "a yield after progress");
    CHECK(clock_reads == reads, "the clock was read after a poll that progressed");
    CHECK(!cx_wait_yield_due(&y, false, 100000, fake_clock), "a yield at the first poll in vain "
          "after progress");
    fake_now += 99999;
    CHECK(!cx_wait_yield_due(&y, false, 100000, fake_clock), "a yield 99.999 us after progress");
    fake_now += 1;
    CHECK(cx_wait_yield_due(&y, false, 100000, fake_clock), "no yield 100 us after progress");
    printf("rules: never at -1, always at 0, from 100 us of polls in vain on at 100 us, "
           "restarted by progress: ok\n");
}

static void sibling_test(void)
{
    cpu_set_t old;
    t_pin_first_cpu(&old);      /* the sibling inherits it */
    pthread_t th;
    pthread_create(&th, NULL, sibling, NULL);
    while (!atomic_load(&started))
        cx_yield();
    long polls = 0;
    cx_wait_yield_t y = CX_WAIT_YIELD_INITIALIZER;
    while (!atomic_load(&done)) {
        if (cx_wait_yield_due(&y, false, 100000, monotonic_ns)) {
            polls++;
            cx_yield();
        }
    }
    pthread_join(th, NULL);
    t_unpin(&old);
    double ratio = sibling_wall_ns / (double) WORK_NS;
    CHECK(ratio < 1.5, "100 ms of work beside a yielding waiter took %.0f ms on one CPU",
          ratio * 100);
    printf("sibling: 100 ms of work beside a waiter that yielded %ld times: %.0f ms: ok\n",
           polls, ratio * 100);
}

static void oversub_test(void)
{
    CHECK(cx_oversub_parse("auto") == CX_OVERSUB_AUTO && cx_oversub_parse("ALWAYS") ==
          CX_OVERSUB_ALWAYS && cx_oversub_parse("never") == CX_OVERSUB_NEVER, "mode names");
    CHECK(cx_oversub_parse("yes") < 0 && cx_oversub_parse("") < 0, "bad mode accepted");
    /* auto: ranks > CPUs */
    CHECK(!cx_oversub_yields(CX_OVERSUB_AUTO, 2, 2), "2 ranks on 2 CPUs yield");
    CHECK(cx_oversub_yields(CX_OVERSUB_AUTO, 3, 2), "3 ranks on 2 CPUs do not yield");
    CHECK(cx_oversub_yields(CX_OVERSUB_AUTO, 4, 2), "4 ranks on 2 CPUs do not yield");
    CHECK(!cx_oversub_yields(CX_OVERSUB_AUTO, 1, 1), "1 rank on 1 CPU yields");
    CHECK(cx_oversub_yields(CX_OVERSUB_AUTO, 2, 0), "a CPU count of 0 counts as 1");
    CHECK(cx_oversub_yields(CX_OVERSUB_ALWAYS, 1, 64), "always does not yield");
    CHECK(!cx_oversub_yields(CX_OVERSUB_NEVER, 64, 1), "never yields");
    cpu_set_t set;
    CHECK(sched_getaffinity(0, sizeof(set), &set) == 0, "sched_getaffinity");
    int n = CPU_COUNT(&set);
    CHECK(cx_affinity_cpus() == n, "affinity CPUs %d, sched_getaffinity %d", cx_affinity_cpus(), n);
    cpu_set_t one;
    CPU_ZERO(&one);
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set)) {
            CPU_SET(c, &one);
            break;
        }
    CHECK(sched_setaffinity(0, sizeof(one), &one) == 0, "pin");
    CHECK(cx_affinity_cpus() == 1, "pinned thread sees %d CPUs", cx_affinity_cpus());
    sched_setaffinity(0, sizeof(set), &set);
    printf("oversub: modes, auto yields when ranks outnumber CPUs, affinity count: ok\n");
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "rules"))
        rules_test();
    else if (argc == 2 && !strcmp(argv[1], "sibling"))
        sibling_test();
    else if (argc == 2 && !strcmp(argv[1], "oversub"))
        oversub_test();
    else {
        fprintf(stderr, "usage: %s rules|sibling|oversub\n", argv[0]);
        return 2;
    }
    return 0;
}
