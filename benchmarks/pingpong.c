/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * pingpong: latency (half round trip) and windowed bandwidth between two ranks;
 * from 64 KiB also the sender's time in MPI while it computes (sender_mpi) and
 * memcpy bandwidth. --buffers separate (default, as osu_latency) or one (send
 * back the buffer just received into). doc/user/benchmarks.md.
 */
#include "bench_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TAG 1

static double latency_us(const bench_opts_t * o, char *sbuf, char *rbuf, long size)
{
    int peer = 1 - o->rank;
    int iters = size > 65536 ? (o->iters + 9) / 10 : o->iters;
    double t0 = 0;
    for (int i = -o->warmup; i < iters; i++) {
        if (i == 0) {
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
        }
        if (o->rank == 0) {
            MPI_Send(sbuf, (int) size, MPI_BYTE, peer, TAG, MPI_COMM_WORLD);
            MPI_Recv(rbuf, (int) size, MPI_BYTE, peer, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(rbuf, (int) size, MPI_BYTE, peer, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(sbuf, (int) size, MPI_BYTE, peer, TAG, MPI_COMM_WORLD);
        }
    }
    return (MPI_Wtime() - t0) * 1e6 / (2.0 * iters);
}

static double bandwidth_MBps(const bench_opts_t * o, char *buf, long size, MPI_Request * reqs)
{
    int peer = 1 - o->rank;
    int iters = size > 65536 ? (o->iters + 9) / 10 : o->iters;
    double t0 = 0;
    char ack;
    for (int i = -o->warmup; i < iters; i++) {
        if (i == 0) {
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
        }
        for (int w = 0; w < o->window; w++) {
            /* Pending receives must not overlap: one slice each. */
            char *p = buf + (size_t) w * (size_t) size;
            if (o->rank == 0)
                MPI_Isend(p, (int) size, MPI_BYTE, peer, TAG, MPI_COMM_WORLD, &reqs[w]);
            else
                MPI_Irecv(p, (int) size, MPI_BYTE, peer, TAG, MPI_COMM_WORLD, &reqs[w]);
        }
        MPI_Waitall(o->window, reqs, MPI_STATUSES_IGNORE);
        if (o->rank == 0)
            MPI_Recv(&ack, 1, MPI_BYTE, peer, TAG + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        else
            MPI_Send(&ack, 1, MPI_BYTE, peer, TAG + 1, MPI_COMM_WORLD);
    }
    double secs = MPI_Wtime() - t0;
    return (double) size *o->window * iters / secs / 1e6;
}

/* The sender's time inside MPI (Isend + Wait) per message when it computes
 * between the two for longer than any copy of the message takes: what the
 * message costs the sender's core.  A sender that has to copy the data
 * itself (the POSIX path pipelines it through shared-memory cells) pays for
 * it in Wait; one whose receiver copies from its buffer does not. */
static double sender_mpi_us(const bench_opts_t * o, char *buf, long size)
{
    int peer = 1 - o->rank;
    int iters = (o->iters + 9) / 10, warmup = o->warmup < 10 ? o->warmup : 10;
    double compute = (double) size / 500e6;     /* seconds: 500 MB/s is slower than any copy */
    double in_mpi = 0;
    char ack;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = -warmup; i < iters; i++) {
        if (o->rank == 0) {
            MPI_Request req;
            double t0 = MPI_Wtime();
            MPI_Isend(buf, (int) size, MPI_BYTE, peer, TAG, MPI_COMM_WORLD, &req);
            double t1 = MPI_Wtime();
            while (MPI_Wtime() - t1 < compute);
            double t2 = MPI_Wtime();
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            double t3 = MPI_Wtime();
            if (i >= 0)
                in_mpi += (t1 - t0) + (t3 - t2);
            MPI_Recv(&ack, 1, MPI_BYTE, peer, TAG + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, (int) size, MPI_BYTE, peer, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(&ack, 1, MPI_BYTE, peer, TAG + 1, MPI_COMM_WORLD);
        }
    }
    double us = in_mpi * 1e6 / iters;
    MPI_Bcast(&us, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return us;
}

/* memcpy of size bytes between two distinct buffers, in MB/s (rank 0's). */
static double memcpy_MBps(const bench_opts_t * o, char *dst, const char *src, long size)
{
    int iters = size > 65536 ? (o->iters + 9) / 10 : o->iters;
    double mbps = 0;
    if (o->rank == 0) {
        for (int i = 0; i < 3; i++)
            memcpy(dst, src, (size_t) size);
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++) {
            memcpy(dst, src, (size_t) size);
            __asm__ __volatile__(""::"r"(dst):"memory");
        }
        mbps = (double) size *iters / (MPI_Wtime() - t0) / 1e6;
    }
    MPI_Bcast(&mbps, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return mbps;
}

int main(int argc, char **argv)
{
    bench_opts_t o = {.name = "pingpong",.iters = 1000,.warmup = 100,.threads = 1,
        .window = 64,.wildcard = "none",.order = "posted-first",.buffers = "separate"
    };
    bench_init(&argc, &argv, &o, MPI_THREAD_SINGLE);
    if (o.nsizes == 0) {
        for (long s = 1; s <= (o.quick ? 4096 : 4L << 20); s *= (o.quick ? 64 : 2))
            o.sizes[o.nsizes++] = s;
    }
    long max = 0;
    for (int i = 0; i < o.nsizes; i++)
        max = o.sizes[i] > max ? o.sizes[i] : max;
    if ((double) max * o.window > (double) (1L << 32))
        bench_fail("--sizes x --window: at most 4 GiB of receive buffers");
    char *buf = bench_alloc((size_t) max * (size_t) o.window);
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * (size_t) o.window);

    /* latency: its own send buffer, or the receive buffer (--buffers one) */
    char *sbuf = strcmp(o.buffers, "one") ? bench_alloc((size_t) max) : buf;

    char params[160];
    snprintf(params, sizeof(params), "iters=%d warmup=%d window=%d buffers=%s", o.iters, o.warmup,
             o.window, o.buffers);
    bench_print_header(&o, params);
    for (int i = 0; i < o.nsizes; i++)
        bench_row(&o, "latency", o.sizes[i], "latency", latency_us(&o, sbuf, buf, o.sizes[i]),
                  "us");
    for (int i = 0; i < o.nsizes; i++)
        bench_row(&o, "bandwidth", o.sizes[i], "bandwidth",
                  bandwidth_MBps(&o, buf, o.sizes[i], reqs), "MB/s");
    for (int i = 0; i < o.nsizes; i++)
        if (o.sizes[i] >= 65536)
            bench_row(&o, "sender_mpi", o.sizes[i], "sender_mpi",
                      sender_mpi_us(&o, buf, o.sizes[i]), "us");
    char *copy = bench_alloc((size_t) max);
    for (int i = 0; i < o.nsizes; i++)
        if (o.sizes[i] >= 65536)
            bench_row(&o, "memcpy", o.sizes[i], "bandwidth",
                      memcpy_MBps(&o, copy, buf, o.sizes[i]), "MB/s");
    free(copy);
    free(reqs);
    if (sbuf != buf)
        free(sbuf);
    free(buf);
    bench_finalize(&o);
    return 0;
}
