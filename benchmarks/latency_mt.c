/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * latency_mt: multithreaded ping-pong. Thread t of rank 0 and thread t of
 * rank 1 ping-pong messages of S bytes on their own communicator (or tag);
 * all T pairs run at once. Reports the mean half round-trip time over the
 * threads, and the slowest thread's.
 */
#include "bench_common.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct {
    long size;
} run_t;

static void thread_fn(bench_thread_ctx_t * c)
{
    const bench_opts_t *o = c->o;
    run_t *run = c->arg;
    int peer = 1 - o->rank;
    char *buf = bench_alloc((size_t) run->size);
    double t0 = 0;

    for (int i = -o->warmup; i < o->iters; i++) {
        if (i == 0) {
            bench_thread_barrier(c);
            if (c->index == 0)
                MPI_Barrier(MPI_COMM_WORLD);
            bench_thread_barrier(c);
            t0 = MPI_Wtime();
        }
        if (o->rank == 0) {
            MPI_Send(buf, (int) run->size, MPI_BYTE, peer, c->tag, c->comm);
            MPI_Recv(buf, (int) run->size, MPI_BYTE, peer, c->tag, c->comm, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, (int) run->size, MPI_BYTE, peer, c->tag, c->comm, MPI_STATUS_IGNORE);
            MPI_Send(buf, (int) run->size, MPI_BYTE, peer, c->tag, c->comm);
        }
    }
    c->result = (MPI_Wtime() - t0) * 1e6 / (2.0 * o->iters);
    free(buf);
}

int main(int argc, char **argv)
{
    bench_opts_t o = {.name = "latency_mt",.iters = 2000,.warmup = 100,.threads = 1,
        .window = 1,.per_thread_comm = 1,.wildcard = "none",.order = "posted-first"
    };
    bench_init(&argc, &argv, &o, MPI_THREAD_MULTIPLE);
    if (o.nsizes == 0) {
        o.sizes[o.nsizes++] = 8;
        o.sizes[o.nsizes++] = 1024;
    }
    bench_thread_ctx_t *ctx = calloc((size_t) o.threads, sizeof(*ctx));
    char params[160], bcase[64];
    snprintf(params, sizeof(params), "threads=%d iters=%d warmup=%d %s", o.threads, o.iters,
             o.warmup, o.per_thread_comm ? "comm-per-thread" : "tag-per-thread");
    snprintf(bcase, sizeof(bcase), "threads=%d %s", o.threads, o.per_thread_comm ? "comm" : "tag");
    bench_print_header(&o, params);
    for (int i = 0; i < o.nsizes; i++) {
        run_t run = {.size = o.sizes[i] };
        bench_run_threads(&o, thread_fn, &run, ctx);
        double sum = 0, max = 0;
        for (int t = 0; t < o.threads; t++) {
            sum += ctx[t].result;
            max = ctx[t].result > max ? ctx[t].result : max;
        }
        bench_row(&o, bcase, o.sizes[i], "latency", sum / o.threads, "us");
        bench_row(&o, bcase, o.sizes[i], "latency_max", max, "us");
    }
    free(ctx);
    bench_finalize(&o);
    return 0;
}
