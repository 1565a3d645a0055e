/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * Liveness and object lifetimes for queued operations (LockQ queues every
 * issue when run with MPIR_CVAR_CH4_CX_FORCE_TRYLOCK_FAIL=100; the other
 * models must pass too):
 *   1. an operation whose issuer then only calls MPI_Test completes;
 *   2. a thread that issued and left MPI strands nothing: another thread's
 *      progress runs its queued send, and its owner's MPI_Wait completes;
 *   3. the datatype and the communicator may be freed right after a queued
 *      MPI_Isend, and the message still arrives intact;
 *   4. a queued receive can be cancelled, and a queued send freed with
 *      MPI_Request_free;
 *   5. queued one-sided operations (Put, Get, Fetch_and_op, Compare_and_swap)
 *      complete at MPI_Win_flush, and a queued Put with a derived datatype
 *      freed at once still lands intact;
 *   6. receives on MPI_COMM_SELF posted before their sends complete; under
 *      lockq with queued issues and offload, issued operations complete both
 *      ways (cx_mt_lockq.c): a receive from the other rank through MPICH's
 *      request free hook, a cancelled one through the issued list's scan
 *      (the hook is off while MPICH cancels it).
 */
#include "mpitest.h"
#include <pthread.h>
#include <string.h>

#define N 64

static int rank;

static void test_spin(void)
{
    int v = 42, got = 0, flag = 0;
    long spins = 0;
    MPI_Request r;
    if (rank == 0) {
        MPI_Isend(&v, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, &r);
        while (!flag) {
            MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
            spins++;
        }
    } else {
        MPI_Irecv(&got, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, &r);
        while (!flag)
            MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
        MT_CHECK(got == 42, "spin: received %d", got);
    }
}

static MPI_Request left_req;
static int left_val = 7;
static void *issue_and_leave(void *arg)
{
    MPI_Isend(&left_val, 1, MPI_INT, 1, 2, MPI_COMM_WORLD, &left_req);
    return NULL;        /* leaves MPI with the send perhaps still queued */
}

