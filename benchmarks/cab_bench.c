/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * cab_bench: CAB-MPI's benchmarks (doc/user/benchmarks.md). Ranks 0 and 1
 * work; every other rank waits inside MPI (MPI_Barrier, or MPI_Win_fence
 * for accumulate) and may steal their copy work. --mode:
 *   pingpong     IMB-style ping-pong, 64 KiB to 16 MiB; each rank reads its
 *                receive buffer low to high after every message;
 *   third-party  rank 0 posts MPI_Isend and sleeps outside MPI, so only the
 *                waiting ranks can help rank 1: rank 1's MPI_Recv time;
 *   noncontig    ping-pong of an X-Z plane of a 3-D array of doubles
 *                (X = 2048 leading, Y = 2) as a vector type, Z = 16 to 512;
 *   accumulate   rank 0 MPI_Accumulate (MPI_SUM, doubles) into rank 1's
 *                window between fences, 128 KiB to 8 MiB.
 * Rows: case "MODE idle=K" (K waiting ranks), x the size in bytes (Z for
 * noncontig), metric time in microseconds per message or operation.
 */
#include "bench_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define X_DOUBLES 2048
#define Y_PLANES 2

static volatile double sink;

/* What the application does with data that just arrived. */
static void touch(const char *buf, long bytes)
{
    double s = 0;
    for (long i = 0; i < bytes; i += 64)
        s += buf[i];
    sink = s;
}

/* Fewer iterations for larger messages: about 64 MiB moved per point. */
static int iters_for(const bench_opts_t * o, long bytes)
{
    long n = (64L << 20) / (bytes > 0 ? bytes : 1);
    if (n > o->iters)
        n = o->iters;
    return n < 4 ? 4 : (int) n;
}

/* One-way time of a ping-pong between ranks 0 and 1 of count elements of
 * type t (bytes of data) from sbuf into rbuf. */
static double pingpong(const bench_opts_t * o, MPI_Comm pair, char *sbuf, char *rbuf, long bytes,
                       int count, MPI_Datatype t, int iters)
{
    int me, peer;
    MPI_Comm_rank(pair, &me);
    peer = 1 - me;
    double t0 = 0;
    for (int i = -o->warmup; i < iters; i++) {
        if (i == 0) {
            MPI_Barrier(pair);
            t0 = MPI_Wtime();
        }
        if (me == 0) {
            MPI_Send(sbuf, count, t, peer, 1, pair);
            MPI_Recv(rbuf, count, t, peer, 1, pair, MPI_STATUS_IGNORE);
            touch(rbuf, bytes);
        } else {
            MPI_Recv(rbuf, count, t, peer, 1, pair, MPI_STATUS_IGNORE);
            touch(rbuf, bytes);
            MPI_Send(sbuf, count, t, peer, 1, pair);
        }
    }
    return (MPI_Wtime() - t0) * 1e6 / (2.0 * iters);
}

static double third_party(const bench_opts_t * o, MPI_Comm pair, char *buf, long bytes, int iters)
{
    int me;
    MPI_Comm_rank(pair, &me);
    /* long enough to cover the copy at 1 GB/s: the sender stays away */
    useconds_t nap = (useconds_t) (bytes / 1000 + 2000);
    double total = 0;
    for (int i = -o->warmup; i < iters; i++) {
        MPI_Barrier(pair);
        if (me == 0) {
            MPI_Request r;
            MPI_Isend(buf, (int) bytes, MPI_BYTE, 1, 2, pair, &r);
            usleep(nap);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        } else {
            double t = MPI_Wtime();
            MPI_Recv(buf, (int) bytes, MPI_BYTE, 0, 2, pair, MPI_STATUS_IGNORE);
            if (i >= 0)
                total += MPI_Wtime() - t;
            touch(buf, bytes);
        }
    }
    MPI_Bcast(&total, 1, MPI_DOUBLE, 1, pair);
    return total * 1e6 / iters;
}

