/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * Threads created and ended in a loop, each calling MPI (doc/user/pip.md,
 * "Tasks"): ranks pair up (r, r^1); in every iteration the odd rank starts
 * THREADS threads that each receive a 4 MiB message (a single copy under
 * -pip) and end, and the even rank sends them. Under -pip a task's threads
 * reuse the stacks of ended ones; glibc's stack cache freed their TLS into
 * the wrong allocator and crashed after a few dozen threads.
 *   pip_thread_loop [ITERS [THREADS]]   (defaults 40, 3)
 */
#include "mpitest.h"
#include <pthread.h>

#define BYTES (4 << 20)

typedef struct {
    int peer, tag;
    unsigned char *buf;
} recv_arg_t;

static unsigned char pattern(long i, int tag)
{
    return (unsigned char) (i * 31 + tag);
}

static void *receive(void *p)
{
    recv_arg_t *a = p;
    MPI_Request req;
    MPI_Irecv(a->buf, BYTES, MPI_BYTE, a->peer, a->tag, MPI_COMM_WORLD, &req);
    usleep(1000);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    for (long i = 0; i < BYTES; i += 4093)
        MT_CHECK(a->buf[i] == pattern(i, a->tag), "tag %d byte %ld", a->tag, i);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided, rank, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int iters = argc > 1 ? atoi(argv[1]) : 40, nt = argc > 2 ? atoi(argv[2]) : 3;
    MT_CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    MT_CHECK(nt >= 1 && nt <= 16, "THREADS %d: 1 to 16", nt);
    if (nt < 1 || nt > 16)
        nt = 1;
    int peer = rank ^ 1;
    unsigned char *buf = malloc((size_t) BYTES * nt);
    recv_arg_t args[16];
    pthread_t th[16];
    for (int it = 0; peer < size && it < iters; it++) {
        if (rank % 2 == 0) {
            for (int t = 0; t < nt; t++) {
                int tag = it * nt + t;
                for (long i = 0; i < BYTES; i++)
                    buf[i] = pattern(i, tag);
                MPI_Send(buf, BYTES, MPI_BYTE, peer, tag, MPI_COMM_WORLD);
            }
        } else {
            for (int t = 0; t < nt; t++) {
                args[t] = (recv_arg_t) {.peer = peer,.tag = it * nt + t,.buf = buf + (size_t) t * BYTES};
                MT_CHECK(pthread_create(&th[t], NULL, receive, &args[t]) == 0, "pthread_create");
            }
            for (int t = 0; t < nt; t++)
                pthread_join(th[t], NULL);
        }
    }
    free(buf);
    return mt_finish();
}
