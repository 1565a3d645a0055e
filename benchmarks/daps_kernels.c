/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * daps_kernels: Daps's application kernels (doc/user/benchmarks.md, paper
 * §3.6), on any number of ranks. Computation is a sleep (the default: it
 * needs no core, so 2 cores can show what progress stealing hides) or, with
 * a -busy mode, a busy loop (needs a core per rank). Ranks are given unequal
 * work (even ranks twice the odd ranks' computation), so some wait in MPI
 * while others compute: the waiting ones are Daps workers. --mode:
 *   two-stage  a BSPMM-like kernel on a window per rank of
 *              DAPS_KERNEL_BLOCKS (4) blocks, each a cube of SIDE^3 doubles
 *              inside a (SIDE+2)^3 array (a strided subarray target type;
 *              contiguous origin). Stage 1: DAPS_KERNEL_TASKS1 (8) tasks of
 *              MPI_Get + compute DAPS_KERNEL_COMPUTE_MS (20) + MPI_Accumulate
 *              (SUM) + flush; stage 2: DAPS_KERNEL_TASKS2 (64) tasks of the
 *              same with no computation (communication-heavy). SIDE: --sizes,
 *              default 32. The accumulated sums are checked.
 *   stencil    a 2-D 5-point stencil on a Cartesian grid of ranks, local
 *              grid SIDE x SIDE doubles (--sizes, default 2048): each
 *              iteration posts MPI_Irecv/MPI_Isend of the four halos (left
 *              and right as vector types, top and bottom contiguous),
 *              computes the interior, then MPI_Waitall. The halos are checked.
 * Rows: "MODE compute=Nms" x SIDE: time (max over ranks, median of --iters),
 * comm_time (time inside MPI calls, mean over ranks) and, for two-stage,
 * stage1_time and stage2_time.
 */
#include "bench_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int compute_ms = 20;
static int busy;
static double in_mpi;           /* seconds inside MPI calls this iteration */
#define TIMED(call) do { double t0_ = MPI_Wtime(); call; in_mpi += MPI_Wtime() - t0_; } while (0)

/* Even ranks compute twice as long as odd ones. */
static double my_share(const bench_opts_t * o, double ms)
{
    return o->rank % 2 ? ms / 2 : ms;
}

/* --- two-stage ----------------------------------------------------------- */

static int nblocks = 4, tasks1 = 8, tasks2 = 64;

/* Task k of a stage: get from one peer, accumulate into the next. */
static int get_peer(const bench_opts_t * o, int r, int k)
{
    return (r + 1 + k) % o->nranks;
}

static int acc_peer(const bench_opts_t * o, int r, int k)
{
    return (r + 2 + k) % o->nranks;
}

static void stage(const bench_opts_t * o, int ntasks, double ms, double *origin, double *scratch,
                  long n, MPI_Datatype block, MPI_Aint block_disp, MPI_Win win)
{
    for (int k = 0; k < ntasks; k++) {
        int g = get_peer(o, o->rank, k), a = acc_peer(o, o->rank, k);
        MPI_Aint disp = (MPI_Aint) (k % nblocks) * block_disp;
        TIMED(MPI_Get(scratch, (int) n, MPI_DOUBLE, g, disp, 1, block, win));
        TIMED(MPI_Win_flush(g, win));
        if (ms > 0)
            bench_compute(ms, busy);
        TIMED(MPI_Accumulate(origin, (int) n, MPI_DOUBLE, a, disp, 1, block, MPI_SUM, win));
        TIMED(MPI_Win_flush(a, win));
    }
}

/* Accumulates of value 1 this rank's block b received in rounds rounds. */
static long expected_adds(const bench_opts_t * o, int b, int rounds)
{
    long adds = 0;
    for (int r = 0; r < o->nranks; r++) {
        for (int k = 0; k < tasks1; k++)
            adds += acc_peer(o, r, k) == o->rank && k % nblocks == b;
        for (int k = 0; k < tasks2; k++)
            adds += acc_peer(o, r, k) == o->rank && k % nblocks == b;
    }
    return adds * rounds;
}

static void two_stage(const bench_opts_t * o, const char *bcase, int side)
{
    int padded = side + 2;
    long n = (long) side * side * side, cube = (long) padded *padded * padded;
    int sizes[3] = { padded, padded, padded }, sub[3] = { side, side, side }, start[3] =
        { 1, 1, 1 };
    MPI_Datatype block;
    MPI_Type_create_subarray(3, sizes, sub, start, MPI_ORDER_C, MPI_DOUBLE, &block);
    MPI_Type_commit(&block);
    double *origin = bench_alloc(n * sizeof(double)), *scratch = bench_alloc(n * sizeof(double));
    for (long i = 0; i < n; i++)
        origin[i] = 1.0;
    double *base;
    MPI_Win win;
    MPI_Win_allocate(nblocks * cube * sizeof(double), sizeof(double), MPI_INFO_NULL,
                     MPI_COMM_WORLD, &base, &win);
    memset(base, 0, nblocks * cube * sizeof(double));
    MPI_Win_lock_all(0, win);
    MPI_Barrier(MPI_COMM_WORLD);

    int rounds = o->warmup + o->iters;
    double t[BENCH_MAX_LIST], t1[BENCH_MAX_LIST], t2[BENCH_MAX_LIST], c[BENCH_MAX_LIST];
    for (int it = 0; it < rounds; it++) {
        in_mpi = 0;
        double t0 = MPI_Wtime();
        stage(o, tasks1, my_share(o, compute_ms), origin, scratch, n, block, cube, win);
        MPI_Barrier(MPI_COMM_WORLD);
        double tm = MPI_Wtime();
        stage(o, tasks2, 0, origin, scratch, n, block, cube, win);
        MPI_Barrier(MPI_COMM_WORLD);
        double te = MPI_Wtime(), mine[3] = { te - t0, tm - t0, te - tm }, all[3], comm;
        MPI_Reduce(mine, all, 3, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        MPI_Reduce(&in_mpi, &comm, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        if (it >= o->warmup) {
            int i = it - o->warmup;
            t[i] = all[0];
            t1[i] = all[1];
            t2[i] = all[2];
            c[i] = comm / o->nranks;
        }
    }
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int b = 0; b < nblocks; b++) {
        long adds = expected_adds(o, b, rounds);
        const double *cb = base + b * cube;
        for (int z = 0; z < padded; z++)
            for (int y = 0; y < padded; y++)
                for (int x = 0; x < padded; x++) {
                    int inside = z && y && x && z <= side && y <= side && x <= side;
                    double v = cb[((long) z * padded + y) * padded + x];
                    if (v != (inside ? (double) adds : 0))
                        bench_fail("two-stage: rank %d block %d (%d,%d,%d) holds %g, expected %g",
                                   o->rank, b, z, y, x, v, inside ? (double) adds : 0.0);
                }
    }
    MPI_Win_free(&win);
    MPI_Type_free(&block);
    free(origin);
    free(scratch);
    int k = o->iters;
    bench_row(o, bcase, side, "time", bench_median(t, k) * 1e6, "us");
    bench_row(o, bcase, side, "comm_time", bench_median(c, k) * 1e6, "us");
    bench_row(o, bcase, side, "stage1_time", bench_median(t1, k) * 1e6, "us");
    bench_row(o, bcase, side, "stage2_time", bench_median(t2, k) * 1e6, "us");
}

/* --- stencil -------------------------------------------------------------- */

/* The value a rank sends at position i (1..side) of a boundary in an
 * iteration; the corners, in a row and a column at once, share one. */
static double cell(int rank, int it, int i, int side)
{
    return rank * 1e6 + it * 1e3 + (i == 1 || i == side ? 0 : 1 + i % 997);
}

static void stencil(const bench_opts_t * o, const char *bcase, int side)
{
    int dims[2] = { 0, 0 }, periods[2] = { 1, 1 }, up, down, left, right;
    MPI_Comm cart;
    MPI_Dims_create(o->nranks, 2, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    MPI_Cart_shift(cart, 0, 1, &up, &down);
    MPI_Cart_shift(cart, 1, 1, &left, &right);
    long row = side + 2;
    double *g = bench_alloc(row * row * sizeof(double));
    MPI_Datatype column;
    MPI_Type_vector(side, 1, (int) row, MPI_DOUBLE, &column);
    MPI_Type_commit(&column);
#define AT(y, x) g[(long) (y) * row + (x)]
    int rounds = o->warmup + o->iters;
    double t[BENCH_MAX_LIST], c[BENCH_MAX_LIST];
    for (int it = 0; it < rounds; it++) {
        /* the boundary this rank sends, stamped with rank and iteration */
        for (int i = 1; i <= side; i++) {
            AT(1, i) = AT(side, i) = AT(i, 1) = AT(i, side) = cell(o->rank, it, i, side);
            AT(0, i) = AT(side + 1, i) = AT(i, 0) = AT(i, side + 1) = -1;
        }
        MPI_Request rq[8];
        MPI_Barrier(cart);
        in_mpi = 0;
        double t0 = MPI_Wtime();
        TIMED(MPI_Irecv(&AT(0, 1), side, MPI_DOUBLE, up, 0, cart, &rq[0]));
        TIMED(MPI_Irecv(&AT(side + 1, 1), side, MPI_DOUBLE, down, 1, cart, &rq[1]));
        TIMED(MPI_Irecv(&AT(1, 0), 1, column, left, 2, cart, &rq[2]));
        TIMED(MPI_Irecv(&AT(1, side + 1), 1, column, right, 3, cart, &rq[3]));
        TIMED(MPI_Isend(&AT(side, 1), side, MPI_DOUBLE, down, 0, cart, &rq[4]));
        TIMED(MPI_Isend(&AT(1, 1), side, MPI_DOUBLE, up, 1, cart, &rq[5]));
        TIMED(MPI_Isend(&AT(1, side), 1, column, right, 2, cart, &rq[6]));
        TIMED(MPI_Isend(&AT(1, 1), 1, column, left, 3, cart, &rq[7]));
        bench_compute(my_share(o, compute_ms), busy);   /* the interior */
        TIMED(MPI_Waitall(8, rq, MPI_STATUSES_IGNORE));
        double mine = MPI_Wtime() - t0, all, comm;
        int nb[4] = { up, down, left, right };
        for (int i = 1; i <= side; i++) {
            double want[4] =
                { cell(nb[0], it, i, side), cell(nb[1], it, i, side), cell(nb[2], it, i, side),
                cell(nb[3], it, i, side)
            };
            double got[4] = { AT(0, i), AT(side + 1, i), AT(i, 0), AT(i, side + 1) };
            for (int h = 0; h < 4; h++)
                if (got[h] != want[h])
                    bench_fail("stencil: rank %d halo %d cell %d holds %g, expected %g",
                               o->rank, h, i, got[h], want[h]);
        }
        MPI_Reduce(&mine, &all, 1, MPI_DOUBLE, MPI_MAX, 0, cart);
        MPI_Reduce(&in_mpi, &comm, 1, MPI_DOUBLE, MPI_SUM, 0, cart);
        if (it >= o->warmup) {
            t[it - o->warmup] = all;
            c[it - o->warmup] = comm / o->nranks;
        }
    }
#undef AT
    MPI_Type_free(&column);
    MPI_Comm_free(&cart);
    free(g);
    bench_row(o, bcase, side, "time", bench_median(t, o->iters) * 1e6, "us");
    bench_row(o, bcase, side, "comm_time", bench_median(c, o->iters) * 1e6, "us");
}

static int env_int(const char *name, int dflt, int min)
{
    const char *s = getenv(name);
    if (!s)
        return dflt;
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end || v < min || v > 1000000)
        bench_fail("%s=%s: expected an integer from %d to 1000000", name, s, min);
    return (int) v;
}

int main(int argc, char **argv)
{
    static const char *const modes[] = { "two-stage", "stencil", "two-stage-busy",
        "stencil-busy", NULL
    };
    bench_opts_t o = {.name = "daps_kernels",.iters = 5,.warmup = 1,.threads = 1,.window = 1,
        .mode = "two-stage",.modes = modes,.any_ranks = 1
    };
    bench_init(&argc, &argv, &o, MPI_THREAD_SINGLE);
    compute_ms = env_int("DAPS_KERNEL_COMPUTE_MS", compute_ms, 0);
    nblocks = env_int("DAPS_KERNEL_BLOCKS", nblocks, 1);
    tasks1 = env_int("DAPS_KERNEL_TASKS1", tasks1, 0);
    tasks2 = env_int("DAPS_KERNEL_TASKS2", tasks2, 0);
    if (o.iters > BENCH_MAX_LIST)
        o.iters = BENCH_MAX_LIST;
    int two = !strncmp(o.mode, "two-stage", 9);
    busy = strstr(o.mode, "busy") != NULL;
    if (!o.nsizes)
        o.sizes[o.nsizes++] = o.quick ? (two ? 8 : 64) : two ? 32 : 2048;
    char params[200], bcase[64];
    if (two)
        snprintf(params, sizeof(params), "mode %s, %d blocks per rank, stage 1: %d tasks "
                 "computing %d ms (odd ranks half), stage 2: %d tasks, compute as %s",
                 o.mode, nblocks, tasks1, compute_ms, tasks2, busy ? "busy loop" : "sleep");
    else
        snprintf(params, sizeof(params), "mode %s, interior computes %d ms (odd ranks half) "
                 "as %s", o.mode, compute_ms, busy ? "busy loop" : "sleep");
    bench_print_header(&o, params);
    snprintf(bcase, sizeof(bcase), "%s compute=%dms", o.mode, compute_ms);
    for (int s = 0; s < o.nsizes; s++) {
        if (o.sizes[s] < 1 || o.sizes[s] > (two ? 256 : 16384))
            bench_fail("--sizes %ld: the side must be 1 to %d", o.sizes[s], two ? 256 : 16384);
        if (two)
            two_stage(&o, bcase, (int) o.sizes[s]);
        else
            stencil(&o, bcase, (int) o.sizes[s]);
    }
    bench_finalize(&o);
    return 0;
}
