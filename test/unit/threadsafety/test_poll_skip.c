/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * cx_poll_skip.h: when progress skips the netmod poll while shared memory
 * delivers (MPIR_CVAR_CH4_CX_NM_POLL_SKIP).
 *
 *     test_poll_skip rules|delay|quiet|concurrent|pause
 *
 * rules       the decision, call by call: never skipped with max 0 or
 *             without a shared-memory poll, nor while shared memory is idle
 *             (quiet off) or the netmod busy; at most max skips in a row;
 *             the pvar count.
 * delay       a simulated progress loop: a netmod message that arrives while
 *             shared memory streams is seen within max+1 calls, at once
 *             while shared memory is idle; a stream skips max of max+1 polls.
 * quiet       both transports idle, a simulated clock: the netmod is polled
 *             on every call until its polls found nothing for quiet_ns
 *             (read every CX_POLL_SKIP_CLOCK_EVERY polls), then once every
 *             max+1 calls; a message then waits at most max+1 calls and the
 *             netmod is not quiet again before another quiet_ns; quiet_ns
 *             0 never turns quiet; the quiet pvar counts only those skips.
 * concurrent  two threads progress one VCI, shared memory under a mutex and
 *             the netmod without (MPICH's lockless netmod): every call either
 *             polls or skips, and the skips stay bounded (TSan: no races).
 * pause       after a call that skipped the netmod: no pause with pause 0 or
 *             when shared memory delivered, one counted pause of the given
 *             length after an empty poll (MPIR_CVAR_CH4_CX_NM_POLL_PAUSE).
 */
#include "test_common.h"
#include "cx_poll_skip.h"

/* One progress call as ch4_progress.h makes it; *shm_msgs and *nm_msgs are
 * the messages waiting in each transport (a poll takes one).  Returns
 * whether the netmod was polled. */
/* A simulated clock: every call of progress_q advances it by CALL_NS. */
#define CALL_NS 100
static long long fake_now = 1;
static long long fake_clock(void)
{
    return fake_now;
}

static bool progress_q(cx_poll_skip_t * p, int max, long long quiet, int *shm_msgs, int *nm_msgs)
{
    bool polled = false;
    fake_now += CALL_NS;
    if (cx_poll_skip_due(p, max, true)) {
        int mark = cx_poll_skip_mark(&p->nm_events);
        if (*nm_msgs > 0) {
            (*nm_msgs)--;
            cx_poll_skip_event(&p->nm_events);
        }
        cx_poll_skip_nm_done(p, mark, quiet, fake_clock);
        polled = true;
    }
    int mark = cx_poll_skip_mark(&p->shm_events);
    if (*shm_msgs > 0) {
        (*shm_msgs)--;
        cx_poll_skip_event(&p->shm_events);
    }
    cx_poll_skip_done(&p->shm_events, mark, &p->shm_busy);
    return polled;
}

/* The same with the netmod never quiet (MPIR_CVAR_CH4_CX_NM_POLL_QUIET=0). */
static bool progress(cx_poll_skip_t * p, int max, int *shm_msgs, int *nm_msgs)
{
    return progress_q(p, max, 0, shm_msgs, nm_msgs);
}

static void rules_test(void)
{
    cx_poll_skip_t p = { 0 };
    int shm = 1000, nm = 0;

    /* max 0: MPICH's behaviour, whatever shared memory does */
    for (int i = 0; i < 50; i++)
        CHECK(progress(&p, 0, &shm, &nm), "max 0 skipped call %d", i);
    CHECK(p.skipped_total == 0, "max 0 counted %u skips", p.skipped_total);

    /* no shared-memory poll in this call: never skip */
    CHECK(cx_poll_skip_due(&p, 4, false), "skipped without a shared-memory poll");
    p.nm_quiet = 1;
    CHECK(cx_poll_skip_due(&p, 4, false), "quiet netmod skipped without a shared-memory poll");
    p.nm_quiet = 0;

    /* streaming: max skips, then a poll, again and again */
    const int max = 4;
    memset(&p, 0, sizeof(p));
    CHECK(progress(&p, max, &shm, &nm), "first call (shared memory not yet busy) skipped");
    for (int round = 0; round < 5; round++) {
        for (int i = 0; i < max; i++)
            CHECK(!progress(&p, max, &shm, &nm), "round %d: call %d polled", round, i);
        CHECK(progress(&p, max, &shm, &nm), "round %d: more than %d skips in a row", round, max);
    }
    CHECK(p.skipped_total == 5u * max, "pvar count %u, expected %d", p.skipped_total, 5 * max);

    /* a busy netmod is polled on every call, streaming or not */
    nm = 10;
    int polls = 0;
    for (int i = 0; i < 10 + max; i++)
        polls += progress(&p, max, &shm, &nm);
    CHECK(nm == 0, "%d netmod messages left: a busy netmod was skipped", nm);
    CHECK(polls >= 10, "busy netmod polled %d times in %d calls", polls, 10 + max);

    /* shared memory idle: the netmod is polled on every call */
    shm = 0;
    progress(&p, max, &shm, &nm);       /* this call's shm poll finds nothing */
    for (int i = 0; i < 20; i++)
        CHECK(progress(&p, max, &shm, &nm), "idle shared memory, call %d skipped", i);
    CHECK(p.quiet_skipped_total == 0, "%u quiet skips counted with quiet off",
          p.quiet_skipped_total);
    printf
        ("rules: max 0, no shm poll, streaming (max skips in a row), busy netmod, idle shm: ok\n");
}

static void delay_test(void)
{
    for (int max = 1; max <= 64; max *= 4) {
        int worst = 0;
        /* the message arrives at every point of the skip cycle */
        for (int warm = 0; warm < 2 * (max + 1); warm++) {
            cx_poll_skip_t p = { 0 };
            int shm = 1 << 20, nm = 0;
            for (int i = 0; i < warm; i++)
                progress(&p, max, &shm, &nm);
            nm = 1;     /* a network message arrives */
            int calls = 0;
            while (nm > 0) {
                progress(&p, max, &shm, &nm);
                calls++;
                CHECK(calls <= max + 1, "max %d: netmod message waited %d calls", max, calls);
            }
            if (calls > worst)
                worst = calls;
        }
        CHECK(worst == max + 1, "max %d: worst wait %d calls, expected %d", max, worst, max + 1);

        /* idle shared memory: seen on the very call it arrives */
        cx_poll_skip_t p = { 0 };
        int shm = 0, nm = 0;
        progress(&p, max, &shm, &nm);
        nm = 1;
        progress(&p, max, &shm, &nm);
        CHECK(nm == 0, "max %d: idle shared memory delayed the netmod", max);

        /* a long stream: max of every max+1 netmod polls skipped */
        memset(&p, 0, sizeof(p));
        shm = 100000;
        int polled = 0, calls = 0;
        while (shm > 0) {
            polled += progress(&p, max, &shm, &nm);
            calls++;
        }
        double expect = (double) calls / (max + 1);
        CHECK(polled >= expect - 1 && polled <= expect + 2,
              "max %d: %d netmod polls in %d streaming calls, expected about %.0f", max, polled,
              calls, expect);
    }
    printf
        ("delay: netmod traffic waits at most max+1 calls while shm streams, none when idle: ok\n");
}

static void quiet_test(void)
{
    const int every = CX_POLL_SKIP_CLOCK_EVERY;
    for (int max = 1; max <= 16; max *= 4) {
        for (long long quiet = CALL_NS; quiet <= 1000 * CALL_NS; quiet *= 10) {
            cx_poll_skip_t p = { 0 };
            int shm = 0, nm = 0, calls = 0;
            /* not yet quiet: every call polls, until the clock read after
             * quiet_ns of empty polls (the first read starts the run) */
            while (!p.nm_quiet) {
                CHECK(progress_q(&p, max, quiet, &shm, &nm), "max %d quiet %lld: call %d skipped "
                      "before the netmod was quiet", max, quiet, calls);
                CHECK(++calls <= every + (quiet / CALL_NS + every), "max %d quiet %lld: not quiet "
                      "after %d empty polls", max, quiet, calls);
            }
            CHECK((long long) (calls - every) * CALL_NS >= quiet, "max %d quiet %lld: quiet after "
                  "%d calls", max, quiet, calls);
            /* quiet: one poll in max+1 calls, never more than max skipped in a row */
            int polled = 0, run = 0, longest = 0;
            const int qcalls = 40 * (max + 1);
            for (int i = 0; i < qcalls; i++) {
                if (progress_q(&p, max, quiet, &shm, &nm)) {
                    polled++;
                    run = 0;
                } else if (++run > longest)
                    longest = run;
            }
            CHECK(longest == max, "max %d quiet %lld: %d skips in a row", max, quiet, longest);
            CHECK(polled == qcalls / (max + 1), "max %d quiet %lld: %d polls in %d quiet calls",
                  max, quiet, polled, qcalls);
            CHECK(p.quiet_skipped_total == (unsigned) (qcalls - polled) &&
                  p.skipped_total == p.quiet_skipped_total,
                  "max %d quiet %lld: pvars %u quiet of %u skips, %d calls skipped", max, quiet,
                  p.quiet_skipped_total, p.skipped_total, qcalls - polled);
            /* a message arriving at any point of the cycle waits at most max+1 calls;
             * then the netmod is polled on every call for quiet_ns again */
            for (int warm = 0; warm < max + 1; warm++) {
                progress_q(&p, max, quiet, &shm, &nm);
                nm = 1;
                int waited = 0;
                while (nm > 0) {
                    progress_q(&p, max, quiet, &shm, &nm);
                    CHECK(++waited <= max + 1, "max %d quiet %lld: message waited %d calls", max,
                          quiet, waited);
                }
                CHECK(!p.nm_quiet && p.nm_busy, "max %d quiet %lld: a found message left quiet "
                      "%d busy %d", max, quiet, p.nm_quiet, p.nm_busy);
                long long found = fake_now;
                while (fake_now - found < quiet)
                    CHECK(progress_q(&p, max, quiet, &shm, &nm), "max %d quiet %lld: skipped %lld "
                          "ns after a message", max, quiet, fake_now - found);
                while (!p.nm_quiet)
                    progress_q(&p, max, quiet, &shm, &nm);
            }
        }
    }
    /* quiet 0: an idle netmod with idle shared memory is polled on every call */
    cx_poll_skip_t p = { 0 };
    int shm = 0, nm = 0;
    for (int i = 0; i < 100 * every; i++)
        CHECK(progress_q(&p, 4, 0, &shm, &nm), "quiet 0: call %d skipped", i);
    printf("quiet: polled on every call until quiet, then one in max+1, a message waits at "
           "most max+1 calls: ok\n");
}

#define CONC_CALLS (200000 / T_SCALE)
static cx_poll_skip_t conc;

static long long real_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long) ts.tv_sec * 1000000000LL + ts.tv_nsec + 1;
}

