/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * Daps: a rank that computes outside MPI with a receive posted, or as the
 * target of RMA, gets its operations completed by ranks idle in MPI.
 * Rank 1 posts its side, then "computes" (sleeps) without calling MPI;
 * rank 0 sends or accumulates and waits in MPI; other ranks wait in
 * MPI_Barrier. When rank 1 wakes, before any MPI call of its own, it looks
 * at its receive buffer or window: with Daps, the data is there.
 *   daps_overlap MODE ITERS [expect-overlap] [compute-ms=N] [multiple] [acc-mib=N]
 * MODE: contig (4 MiB, PiP single copy or rendezvous), vector (char,
 * blocklength 1, stride 64: a packed receive), acc (MPI_Accumulate of
 * doubles into a strided target type: active messages, then flush).
 * multiple: MPI_THREAD_MULTIPLE, and rank 1 waits in a second thread on a
 * message rank 0 sends after the transfer (a thread of its own inside MPI:
 * the rank progresses itself, nobody steals).
 * threads=N (contig, vector): MPI_THREAD_MULTIPLE, and N threads of rank 1
 * each post their own receive and compute; rank 0 sends N messages.
 * bytes=N (contig): N bytes instead of 4 MiB. A small receive waits for no
 * handshake, and Daps does not count it: nobody steals for it.
 * send-delay-ms=N: rank 0 sends N ms after the iteration starts, so that
 * rank 1's receive is posted first (else a small message that arrived
 * before it completes at once, which is no overlap).
 * Prints "overlapped N of M" (M: iterations times threads) and "No Errors"
 * when the data is right (and, with expect-overlap, all M overlapped).
 */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CONTIG_BYTES (4 << 20)
#define VECTOR_COUNT (256 << 10)
#define VECTOR_STRIDE 64

static int errs;
static long acc_doubles = 128 << 10;    /* acc-mib=N: N MiB of doubles */
static long contig_bytes = CONTIG_BYTES;        /* bytes=N */

static unsigned char pattern(long i, int iter)
{
    return (unsigned char) (i * 7 + iter * 13 + 1);
}

/* One receiving thread of rank 1: post, compute, look, wait. */
typedef struct {
    pthread_t th;
    int t, nthreads, it, compute_ms, vector, overlapped;
    long count, span;
    MPI_Datatype type;
    unsigned char *buf;
} receiver_t;

static void receive_while_computing(receiver_t * r)
{
    MPI_Request req;
    memset(r->buf, 0, r->span);
    MPI_Irecv(r->buf, r->count, r->type, 0, r->it * r->nthreads + r->t, MPI_COMM_WORLD, &req);
    usleep(r->compute_ms * 1000);       /* computing: no MPI call */
    /* before any MPI call of ours: did someone progress us? */
    long last = r->vector ? r->span - VECTOR_STRIDE : r->span - 1;
    r->overlapped += r->buf[0] == pattern(0, r->it) && r->buf[last] == pattern(last, r->it);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
}

static void *receiver_main(void *arg)
{
    receive_while_computing(arg);
    return NULL;
}

