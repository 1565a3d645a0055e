/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * daps_bench: Daps's microbenchmarks (doc/user/benchmarks.md, paper §3.6).
 * Rank 1 posts its side of a transfer, computes for --compute-ms (default
 * 200) without calling MPI, then waits; rank 0 issues the transfer; every
 * other rank waits in MPI_Barrier (a Daps worker). --mode:
 *   p2p        rank 0 MPI_Isend + MPI_Wait of SIZE bytes as a vector type
 *              (char, blocklength 1, stride 64: a packed receive) to
 *              rank 1's MPI_Irecv; default 2 MiB;
 *   rma        rank 0 two MPI_Accumulate (MPI_SUM, doubles) of SIZE bytes
 *              into rank 1's window with a strided target type, then
 *              MPI_Win_flush; default 16 MiB;
 *   p2p-busy, rma-busy: the same with a busy loop as the computation (needs
 *              a core per rank; on fewer cores it measures time sharing).
 * Rows: "MODE compute=Nms" x SIZE: time (rank 1's post-to-wait-done, us,
 * median of --iters) and overlap = (comm - exposed) / comm, where comm is
 * the same transfer with no computation and exposed the median of what the
 * transfer added to the computation's measured time (1: fully hidden).
 * More ranks: mpiexec -n 3 or more (2 ranks: no worker but rank 0 itself).
 */
#include "bench_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define STRIDE 64

static int compute_ms = 200;
static double now(void)
{
    return MPI_Wtime();
}

/* One transfer, rank 1 computing ms in the middle; rank 1's time (s), and
 * in *tc the time its computation took (a sleep overshoots by 50-100 us). */
