/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * One-sided operations queued by LockQ are issued before the window's
 * synchronization call returns: rank 0's threads put (or accumulate) into
 * rank 1's window, one element per call, then rank 0 synchronizes and rank 1
 * checks every element. Run with MPIR_CVAR_CH4_CX_FORCE_TRYLOCK_FAIL=100 so
 * that every operation is queued, at any MPIR_CVAR_CH4_CX_MAX_COMBINE.
 *
 *     rma_sync_drain put|acc unlock|flush|flush_all|fence|pscw THREADS COUNT
 */
#include "mpitest.h"
#include <pthread.h>
#include <stdbool.h>

static MPI_Win win;
static int nthreads, count, use_acc;
static int *origin;             /* origin buffers stay untouched until the synchronization */

/* Element i of thread t's share: t * count + i; a put writes value(t, i),
 * and each accumulate adds it to element i, shared by every thread. */
static int value(int t, int i)
{
    return t * count + i + 1;
}

/* What element i of the window holds once every operation arrived. */
static int expected(int i)
{
    if (use_acc)        /* the sum over threads of value(t, i) */
        return nthreads * (nthreads - 1) / 2 * count + nthreads * (i + 1);
    return value(i / count, i % count);
}

static void *issuer(void *arg)
{
    int t = (int) (intptr_t) arg;
    for (int i = 0; i < count; i++) {
        int *v = &origin[t * count + i];
        *v = value(t, i);
        int err = use_acc ? MPI_Accumulate(v, 1, MPI_INT, 1, i, 1, MPI_INT, MPI_SUM, win)
            : MPI_Put(v, 1, MPI_INT, 1, t * count + i, 1, MPI_INT, win);
        MT_CHECK(err == MPI_SUCCESS, "thread %d op %d: error %d", t, i, err);
    }
    return NULL;
}

static void issue_all(void)
{
    pthread_t th[64];
    for (int t = 0; t < nthreads; t++)
        pthread_create(&th[t], NULL, issuer, (void *) (intptr_t) t);
    for (int t = 0; t < nthreads; t++)
        pthread_join(th[t], NULL);
}

int main(int argc, char **argv)
{
    int provided, rank, size, *base;
    MPI_Group world, peer;

    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 5 || size != 2 || provided != MPI_THREAD_MULTIPLE) {
        if (rank == 0)
            fprintf(stderr, "usage: mpiexec -n 2 %s put|acc unlock|flush|flush_all|fence|pscw "
                    "THREADS COUNT (MPI_THREAD_MULTIPLE)\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    use_acc = !strcmp(argv[1], "acc");
    const char *sync = argv[2];
    nthreads = atoi(argv[3]);
    count = atoi(argv[4]);
    if (nthreads < 1 || nthreads > 64 || count < 1)
        MPI_Abort(MPI_COMM_WORLD, 2);
    int n = use_acc ? count : nthreads * count;
    origin = malloc(nthreads * count * sizeof(int));

    MPI_Win_allocate(n * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    for (int i = 0; i < n; i++)
        base[i] = 0;
    MPI_Win_unlock(rank, win);
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int other = 1 - rank;
    MPI_Group_incl(world, 1, &other, &peer);
    MPI_Barrier(MPI_COMM_WORLD);

    int err = MPI_SUCCESS;
    if (!strcmp(sync, "fence")) {
        MPI_Win_fence(0, win);
        if (rank == 0)
            issue_all();
        err = MPI_Win_fence(0, win);
    } else if (!strcmp(sync, "pscw")) {
        if (rank == 0) {
            MPI_Win_start(peer, 0, win);
            issue_all();
            err = MPI_Win_complete(win);
        } else {
            MPI_Win_post(peer, 0, win);
            err = MPI_Win_wait(win);
        }
    } else if (rank == 0) {
        bool all = !strcmp(sync, "flush_all");
        if (all)
            MPI_Win_lock_all(0, win);
        else
            MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
        issue_all();
        if (!strcmp(sync, "unlock")) {
            err = MPI_Win_unlock(1, win);
        } else {
            err = all ? MPI_Win_flush_all(win) : MPI_Win_flush(1, win);
            /* what the flush completed is visible at the target: read it back */
            int *back = malloc(n * sizeof(int));
            MPI_Get(back, n, MPI_INT, 1, 0, n, MPI_INT, win);
            MPI_Win_flush(1, win);
            int wrong = 0;
            for (int i = 0; i < n; i++)
                wrong += back[i] != expected(i);
            MT_CHECK(wrong == 0, "%s: %d of %d elements missing when read back", sync, wrong, n);
            free(back);
            if (all)
                MPI_Win_unlock_all(win);
            else
                MPI_Win_unlock(1, win);
        }
    }
    MT_CHECK(err == MPI_SUCCESS, "%s returned error %d", sync, err);
    MPI_Barrier(MPI_COMM_WORLD);

    if (rank == 1) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
        int wrong = 0, first = -1;
        for (int i = 0; i < n; i++) {
            if (base[i] != expected(i) && wrong++ == 0)
                first = i;
        }
        MPI_Win_unlock(1, win);
        MT_CHECK(wrong == 0, "%s %s: %d of %d elements wrong after the synchronization "
                 "(first: [%d])", argv[1], sync, wrong, n, first);
    }
    if (rank == 0)
        mt_check_lockq_queued();
    MPI_Group_free(&peer);
    MPI_Group_free(&world);
    err = MPI_Win_free(&win);
    MT_CHECK(err == MPI_SUCCESS, "MPI_Win_free: error %d", err);
    free(origin);
    return mt_finish();
}