static void *late_receiver(void *arg)
{
    int v = 0;
    MPI_Recv(&v, 1, MPI_INT, 0, 1000000, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    *(int *) arg = v;
    return NULL;
}

int main(int argc, char **argv)
{
    int rank, size, provided, multiple = 0, nthreads = 1;
    for (int i = 1; i < argc; i++) {
        multiple |= !strcmp(argv[i], "multiple");
        if (!strncmp(argv[i], "threads=", 8))
            nthreads = atoi(argv[i] + 8);
    }
    int want = multiple || nthreads > 1 ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE;
    MPI_Init_thread(&argc, &argv, want, &provided);
    if (provided < want) {
        printf("MPI_THREAD_MULTIPLE not provided\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 3 || size < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: daps_overlap contig|vector|acc ITERS [expect-overlap] "
                    "[compute-ms=N] (2 ranks or more)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *mode = argv[1];
    int iters = atoi(argv[2]), expect = 0, compute_ms = 300, send_delay_ms = 0;
    for (int i = 3; i < argc; i++) {
        if (!strcmp(argv[i], "expect-overlap"))
            expect = 1;
        else if (!strncmp(argv[i], "compute-ms=", 11))
            compute_ms = atoi(argv[i] + 11);
        else if (!strncmp(argv[i], "acc-mib=", 8))
            acc_doubles = atol(argv[i] + 8) << 17;
        else if (!strncmp(argv[i], "bytes=", 6))
            contig_bytes = atol(argv[i] + 6);
        else if (!strncmp(argv[i], "send-delay-ms=", 14))
            send_delay_ms = atoi(argv[i] + 14);
        else if (strcmp(argv[i], "multiple") && strncmp(argv[i], "threads=", 8))
            MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int contig = !strcmp(mode, "contig"), vector = !strcmp(mode, "vector");
    int acc = !strcmp(mode, "acc");
    if ((!contig && !vector && !acc) || nthreads < 1 || nthreads > 64 || (acc && nthreads > 1))
        MPI_Abort(MPI_COMM_WORLD, 2);

    MPI_Datatype type = MPI_BYTE;
    if (contig_bytes < 1 || (!contig && contig_bytes != CONTIG_BYTES))
        MPI_Abort(MPI_COMM_WORLD, 2);
    long count = contig_bytes, span = contig_bytes;
    if (vector) {
        MPI_Type_vector(VECTOR_COUNT, 1, VECTOR_STRIDE, MPI_CHAR, &type);
        MPI_Type_commit(&type);
        count = 1;
        span = (long) VECTOR_COUNT *VECTOR_STRIDE;
    }
    MPI_Datatype target_type = MPI_DATATYPE_NULL;
    double *winbuf = NULL;
    MPI_Win win = MPI_WIN_NULL;
    if (acc) {
        MPI_Type_vector(acc_doubles, 1, 2, MPI_DOUBLE, &target_type);
        MPI_Type_commit(&target_type);
        MPI_Win_allocate(rank == 1 ? 2 * acc_doubles * sizeof(double) : 0, sizeof(double),
                         MPI_INFO_NULL, MPI_COMM_WORLD, &winbuf, &win);
        if (rank == 1)
            memset(winbuf, 0, 2 * acc_doubles * sizeof(double));
    }
    unsigned char *buf = malloc(span * nthreads);
    double *origin = malloc(acc_doubles * sizeof(double));
    for (long i = 0; i < acc_doubles; i++)
        origin[i] = 1.0;
    int overlapped = 0;
    double t_wait = 0;
    receiver_t recv[64];
    for (int t = 0; t < nthreads; t++)
        recv[t] = (receiver_t) {.t = t,.nthreads = nthreads,.compute_ms = compute_ms,
            .vector = vector,.count = count,.span = span,.type = type,.buf = buf + t * span};

    if (acc)
        MPI_Win_lock_all(0, win);
    pthread_t late;
    int late_value = 0;
    if (multiple && rank == 1)
        pthread_create(&late, NULL, late_receiver, &late_value);
    for (int it = 0; it < iters; it++) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            usleep(send_delay_ms * 1000);
            double t0 = MPI_Wtime();
            if (acc) {
                MPI_Accumulate(origin, acc_doubles, MPI_DOUBLE, 1, 0, 1, target_type, MPI_SUM, win);
                MPI_Win_flush(1, win);
            } else {
                for (long i = 0; i < span; i++)
                    buf[i] = pattern(i, it);
                for (int t = 0; t < nthreads; t++)
                    MPI_Send(buf, count, type, 1, it * nthreads + t, MPI_COMM_WORLD);
            }
            t_wait += MPI_Wtime() - t0;
        } else if (rank == 1 && acc) {
            usleep(compute_ms * 1000);  /* computing: no MPI call */
            /* before any MPI call of ours: did someone progress us? */
            overlapped += winbuf[0] == it + 1.0 && winbuf[2 * (acc_doubles - 1)] == it + 1.0;
        } else if (rank == 1) {
            for (int t = 0; t < nthreads; t++)
                recv[t].it = it;
            if (nthreads == 1)
                receive_while_computing(&recv[0]);
            for (int t = 0; t < nthreads && nthreads > 1; t++)
                pthread_create(&recv[t].th, NULL, receiver_main, &recv[t]);
            for (int t = 0; t < nthreads && nthreads > 1; t++)
                pthread_join(recv[t].th, NULL);
        }
        MPI_Barrier(MPI_COMM_WORLD);    /* the others: workers, idle in MPI */
        if (rank == 1) {        /* rank 0's flush is done too */
            if (acc) {
                MPI_Win_sync(win);
                for (long i = 0; i < 2 * acc_doubles; i++)
                    if (winbuf[i] != (i % 2 ? 0.0 : it + 1.0) && errs++ < 5)
                        fprintf(stderr, "iteration %d: window[%ld] = %g\n", it, i, winbuf[i]);
            } else {
                long step = vector ? VECTOR_STRIDE : 1;
                for (long i = 0; i < span * nthreads; i += step)
                    if (buf[i] != pattern(i % span, it) && errs++ < 5)
                        fprintf(stderr, "iteration %d: byte %ld = %d\n", it, i, buf[i]);
            }
        }
    }
    if (acc)
        MPI_Win_unlock_all(win);
    if (multiple) {
        int v = 42;
        if (rank == 0)
            MPI_Send(&v, 1, MPI_INT, 1, 1000000, MPI_COMM_WORLD);
        if (rank == 1) {
            pthread_join(late, NULL);
            if (late_value != 42 && errs++ < 5)
                fprintf(stderr, "the second thread received %d\n", late_value);
        }
    }

    for (int t = 0; t < nthreads; t++)
        overlapped += recv[t].overlapped;
    double w = t_wait;
    MPI_Bcast(&overlapped, 1, MPI_INT, 1, MPI_COMM_WORLD);
    MPI_Bcast(&w, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    int all;
    MPI_Allreduce(&errs, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("mode %s: overlapped %d of %d, rank 0 waited %.1f ms per operation "
               "(rank 1 computed %d ms)\n", mode, overlapped, iters * nthreads,
               w * 1e3 / iters / nthreads, compute_ms);
        if (expect && overlapped != iters * nthreads) {
            printf("expected every operation done while rank 1 computed\n");
            all++;
        }
        if (!all)
            printf("No Errors\n");
    }
    if (acc) {
        MPI_Win_free(&win);
        MPI_Type_free(&target_type);
    }
    if (vector)
        MPI_Type_free(&type);
    free(buf);
    free(origin);
    MPI_Finalize();
    return 0;
}