static double one(const bench_opts_t * o, int rma, int busy, long bytes, int ms, char *buf,
                  MPI_Datatype vec, double *origin, MPI_Datatype target, MPI_Win win, double *tc)
{
    double t = 0;
    *tc = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (o->rank == 0) {
        if (rma) {
            long n = bytes / sizeof(double) / 2;
            for (int k = 0; k < 2; k++)
                MPI_Accumulate(origin + k * n, (int) n, MPI_DOUBLE, 1, (MPI_Aint) k * 2 * n, 1,
                               target, MPI_SUM, win);
            MPI_Win_flush(1, win);
        } else {
            MPI_Request r;
            MPI_Isend(buf, 1, vec, 1, 0, MPI_COMM_WORLD, &r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        }
    } else if (o->rank == 1) {
        MPI_Request r = MPI_REQUEST_NULL;
        double t0 = now();
        if (!rma)
            MPI_Irecv(buf, 1, vec, 0, 0, MPI_COMM_WORLD, &r);
        if (ms) {
            double c0 = now();
            bench_compute(ms, busy);
            *tc = now() - c0;
        }
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        if (rma)
            MPI_Barrier(MPI_COMM_WORLD);        /* the paper's target: compute, then barrier */
        t = now() - t0;
    }
    if (rma && o->rank != 1)
        MPI_Barrier(MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    return t;
}

/* Median of rank 1's times; in *exposed the median of what the transfer
 * added to the computation (time minus the computation's own time). */
static double median_of(const bench_opts_t * o, int rma, int busy, long bytes, int ms, char *buf,
                        MPI_Datatype vec, double *origin, MPI_Datatype target, MPI_Win win,
                        double *exposed)
{
    double t[BENCH_MAX_LIST], e[BENCH_MAX_LIST], tc;
    int n = o->iters < BENCH_MAX_LIST ? o->iters : BENCH_MAX_LIST;
    for (int i = 0; i < o->warmup; i++)
        (void) one(o, rma, busy, bytes, ms, buf, vec, origin, target, win, &tc);
    for (int i = 0; i < n; i++) {
        t[i] = one(o, rma, busy, bytes, ms, buf, vec, origin, target, win, &tc);
        e[i] = t[i] - tc;
    }
    *exposed = bench_median(e, n);
    return bench_median(t, n);
}

int main(int argc, char **argv)
{
    static const char *const modes[] = { "p2p", "rma", "p2p-busy", "rma-busy", NULL };
    bench_opts_t o = {.name = "daps_bench",.iters = 5,.warmup = 1,.threads = 1,.window = 1,
        .mode = "p2p",.modes = modes,.any_ranks = 1
    };
    const char *env = getenv("DAPS_BENCH_COMPUTE_MS");
    if (env && atoi(env) > 0)
        compute_ms = atoi(env);
    bench_init(&argc, &argv, &o, MPI_THREAD_SINGLE);
    int rma = !strncmp(o.mode, "rma", 3), busy = strstr(o.mode, "busy") != NULL;
    if (!o.nsizes)
        o.sizes[o.nsizes++] = o.quick ? 64 << 10 : rma ? 16 << 20 : 2 << 20;
    char params[160], bcase[64];
    snprintf(params, sizeof(params), "mode %s, rank 1 computes %d ms (%s), %d ranks waiting in "
             "MPI_Barrier", o.mode, compute_ms, busy ? "busy loop" : "sleep", o.nranks - 2);
    bench_print_header(&o, params);
    snprintf(bcase, sizeof(bcase), "%s compute=%dms", o.mode, compute_ms);

    long max = 0;
    for (int i = 0; i < o.nsizes; i++)
        if (o.sizes[i] > max)
            max = o.sizes[i];
    char *buf = NULL;
    double *origin = NULL, *base = NULL;
    MPI_Win win = MPI_WIN_NULL;
    if (rma) {
        origin = bench_alloc(max);
        for (long i = 0; i < max / (long) sizeof(double); i++)
            origin[i] = 1.0;
        /* the target type spreads the doubles over twice their size */
        MPI_Win_allocate(o.rank == 1 ? 2 * max : 0, sizeof(double), MPI_INFO_NULL,
                         MPI_COMM_WORLD, &base, &win);
        if (o.rank == 1)
            memset(base, 0, 2 * max);
        MPI_Win_lock_all(0, win);
    } else {
        buf = bench_alloc(max * STRIDE);
    }
    for (int s = 0; s < o.nsizes; s++) {
        long bytes = o.sizes[s];
        MPI_Datatype vec = MPI_DATATYPE_NULL, target = MPI_DATATYPE_NULL;
        if (rma) {
            MPI_Type_vector((int) (bytes / sizeof(double) / 2), 1, 2, MPI_DOUBLE, &target);
            MPI_Type_commit(&target);
        } else {
            MPI_Type_vector((int) bytes, 1, STRIDE, MPI_CHAR, &vec);
            MPI_Type_commit(&vec);
        }
        double exposed;
        double comm = median_of(&o, rma, busy, bytes, 0, buf, vec, origin, target, win, &exposed);
        double total = median_of(&o, rma, busy, bytes, compute_ms, buf, vec, origin, target, win,
                                 &exposed);
        double m[3] = { comm, total, exposed };
        MPI_Bcast(m, 3, MPI_DOUBLE, 1, MPI_COMM_WORLD); /* rank 1 measured */
        comm = m[0];
        total = m[1];
        exposed = m[2];
        {
            double overlap = comm > 0 ? (comm - exposed) / comm : 1;
            overlap = overlap < 0 ? 0 : overlap > 1 ? 1 : overlap;
            bench_row(&o, bcase, bytes, "time", total * 1e6, "us");
            bench_row(&o, bcase, bytes, "comm_time", comm * 1e6, "us");
            bench_row(&o, bcase, bytes, "overlap", overlap, "fraction");
        }
        if (rma)
            MPI_Type_free(&target);
        else
            MPI_Type_free(&vec);
    }
    if (rma) {
        MPI_Win_unlock_all(win);
        MPI_Win_free(&win);
    }
    bench_finalize(&o);
    return 0;
}