static double accumulate(const bench_opts_t * o, MPI_Win win, double *origin, long bytes, int iters)
{
    double t0 = 0;
    int n = (int) (bytes / sizeof(double));
    for (int i = -o->warmup; i < iters; i++) {
        if (i == 0) {
            MPI_Win_fence(0, win);
            t0 = MPI_Wtime();
        }
        MPI_Win_fence(0, win);
        if (o->rank == 0)
            MPI_Accumulate(origin, n, MPI_DOUBLE, 1, 0, n, MPI_DOUBLE, MPI_SUM, win);
        MPI_Win_fence(0, win);
    }
    double t = (MPI_Wtime() - t0) * 1e6 / iters;
    MPI_Bcast(&t, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return t;
}

int main(int argc, char **argv)
{
    static const char *const modes[] = { "pingpong", "third-party", "noncontig", "accumulate",
        NULL
    };
    bench_opts_t o = {.name = "cab_bench",.iters = 100,.warmup = 2,.threads = 1,.window = 1,
        .mode = "pingpong",.modes = modes,.any_ranks = 1
    };
    bench_init(&argc, &argv, &o, MPI_THREAD_SINGLE);
    int idle = o.nranks - 2, active = o.rank < 2;
    char bcase[48], params[128];
    snprintf(bcase, sizeof(bcase), "%s idle=%d", o.mode, idle);
    int noncontig = !strcmp(o.mode, "noncontig"), acc = !strcmp(o.mode, "accumulate");
    if (!o.nsizes) {
        long lo = noncontig ? 16 : acc ? 128 << 10 : 64 << 10;
        long hi = noncontig ? 512 : acc ? 8 << 20 : 16 << 20;
        if (o.quick)
            hi = lo * 4;
        for (long s = lo; s <= hi; s *= 2)
            o.sizes[o.nsizes++] = s;
    }
    snprintf(params, sizeof(params), "mode %s, %d ranks waiting in MPI", o.mode, idle);
    bench_print_header(&o, params);

    MPI_Comm pair;
    MPI_Comm_split(MPI_COMM_WORLD, active ? 0 : MPI_UNDEFINED, o.rank, &pair);
    long max = o.sizes[o.nsizes - 1];
    long span = noncontig ? max * X_DOUBLES * Y_PLANES * (long) sizeof(double) : max;
    char *sbuf = bench_alloc(span), *rbuf = bench_alloc(span);
    MPI_Win win = MPI_WIN_NULL;
    if (acc)
        MPI_Win_create(o.rank == 1 ? rbuf : NULL, o.rank == 1 ? max : 0, sizeof(double),
                       MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    for (int k = 0; k < o.nsizes; k++) {
        long x = o.sizes[k];
        long bytes = noncontig ? x * X_DOUBLES * (long) sizeof(double) : x;
        int iters = iters_for(&o, bytes);
        double us = 0;
        if (acc)
            us = accumulate(&o, win, (double *) sbuf, bytes, iters);
        else if (active && noncontig) {
            MPI_Datatype plane;
            MPI_Type_vector((int) x, X_DOUBLES, X_DOUBLES * Y_PLANES, MPI_DOUBLE, &plane);
            MPI_Type_commit(&plane);
            us = pingpong(&o, pair, sbuf, rbuf, bytes, 1, plane, iters);
            MPI_Type_free(&plane);
        } else if (active && !strcmp(o.mode, "third-party"))
            us = third_party(&o, pair, rbuf, bytes, iters);
        else if (active)
            us = pingpong(&o, pair, sbuf, rbuf, bytes, (int) bytes, MPI_BYTE, iters);
        bench_row(&o, bcase, x, "time", us, "us");
    }
    if (acc)
        MPI_Win_free(&win);
    if (pair != MPI_COMM_NULL)
        MPI_Comm_free(&pair);
    MPI_Barrier(MPI_COMM_WORLD);        /* the waiting ranks wait here */
    bench_finalize(&o);
    return 0;
}