static pthread_mutex_t vci_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int shm_left = 1 << 30;

static void *conc_thread(void *arg)
{
    long *polls = arg;
    for (int i = 0; i < CONC_CALLS; i++) {
        if (cx_poll_skip_due(&conc, 8, true)) {
            /* the netmod, without the VCI lock; it finds work now and then */
            int mark = cx_poll_skip_mark(&conc.nm_events);
            if (i % 97 == 0)
                cx_poll_skip_event(&conc.nm_events);
            cx_poll_skip_nm_done(&conc, mark, 1000, real_clock);
            (*polls)++;
        }
        pthread_mutex_lock(&vci_lock);
        int mark = cx_poll_skip_mark(&conc.shm_events);
        if (i % 50 != 0 && atomic_fetch_sub(&shm_left, 1) > 0)
            cx_poll_skip_event(&conc.shm_events);
        cx_poll_skip_done(&conc.shm_events, mark, &conc.shm_busy);
        pthread_mutex_unlock(&vci_lock);
    }
    return NULL;
}

static void concurrent_test(void)
{
    pthread_t t[2];
    long polls[2] = { 0, 0 };
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, conc_thread, &polls[i]);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    long total = 2L * CONC_CALLS, polled = polls[0] + polls[1];
    unsigned long skipped = atomic_load(&conc.skipped_total);
    /* the relaxed read-modify-writes may lose a few increments of the pvar
     * under races, never invent any */
    CHECK((long) skipped <= total - polled, "%lu skips counted, %ld calls did not poll",
          skipped, total - polled);
    /* racing threads can each skip up to max in a row, never much more */
    CHECK(polled >= total / (2 * (8 + 1)), "netmod polled %ld times in %ld calls", polled, total);
    CHECK(polled < total, "nothing skipped in %ld streaming calls", total);
    printf("concurrent: 2 threads, %ld calls, %ld netmod polls, %lu skips counted: ok\n", total,
           polled, skipped);
}

