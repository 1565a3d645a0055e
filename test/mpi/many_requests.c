/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * More outstanding requests than MPICH 4.0.2's request pool holds (256 blocks
 * of 1024: 262144).  MPICH-CX's pool grows its blocks to 4096 requests
 * (patch cx-request-capacity), so it holds 1043456 at once.
 *
 *   many_requests hold [N]   (2 ranks) rank 1 posts N receives with distinct
 *       tags (default 300000), rank 0 sends their messages in the reverse
 *       order; then again with every message sent before its receive is
 *       posted.  Every payload is checked, the cx_match_posted (or
 *       cx_match_unexpected) pvar must count all N queued at once, and
 *       cx_requests_allocated must show the pools grown past MPICH's limit.
 *   many_requests exhaust    (1 rank) posts receives that nothing matches
 *       until the pool runs out: the library must stop with a message naming
 *       the pool's capacity.  Prints "past MPICH's limit" once 300000 are
 *       outstanding, so the caller can tell the old limit was passed.
 */
#include "mpitest.h"

/* MPICH 4.0.2 holds 256 x 1024 requests in a pool, pool 0 eight more. */
#define MPICH_LIMIT (256 * 1024 + 8)
#define PAST_LIMIT 300000
_Static_assert(PAST_LIMIT > MPICH_LIMIT, "the test must pass MPICH's limit");

static unsigned char payload(long i)
{
    return (unsigned char) (i * 13 + 5);
}

/* One exchange of n messages, tag i carrying message i; rank 0 sends in
 * reverse tag order. */
static void exchange(int rank, long n, int unexpected_first, unsigned char *buf, MPI_Request * reqs)
{
    const int sync_tag = (int) n;
    if (rank == 0) {
        if (!unexpected_first)
            MPI_Barrier(MPI_COMM_WORLD);        /* all receives are posted */
        for (long i = n - 1; i >= 0; i--) {
            unsigned char b = payload(i);
            MPI_Send(&b, 1, MPI_BYTE, 1, (int) i, MPI_COMM_WORLD);
        }
        if (unexpected_first) {
            MPI_Send(NULL, 0, MPI_BYTE, 1, sync_tag, MPI_COMM_WORLD);
            MPI_Barrier(MPI_COMM_WORLD);
        }
        return;
    }
    memset(buf, 0, (size_t) n);
    if (unexpected_first) {     /* messages from one sender arrive in order */
        MPI_Recv(NULL, 0, MPI_BYTE, 0, sync_tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        /* rank 0's barrier message may be queued too (collectives use the
         * same queues over an active-message-only netmod) */
        long long queued = mt_pvar_level("cx_match_unexpected");
        MT_CHECK(queued >= n && queued <= n + 1,
                 "cx_match_unexpected is %lld with %ld messages waiting", queued, n);
    }
    for (long i = 0; i < n; i++)
        MPI_Irecv(&buf[i], 1, MPI_BYTE, 0, (int) i, MPI_COMM_WORLD, &reqs[i]);
    /* the pools grew past MPICH's limit to hold them */
    long long allocated = mt_pvar_level("cx_requests_allocated");
    MT_CHECK(allocated >= n && allocated > MPICH_LIMIT,
             "cx_requests_allocated is %lld with %ld receives outstanding", allocated, n);
    if (!unexpected_first) {
        long long queued = mt_pvar_level("cx_match_posted");
        MT_CHECK(queued == n, "cx_match_posted is %lld after posting %ld receives", queued, n);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Waitall((int) n, reqs, MPI_STATUSES_IGNORE);
    if (unexpected_first)
        MPI_Barrier(MPI_COMM_WORLD);
    long bad = 0;
    for (long i = 0; i < n; i++)
        bad += buf[i] != payload(i);
    MT_CHECK(bad == 0, "%s: %ld of %ld payloads wrong",
             unexpected_first ? "unexpected-first" : "posted-first", bad, n);
}

static void hold(int rank, long n)
{
    int flag, *ub;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
    if (!flag || *ub < n) {
        MT_CHECK(0, "MPI_TAG_UB %d is below the %ld tags needed", flag ? *ub : -1, n);
        return;
    }
    unsigned char *buf = malloc((size_t) n);
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * (size_t) n);
    if (buf && reqs) {
        exchange(rank, n, 0, buf, reqs);
        exchange(rank, n, 1, buf, reqs);
    } else {
        MT_CHECK(0, "out of memory for %ld receives", n);
    }
    free(buf);
    free(reqs);
}

static void exhaust(void)
{
    static unsigned char b;
    MPI_Request r;
    for (long i = 0;; i++) {
        MPI_Irecv(&b, 1, MPI_BYTE, 0, 1, MPI_COMM_SELF, &r);
        if (i + 1 == PAST_LIMIT) {
            printf("past MPICH's limit: %ld receives outstanding\n", i + 1);
            fflush(stdout);
        }
    }
}

int main(int argc, char **argv)
{
    int rank, size, provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = argc > 1 ? argv[1] : "hold";
    if (strcmp(mode, "exhaust") == 0) {
        exhaust();      /* does not return: the library aborts */
    } else if (strcmp(mode, "hold") == 0 && size == 2) {
        long n = argc > 2 ? atol(argv[2]) : PAST_LIMIT;
        hold(rank, n);
    } else {
        MT_CHECK(0, "usage: many_requests hold [N] (2 ranks) | exhaust (1 rank)");
    }
    return mt_finish();
}