static void test_issuer_left(void)
{
    if (rank == 0) {
        pthread_t t;
        pthread_create(&t, NULL, issue_and_leave, NULL);
        pthread_join(t, NULL);
        int flag = 0;
        /* another thread's progress must run it */
        MPI_Iprobe(1, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        MPI_Wait(&left_req, MPI_STATUS_IGNORE);
    } else {
        int got = 0;
        MPI_Recv(&got, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MT_CHECK(got == 7, "issuer-left: received %d", got);
    }
}

static void test_free_objects(void)
{
    int buf[2 * N];
    if (rank == 0) {
        MPI_Request r[N];
        MPI_Comm dup;
        MPI_Datatype vec;
        for (int i = 0; i < 2 * N; i++)
            buf[i] = i;
        MPI_Comm_dup(MPI_COMM_WORLD, &dup);
        MPI_Type_vector(2, 1, 2, MPI_INT, &vec);        /* elements 0 and 2 of each 4 */
        MPI_Type_commit(&vec);
        for (int i = 0; i < N / 2; i++)
            MPI_Isend(&buf[4 * i], 1, vec, 1, i, dup, &r[i]);
        MPI_Type_free(&vec);
        MPI_Comm_free(&dup);
        MPI_Waitall(N / 2, r, MPI_STATUSES_IGNORE);
    } else {
        MPI_Comm dup;
        MPI_Comm_dup(MPI_COMM_WORLD, &dup);
        for (int i = 0; i < N / 2; i++) {
            int two[2] = { -1, -1 };
            MPI_Recv(two, 2, MPI_INT, 0, i, dup, MPI_STATUS_IGNORE);
            if (two[0] != 4 * i || two[1] != 4 * i + 2)
                MT_CHECK(0, "free-objects: message %d carries %d, %d", i, two[0], two[1]);
        }
        MPI_Comm_free(&dup);
    }
}

static void test_cancel_and_free(void)
{
    if (rank == 1) {
        int got = -1, cancelled = 0;
        MPI_Request r;
        MPI_Status st;
        MPI_Irecv(&got, 1, MPI_INT, 0, 1234, MPI_COMM_WORLD, &r);
        MPI_Cancel(&r);
        MPI_Wait(&r, &st);
        MPI_Test_cancelled(&st, &cancelled);
        MT_CHECK(cancelled, "cancel: a receive with no sender was not cancelled");
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Recv(&got, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MT_CHECK(got == 5, "request-free: received %d", got);
    } else {
        int five = 5;
        MPI_Request r;
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Isend(&five, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, &r);
        MPI_Request_free(&r);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void test_self(void)
{
    int got[N], sent[N];
    MPI_Request r[2 * N];
    for (int i = 0; i < N; i++) {
        got[i] = -1;
        sent[i] = 1000 * rank + i;
        MPI_Irecv(&got[i], 1, MPI_INT, 0, i, MPI_COMM_SELF, &r[i]);
    }
    for (int i = N - 1; i >= 0; i--)
        MPI_Isend(&sent[i], 1, MPI_INT, 0, i, MPI_COMM_SELF, &r[N + i]);
    MPI_Waitall(2 * N, r, MPI_STATUSES_IGNORE);
    for (int i = 0; i < N; i++)
        if (got[i] != sent[i])
            MT_CHECK(0, "self: receive %d got %d", i, got[i]);
}

/* Under lockq with queued issues and offload, operations issued for
 * another thread complete both ways (test 6). */
static void check_issued_done(void)
{
    const char *force = getenv("MPIR_CVAR_CH4_CX_FORCE_TRYLOCK_FAIL");
    int queued = !strcmp(mt_model(), "offload") ||
        (!strcmp(mt_model(), "lockq") && force && atoi(force) > 0);
    if (!queued)
        return;
    /* summed over the ranks: rank 1 cancels */
    long long mine[2] =
        { mt_pvar_read("cx_issued_done_hook"), mt_pvar_read("cx_issued_done_scan") };
    long long all[2];
    MPI_Allreduce(mine, all, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    long long hook = all[0], scan = all[1];
    MT_CHECK(hook > 0 && scan > 0, "%s: issued operations completed by the free hook %lld, "
             "found by the scan %lld (both expected)", mt_model(), hook, scan);
}

static void test_rma(MPI_Win win, int *base, int round)
{
    if (rank == 0) {
        int vals[4] = { round, round + 1, round + 2, round + 3 }, got = -1, old = -1, cas = -1;
        int one = 1, expect = 1000 + round, swap = 2000 + round;
        MPI_Datatype pair;
        MPI_Type_vector(2, 1, 2, MPI_INT, &pair);       /* vals[0] and vals[2] */
        MPI_Type_commit(&pair);
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
        MPI_Put(vals, 1, pair, 1, 0, 2, MPI_INT, win);
        MPI_Type_free(&pair);
        MPI_Win_flush(1, win);
        MPI_Get(&got, 1, MPI_INT, 1, 1, 1, MPI_INT, win);
        MPI_Fetch_and_op(&one, &old, MPI_INT, 1, 2, MPI_SUM, win);
        MPI_Compare_and_swap(&swap, &expect, &cas, MPI_INT, 1, 3, win);
        MPI_Win_flush(1, win);
        MPI_Win_unlock(1, win);
        MT_CHECK(got == round + 2, "Get after Put returned %d, want %d", got, round + 2);
        MT_CHECK(old == 10 * round, "Fetch_and_op fetched %d, want %d", old, 10 * round);
        MT_CHECK(cas == 1000 + round, "Compare_and_swap fetched %d", cas);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
        MT_CHECK(base[0] == round && base[1] == round + 2, "Put left %d, %d", base[0], base[1]);
        MT_CHECK(base[2] == 10 * round + 1, "Fetch_and_op left %d", base[2]);
        MT_CHECK(base[3] == 2000 + round, "Compare_and_swap left %d", base[3]);
        base[2] = 10 * (round + 1);
        base[3] = 1000 + round + 1;
        MPI_Win_unlock(1, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    int provided, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MT_CHECK(size == 2 && provided == MPI_THREAD_MULTIPLE, "2 ranks, MPI_THREAD_MULTIPLE");
    if (size != 2 || provided != MPI_THREAD_MULTIPLE)
        return mt_finish();
    MPI_Win win;
    int *base;
    MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    base[0] = base[1] = -1;
    base[2] = 0;
    base[3] = 1000;
    MPI_Win_unlock(rank, win);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < 20; i++) {
        test_spin();
        test_issuer_left();
        test_free_objects();
        test_cancel_and_free();
        test_rma(win, base, i);
        test_self();
    }
    MPI_Win_free(&win);
    mt_check_lockq_queued();
    check_issued_done();
    return mt_finish();
}
