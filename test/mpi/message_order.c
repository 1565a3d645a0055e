/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * Non-overtaking order (MPI 4.0, 3.5): messages from one sender that match the
 * same receive arrive in the order sent, whether the receives are posted
 * first or the messages arrive first, with exact and wildcard receives; and
 * across threads: thread A sends 1, then signals thread B, which sends 2 on
 * the same communicator, destination and tag: the receiver sees 1 then 2.
 */
#include "mpitest.h"
#include <pthread.h>
#include <string.h>

#define N 2000

static int rank;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int a_sent;

static void *thread_b(void *arg)
{
    int two = 2;
    pthread_mutex_lock(&lock);
    while (!a_sent)
        pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);
    MPI_Send(&two, 1, MPI_INT, 1, 7, MPI_COMM_WORLD);
    return NULL;
}

static void receive_in_order(int src, int tag, int prepost, const char *what)
{
    static int vals[N];
    static MPI_Status st[N];
    MPI_Request reqs[N];
    memset(vals, 0xff, sizeof(vals));   /* no value left over from the last case */
    if (prepost) {
        for (int i = 0; i < N; i++)
            MPI_Irecv(&vals[i], 1, MPI_INT, src, tag, MPI_COMM_WORLD, &reqs[i]);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Waitall(N, reqs, st);
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
        /* Let the messages arrive unexpected before receiving them. */
        MPI_Recv(NULL, 0, MPI_BYTE, 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < N; i++)
            MPI_Recv(&vals[i], 1, MPI_INT, src, tag, MPI_COMM_WORLD, &st[i]);
    }
    for (int i = 0; i < N; i++)
        if (vals[i] != i || st[i].MPI_SOURCE != 0 || st[i].MPI_TAG != 5) {
            MT_CHECK(0, "%s: message %d carries %d (source %d, tag %d)", what, i, vals[i],
                     st[i].MPI_SOURCE, st[i].MPI_TAG);
            break;
        }
}

static void send_all(int prepost)
{
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < N; i++)
        MPI_Send(&i, 1, MPI_INT, 1, 5, MPI_COMM_WORLD);
    if (!prepost)
        MPI_Send(NULL, 0, MPI_BYTE, 1, 99, MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    int provided, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MT_CHECK(size == 2, "run with 2 ranks, not %d", size);
    MT_CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    if (size != 2 || provided != MPI_THREAD_MULTIPLE)
        return mt_finish();

    struct {
        int src, tag;
        const char *what;
    } cases[] = {
        {0, 5, "exact"}, {MPI_ANY_SOURCE, 5, "any-source"},
        {0, MPI_ANY_TAG, "any-tag"}, {MPI_ANY_SOURCE, MPI_ANY_TAG, "any-source any-tag"}
    };
    for (int c = 0; c < 4; c++)
        for (int prepost = 1; prepost >= 0; prepost--) {
            if (rank == 0)
                send_all(prepost);
            else
                receive_in_order(cases[c].src, cases[c].tag, prepost, cases[c].what);
        }

    /* Two threads, ordered by the program (a condition variable). */
    for (int r = 0; r < 200; r++) {
        if (rank == 0) {
            pthread_t b;
            int one = 1;
            a_sent = 0;
            pthread_create(&b, NULL, thread_b, NULL);
            MPI_Send(&one, 1, MPI_INT, 1, 7, MPI_COMM_WORLD);
            pthread_mutex_lock(&lock);
            a_sent = 1;
            pthread_cond_signal(&cond);
            pthread_mutex_unlock(&lock);
            pthread_join(b, NULL);
        } else {
            int x, y;
            MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            MPI_Recv(&y, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MT_CHECK(x == 1 && y == 2, "round %d: received %d then %d", r, x, y);
        }
    }
    return mt_finish();
}