static void pause_test(void)
{
    cx_poll_skip_t p;
    memset(&p, 0, sizeof(p));
    int shm = 0, nm = 0;
    /* quiet netmod, idle shared memory: the skip is a quiet one */
    long long quiet = 1;
    for (int i = 0; i < 10 * CX_POLL_SKIP_CLOCK_EVERY && !atomic_load(&p.nm_quiet); i++)
        progress_q(&p, 8, quiet, &shm, &nm);
    CHECK(atomic_load(&p.nm_quiet), "the netmod never turned quiet");
    CHECK(!progress_q(&p, 8, quiet, &shm, &nm), "a quiet netmod was polled");
    CHECK(!atomic_load(&p.shm_busy), "an empty shared-memory poll counted as busy");

    cx_poll_skip_idle_pause(&p, 0);
    CHECK(atomic_load(&p.idle_pauses_total) == 0, "pause 0 paused");
    cx_poll_skip_idle_pause(&p, 3);
    CHECK(atomic_load(&p.idle_pauses_total) == 1, "%u pauses counted after one empty poll",
          atomic_load(&p.idle_pauses_total));

    /* a poll that delivered: polled again at once */
    shm = 1;
    CHECK(!progress_q(&p, 8, quiet, &shm, &nm), "a quiet netmod was polled");
    CHECK(atomic_load(&p.shm_busy), "a delivering poll counted as empty");
    cx_poll_skip_idle_pause(&p, 3);
    CHECK(atomic_load(&p.idle_pauses_total) == 1, "paused after a poll that delivered");

    /* the length: 100 pauses of 10000 relax instructions (at least a few
     * cycles each on any CPU) take milliseconds, of 0 nothing */
    shm = 0;
    progress_q(&p, 8, quiet, &shm, &nm);
    double t = t_now();
    for (int i = 0; i < 100; i++)
        cx_poll_skip_idle_pause(&p, 10000);
    double long_us = (t_now() - t) * 1e6;
    CHECK(atomic_load(&p.idle_pauses_total) == 101, "%u pauses counted, not 101",
          atomic_load(&p.idle_pauses_total));
    CHECK(long_us >= 1000, "100 pauses of 10000 took %.0f us", long_us);
    printf("pause: 100 pauses of 10000 relax instructions in %.0f us: ok\n", long_us);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s rules|delay|quiet|concurrent|pause\n", argv[0]);
        return 2;
    }
    if (!strcmp(argv[1], "rules"))
        rules_test();
    else if (!strcmp(argv[1], "delay"))
        delay_test();
    else if (!strcmp(argv[1], "quiet"))
        quiet_test();
    else if (!strcmp(argv[1], "concurrent"))
        concurrent_test();
    else if (!strcmp(argv[1], "pause"))
        pause_test();
    else {
        fprintf(stderr, "unknown test %s\n", argv[1]);
        return 2;
    }
    return 0;
}
