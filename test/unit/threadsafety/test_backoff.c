/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * The per-thread trylock budget cx_test_backoff_t (delays double to the cap,
 * calls skipped between attempts, blocking after the failure bound).
 *
 *     test_backoff test_backoff
 */
#include "test_common.h"

/* number of calls until cx_test_backoff_ready says "try" */
static unsigned calls_until_ready(cx_test_backoff_t * b)
{
    unsigned n = 1;
    while (!cx_test_backoff_ready(b)) {
        n++;
        CHECK(n < 100000, "never ready");
    }
    return n;
}

static void test_backoff_test(void)
{
    cx_test_backoff_t b = { 0 };
    static const uint32_t expect_delay[] = { 1, 2, 4, 8, 16, 16, 16 };
    const uint32_t max_delay = 16, max_failures = 7;

    /* zero-initialised: try at once */
    CHECK(cx_test_backoff_ready(&b), "fresh state not ready");
    CHECK(!cx_test_backoff_must_block(&b, 1), "fresh state must block");
    for (unsigned i = 0; i < sizeof(expect_delay) / sizeof(expect_delay[0]); i++) {
        CHECK(!cx_test_backoff_must_block(&b, max_failures), "must block after %u failures", i);
        cx_test_backoff_failed(&b, max_delay);
        CHECK(b.delay == expect_delay[i] && b.failures == i + 1, "failure %u: delay %u failures %u",
              i + 1, b.delay, b.failures);
        /* the next `delay` calls are skipped, the one after tries */
        CHECK(calls_until_ready(&b) == expect_delay[i] + 1,
              "failure %u: wrong number of skipped calls", i + 1);
    }
    CHECK(cx_test_backoff_must_block(&b, max_failures), "no blocking after %u failures",
          max_failures);
    cx_test_backoff_succeeded(&b);
    CHECK(b.delay == 0 && b.countdown == 0 && b.failures == 0 && cx_test_backoff_ready(&b),
          "succeeded did not reset");
    /* max_delay 0 still waits one call; a huge cap does not overflow */
    cx_test_backoff_failed(&b, 0);
    cx_test_backoff_failed(&b, 0);
    CHECK(b.delay == 1, "max_delay 0: delay %u", b.delay);
    cx_test_backoff_succeeded(&b);
    for (int i = 0; i < 40; i++)
        cx_test_backoff_failed(&b, UINT32_MAX);
    CHECK(b.delay == UINT32_MAX && b.failures == 40, "cap UINT32_MAX: delay %u", b.delay);
    printf("test_backoff: delays 1,2,4,...,cap, skipped calls, failure bound, reset: ok\n");
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s test_backoff\n", argv[0]);
        return 2;
    }
    if (!strcmp(argv[1], "test_backoff"))
        test_backoff_test();
    else {
        fprintf(stderr, "unknown test %s\n", argv[1]);
        return 2;
    }
    return 0;
}
