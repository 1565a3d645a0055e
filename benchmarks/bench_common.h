/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * MPICH-CX benchmarks: shared options, output format and counters.
 *
 * Every benchmark accepts the same options (bench_usage lists them) and prints,
 * on rank 0, '#' comment lines naming the benchmark, the MPI library actually
 * loaded and the parameters, then CSV rows
 *     bench,case,x,metric,value,unit
 * that benchmarks/compare aggregates across libraries and repetitions.
 */
#ifndef BENCH_COMMON_H_INCLUDED
#define BENCH_COMMON_H_INCLUDED

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#define BENCH_MAX_LIST 64
#define BENCH_MAX_VALUE (1L << 30)      /* sizes (bytes) and counts: at most 1 Gi */

typedef struct {
    const char *name;           /* benchmark name, first CSV column */
    int iters;                  /* timed iterations per measurement point */
    int warmup;                 /* untimed iterations before them */
    int threads;                /* threads per rank */
    int window;                 /* outstanding operations per thread */
    int nsizes;                 /* message sizes in bytes */
    long sizes[BENCH_MAX_LIST];
    int ncounts;                /* N: outstanding receives (matching benchmarks) */
    long counts[BENCH_MAX_LIST];
    const char *wildcard;       /* none | any-source | any-tag */
    const char *order;          /* posted-first | unexpected-first */
    const char *peer;           /* remote | self (mt_msgrate) */
    const char *buffers;        /* separate | one (pingpong) */
    int per_thread_comm;        /* 1: a communicator per thread, 0: a tag per thread */
    const char *mode;           /* what to measure (cab_bench); NULL: no --mode */
    const char *const *modes;   /* its accepted values */
    int any_ranks;              /* 1: runs on 2 or more ranks, else on exactly 2 */
    int quick;                  /* smoke-test sizes */
    unsigned seed;              /* for shuffles */
    int rank, nranks;
} bench_opts_t;

/* Parse the options into o, which holds the benchmark's defaults (exits with
 * a message on bad input), call MPI_Init_thread asking for `thread_level` and
 * fail clearly if it is not provided. Lists left empty are the benchmark's
 * to fill. */
void bench_init(int *argc, char ***argv, bench_opts_t * o, int thread_level);
void bench_finalize(bench_opts_t * o);

/* Rank 0 prints the header once: name, library, parameters, CSV column names. */
void bench_print_header(const bench_opts_t * o, const char *params);
/* Rank 0 prints one CSV row. */
void bench_row(const bench_opts_t * o, const char *bcase, long x, const char *metric,
               double value, const char *unit);

/* Abort all ranks with a message (for checks inside the timed code). */
void bench_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* Hardware counters (PAPI, when built --with-papi): instructions retired by the
 * calling thread between start and stop; returns -1 when unavailable. */
void bench_counters_start(void);
long long bench_counters_stop(void);

/* A buffer of `bytes` bytes, page aligned, touched. */
void *bench_alloc(size_t bytes);

/* The median of n values (sorts them in place). */
double bench_median(double *values, int n);

/* Computation outside MPI for ms milliseconds: a sleep (needs no core), or
 * with busy a loop of floating-point work (needs a core of its own). */
void bench_compute(double ms, int busy);

/* Threads: run fn(ctx) on o->threads threads (thread 0 is the caller) and
 * return when all are done. Each context gets its index, a communicator and a
 * tag that keep its traffic apart from the other threads' (--comm-per-thread:
 * a duplicate of MPI_COMM_WORLD each; --tag-per-thread: MPI_COMM_WORLD and tag
 * = index), and a barrier shared by all threads of the rank. */
typedef struct bench_thread_ctx {
    const bench_opts_t *o;
    int index;
    MPI_Comm comm;
    int tag;
    void *barrier;              /* pthread_barrier_t *, for bench_thread_barrier */
    void *arg;                  /* the benchmark's own per-run argument */
    double result;              /* the benchmark's per-thread result */
    void (*fn)(struct bench_thread_ctx *);      /* what the thread runs */
} bench_thread_ctx_t;

void bench_run_threads(const bench_opts_t * o, void (*fn)(bench_thread_ctx_t *), void *arg,
                       bench_thread_ctx_t * ctx /* o->threads entries, filled in */);
void bench_thread_barrier(bench_thread_ctx_t * ctx);

#endif /* BENCH_COMMON_H_INCLUDED */
