/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * Order across threads under every thread-safety model (run with
 * MPIR_CVAR_CH4_CX_FORCE_TRYLOCK_FAIL=50 so LockQ queues about half of the
 * operations): thread A issues operation 1, then signals thread B, which
 * issues operation 2 with the same communicator, peer and tag.  MPI orders
 * them (MPI 4.0 §3.5 and §12.7 on accumulates), so:
 *   - sends: the receiver gets 1 before 2;
 *   - posted receives with MPI_ANY_SOURCE/MPI_ANY_TAG: receive 1 matches the
 *     first message;
 *   - MPI_Accumulate(MPI_REPLACE) to one location: 2 is the final value.
 * Under lockq, the cx_ops_enqueued pvar must show that operations were queued.
 * Argument no-accumulates: sends and receives only (ch4:ucx, where MPICH
 * 4.0.2's target does not see these accumulates: test/mpi/run.d/threadsafety.sh).
 */
#include "mpitest.h"
#include <pthread.h>
#include <string.h>

#define ROUNDS 500

enum { SENDS, RECVS, ACCS };

static int rank, phase;
static MPI_Win win;
static int *winbuf;
static MPI_Request reqs[2];
static int recvd[2];
static pthread_barrier_t barrier;
static _Atomic int a_done;

static void issue(int which)
{
    /* origin buffers live until the operations complete (Waitall, flush) */
    static int values[2] = { 1, 2 };
    switch (phase) {
        case SENDS:
            MPI_Isend(&values[which], 1, MPI_INT, 1, 3, MPI_COMM_WORLD, &reqs[which]);
            break;
        case RECVS:
            MPI_Irecv(&recvd[which], 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                      &reqs[which]);
            break;
        case ACCS:
            MPI_Accumulate(&values[which], 1, MPI_INT, 1, 0, 1, MPI_INT, MPI_REPLACE, win);
            break;
    }
}

/* Thread A (which=0) issues first, then lets thread B (which=1) issue. */
static void *thread_main(void *arg)
{
    int which = (int) (long) arg;
    for (int r = 0; r < ROUNDS; r++) {
        pthread_barrier_wait(&barrier); /* main thread prepared the round */
        if (which == 0) {
            issue(0);
            a_done = r + 1;
        } else {
            while (a_done != r + 1);
            issue(1);
        }
        pthread_barrier_wait(&barrier); /* both issued */
        pthread_barrier_wait(&barrier); /* main thread checked the round */
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided, size;
    pthread_t t[2];
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MT_CHECK(size == 2 && provided == MPI_THREAD_MULTIPLE, "2 ranks, MPI_THREAD_MULTIPLE");
    if (size != 2 || provided != MPI_THREAD_MULTIPLE)
        return mt_finish();
    MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &winbuf, &win);
    *winbuf = 0;

    int last = argc > 1 && !strcmp(argv[1], "no-accumulates") ? RECVS : ACCS;
    for (phase = SENDS; phase <= last; phase++) {
        /* the issuing side: rank 0 for sends and accumulates, rank 1 for receives */
        int issuer = (phase == RECVS) ? 1 : 0;
        if (phase == ACCS)
            MPI_Win_lock_all(0, win);
        if (rank == issuer) {
            pthread_barrier_init(&barrier, NULL, 3);
            a_done = 0;
            for (long i = 0; i < 2; i++)
                pthread_create(&t[i], NULL, thread_main, (void *) i);
        }
        for (int r = 0; r < ROUNDS; r++) {
            if (rank == issuer) {
                pthread_barrier_wait(&barrier);
                pthread_barrier_wait(&barrier);
                if (phase == SENDS) {
                    MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
                } else if (phase == RECVS) {
                    MPI_Barrier(MPI_COMM_WORLD);        /* both receives are posted */
                    MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
                    if (recvd[0] != 1 || recvd[1] != 2)
                        MT_CHECK(0, "round %d: posted receives got %d, %d (want 1, 2)", r,
                                 recvd[0], recvd[1]);
                } else {
                    MPI_Win_flush(1, win);
                }
                pthread_barrier_wait(&barrier);
            } else if (phase == SENDS) {
                int v[2];
                MPI_Recv(&v[0], 1, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Recv(&v[1], 1, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                if (v[0] != 1 || v[1] != 2)
                    MT_CHECK(0, "round %d: received %d, %d (want 1, 2)", r, v[0], v[1]);
            } else if (phase == RECVS) {
                int one = 1, two = 2;
                MPI_Barrier(MPI_COMM_WORLD);
                MPI_Send(&one, 1, MPI_INT, 1, 11, MPI_COMM_WORLD);
                MPI_Send(&two, 1, MPI_INT, 1, 12, MPI_COMM_WORLD);
            }
            if (phase == ACCS) {
                MPI_Barrier(MPI_COMM_WORLD);    /* the round's accumulates are flushed */
                if (rank == 1) {
                    MPI_Win_sync(win);
                    if (*winbuf != 2)
                        MT_CHECK(0, "round %d: accumulate left %d (want 2)", r, *winbuf);
                    *winbuf = 0;
                    MPI_Win_sync(win);
                }
                MPI_Barrier(MPI_COMM_WORLD);
            }
        }
        if (rank == issuer) {
            for (int i = 0; i < 2; i++)
                pthread_join(t[i], NULL);
            pthread_barrier_destroy(&barrier);
        }
        if (phase == ACCS)
            MPI_Win_unlock_all(win);
    }
    MPI_Win_free(&win);

    mt_check_lockq_queued();
    return mt_finish();
}
