/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * Collective latency with the iteration scheme of the PiP-MColl paper
 * (§4.4): per message size a warm-up stage and a timed stage of the same
 * number of iterations, 10000 up to 1 KiB, 1000 up to 8 KiB, 100 up to
 * 128 KiB, 10 above. Reports the slowest rank's mean time per call.
 *   mcoll_bench --mode bcast|gather|scatter|reduce|allreduce|allgather
 *               [--sizes LIST] [--iters N (overrides the scheme)] [--quick]
 * Sizes are bytes per rank (a multiple of 4: reductions are MPI_FLOAT sums;
 * gather, scatter and allgather move that much per rank). The results are
 * checked once per size.
 */
#include "bench_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int scheme_iters(long bytes)
{
    return bytes <= 1024 ? 10000 : bytes <= 8192 ? 1000 : bytes <= 131072 ? 100 : 10;
}

static void run(const char *mode, long bytes, char *a, char *b, int root)
{
    int n = (int) (bytes / 4);
    if (!strcmp(mode, "bcast"))
        MPI_Bcast(a, (int) bytes, MPI_BYTE, root, MPI_COMM_WORLD);
    else if (!strcmp(mode, "gather"))
        MPI_Gather(a, (int) bytes, MPI_BYTE, b, (int) bytes, MPI_BYTE, root, MPI_COMM_WORLD);
    else if (!strcmp(mode, "scatter"))
        MPI_Scatter(b, (int) bytes, MPI_BYTE, a, (int) bytes, MPI_BYTE, root, MPI_COMM_WORLD);
    else if (!strcmp(mode, "reduce"))
        MPI_Reduce(a, b, n, MPI_FLOAT, MPI_SUM, root, MPI_COMM_WORLD);
    else if (!strcmp(mode, "allreduce"))
        MPI_Allreduce(a, b, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    else
        MPI_Allgather(a, (int) bytes, MPI_BYTE, b, (int) bytes, MPI_BYTE, MPI_COMM_WORLD);
}

/* One call on known data, checked (all modes, root 0). */
static void check(const bench_opts_t * o, long bytes, char *a, char *b)
{
    int n = (int) (bytes / 4), bad = 0;
    float *fa = (float *) a, *fb = (float *) b;
    for (int i = 0; i < n; i++)
        fa[i] = (float) (o->rank + 1 + i % 7);
    if (!strcmp(o->mode, "scatter") && o->rank == 0)
        for (long r = 0; r < o->nranks; r++)
            for (int i = 0; i < n; i++)
                fb[r * n + i] = (float) (r + 1 + i % 7);
    run(o->mode, bytes, a, b, 0);
    for (int i = 0; i < n && !bad; i++) {
        float sum = 0;
        for (int r = 0; r < o->nranks; r++)
            sum += (float) (r + 1 + i % 7);
        if (!strcmp(o->mode, "bcast"))
            bad = fa[i] != (float) (1 + i % 7);
        else if (!strcmp(o->mode, "scatter"))
            bad = fa[i] != (float) (o->rank + 1 + i % 7);
        else if (!strcmp(o->mode, "allreduce") || (!strcmp(o->mode, "reduce") && o->rank == 0))
            bad = fb[i] != sum;
        else if (!strcmp(o->mode, "allgather") || (!strcmp(o->mode, "gather") && o->rank == 0))
            for (int r = 0; r < o->nranks && !bad; r++)
                bad = fb[(long) r * n + i] != (float) (r + 1 + i % 7);
    }
    if (bad)
        bench_fail("%s of %ld bytes: wrong result on rank %d", o->mode, bytes, o->rank);
}

int main(int argc, char **argv)
{
    static const char *const modes[] = { "bcast", "gather", "scatter", "reduce", "allreduce",
        "allgather", NULL
    };
    bench_opts_t o = {.name = "mcoll_bench",.iters = 0,.warmup = 0,.threads = 1,.window = 1,
        .mode = "allreduce",.modes = modes,.any_ranks = 1
    };
    char params[256];

    bench_init(&argc, &argv, &o, MPI_THREAD_SINGLE);
    if (!o.nsizes) {
        long last = o.quick ? 4096 : 1 << 20;
        for (long s = 4; s <= last; s *= 4)
            o.sizes[o.nsizes++] = s;
    }
    long max = 0;
    for (int i = 0; i < o.nsizes; i++) {
        if (o.sizes[i] % 4)
            bench_fail("--sizes: %ld is not a multiple of 4 (reductions are float sums)",
                       o.sizes[i]);
        if (o.sizes[i] > max)
            max = o.sizes[i];
    }
    snprintf(params, sizeof(params), "MPI_%s, %d ranks, bytes per rank; iterations: %s",
             o.mode, o.nranks, o.iters ? "--iters" : "the paper's scheme (10000/1000/100/10)");
    bench_print_header(&o, params);
    char *a = bench_alloc(max + 64), *b = bench_alloc(max * o.nranks + 64);

    for (int s = 0; s < o.nsizes; s++) {
        long bytes = o.sizes[s];
        int iters = o.iters ? o.iters : scheme_iters(bytes);
        if (o.quick && iters > 100)
            iters = 100;
        check(&o, bytes, a, b);
        for (int i = 0; i < iters; i++)
            run(o.mode, bytes, a, b, 0);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++)
            run(o.mode, bytes, a, b, 0);
        double mine = (MPI_Wtime() - t0) / iters, slowest;
        MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        bench_row(&o, o.mode, bytes, "latency", slowest * 1e6, "us");
    }
    bench_finalize(&o);
    return 0;
}
