/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * MPICH-CX benchmarks: shared options, output format and counters.
 */
#define _GNU_SOURCE
#include "bench_common.h"

#include <errno.h>
#include <limits.h>
#include <getopt.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef CX_HAVE_PAPI
#include <papi.h>
#endif

static void usage(const char *name, FILE * f)
{
    fprintf(f,
            "usage: mpiexec -n 2 %s [options]\n"
            "  --iters N         timed iterations per point\n"
            "  --warmup N        untimed iterations before them\n"
            "  --threads T       threads per rank (needs MPI_THREAD_MULTIPLE when > 1)\n"
            "  --window W        outstanding operations per thread\n"
            "  --sizes LIST      message sizes in bytes: 8,64 or a doubling range 1:4194304\n"
            "  --counts LIST     outstanding receives N, same syntax\n"
            "  --comm-per-thread | --tag-per-thread   how threads keep their traffic apart\n"
            "  --order posted-first|unexpected-first  receives before or after the messages\n"
            "  --wildcard none|any-source|any-tag\n"
            "  --seed S          shuffle seed\n"
            "  --peer remote|self  mt_msgrate: rank 0's threads talk to rank 1, or each to\n"
            "                    itself while rank 1 sleeps outside MPI (contention on 2 cores\n"
            "                    without oversubscription)\n"
            "  --buffers separate|one  pingpong latency: each rank sends from one buffer and\n"
            "                    receives into another (separate, as OSU's osu_latency), or\n"
            "                    sends the buffer it received into (one)\n"
            "  --mode M          cab_bench: pingpong|third-party|noncontig|accumulate\n"
            "  --quick           small sizes and few iterations (smoke test)\n"
            "Output: '#' lines, then CSV rows bench,case,x,metric,value,unit (rank 0).\n", name);
}

static void die_usage(const char *name, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: ", name);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    usage(name, stderr);
    exit(2);
}

static long parse_long(const char *name, const char *opt, const char *s, long min, long max)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < min || v > max)
        die_usage(name, "bad value '%s' for --%s (an integer from %ld to %ld)", s, opt, min, max);
    return v;
}

/* "8,64,1024" or "MIN:MAX" (doubling). */
static int parse_list(const char *name, const char *opt, const char *s, long *out)
{
    int n = 0;
    const char *colon = strchr(s, ':');
    if (colon) {
        char lo[32];
        size_t len = (size_t) (colon - s);
        if (len == 0 || len >= sizeof(lo))
            die_usage(name, "bad range '%s' for --%s", s, opt);
        memcpy(lo, s, len);
        lo[len] = '\0';
        long a = parse_long(name, opt, lo, 0, BENCH_MAX_VALUE);
        long b = parse_long(name, opt, colon + 1, 0, BENCH_MAX_VALUE);
        if (b < a)
            die_usage(name, "empty range '%s' for --%s", s, opt);
        for (long v = a; v <= b; v = v ? v * 2 : 1) {
            if (n == BENCH_MAX_LIST)
                die_usage(name, "range '%s' for --%s has more than %d values", s, opt,
                          BENCH_MAX_LIST);
            out[n++] = v;
        }
        return n;
    }
    char *copy = strdup(s), *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (n == BENCH_MAX_LIST)
            die_usage(name, "too many values for --%s (at most %d)", opt, BENCH_MAX_LIST);
        out[n++] = parse_long(name, opt, tok, 0, BENCH_MAX_VALUE);
    }
    free(copy);
    if (n == 0)
        die_usage(name, "empty list for --%s", opt);
    return n;
}

static const char *one_of(const char *name, const char *opt, const char *v, const char *const *ok)
{
    for (int i = 0; ok[i]; i++)
        if (strcmp(v, ok[i]) == 0)
            return ok[i];
    die_usage(name, "bad value '%s' for --%s", v, opt);
    return NULL;
}

void bench_init(int *argc, char ***argv, bench_opts_t * o, int thread_level)
{
    static const char *const orders[] = { "posted-first", "unexpected-first", NULL };
    static const char *const wildcards[] = { "none", "any-source", "any-tag", NULL };
    static const char *const peers[] = { "remote", "self", NULL };
    static const char *const buffers[] = { "separate", "one", NULL };
    static const struct option longopts[] = {
        {"iters", required_argument, 0, 'i'},
        {"warmup", required_argument, 0, 'u'},
        {"threads", required_argument, 0, 't'},
        {"window", required_argument, 0, 'w'},
        {"sizes", required_argument, 0, 's'},
        {"counts", required_argument, 0, 'n'},
        {"comm-per-thread", no_argument, 0, 'C'},
        {"tag-per-thread", no_argument, 0, 'T'},
        {"order", required_argument, 0, 'o'},
        {"wildcard", required_argument, 0, 'a'},
        {"seed", required_argument, 0, 'r'},
        {"peer", required_argument, 0, 'p'},
        {"buffers", required_argument, 0, 'b'},
        {"mode", required_argument, 0, 'm'},
        {"quick", no_argument, 0, 'q'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}
    };
    const char *name = o->name;
    int c, provided;

    opterr = 0;
    while ((c = getopt_long(*argc, *argv, "", longopts, NULL)) != -1) {
        switch (c) {
            case 'i':
                o->iters = (int) parse_long(name, "iters", optarg, 1, INT_MAX);
                break;
            case 'u':
                o->warmup = (int) parse_long(name, "warmup", optarg, 0, INT_MAX);
                break;
            case 't':
                o->threads = (int) parse_long(name, "threads", optarg, 1, 1024);
                break;
            case 'w':
                o->window = (int) parse_long(name, "window", optarg, 1, 1 << 20);
                break;
            case 's':
                o->nsizes = parse_list(name, "sizes", optarg, o->sizes);
                break;
            case 'n':
                o->ncounts = parse_list(name, "counts", optarg, o->counts);
                break;
            case 'C':
                o->per_thread_comm = 1;
                break;
            case 'T':
                o->per_thread_comm = 0;
                break;
            case 'o':
                o->order = one_of(name, "order", optarg, orders);
                break;
            case 'a':
                o->wildcard = one_of(name, "wildcard", optarg, wildcards);
                break;
            case 'r':
                o->seed = (unsigned) parse_long(name, "seed", optarg, 0, UINT_MAX);
                break;
            case 'p':
                if (!o->peer)
                    die_usage(name, "--peer is not an option of %s", name);
                o->peer = one_of(name, "peer", optarg, peers);
                break;
            case 'b':
                if (!o->buffers)
                    die_usage(name, "--buffers is not an option of %s", name);
                o->buffers = one_of(name, "buffers", optarg, buffers);
                break;
            case 'm':
                if (!o->modes)
                    die_usage(name, "--mode is not an option of %s", name);
                o->mode = one_of(name, "mode", optarg, o->modes);
                break;
            case 'q':
                o->quick = 1;
                break;
            case 'h':
                usage(name, stdout);
                exit(0);
            default:
                die_usage(name, "unknown option '%s'", (*argv)[optind - 1]);
        }
    }
    if (optind < *argc)
        die_usage(name, "unexpected argument '%s'", (*argv)[optind]);
    if (o->quick) {
        o->iters = o->iters > 20 ? 20 : o->iters;
        o->warmup = o->warmup > 2 ? 2 : o->warmup;
    }

    MPI_Init_thread(argc, argv, thread_level, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &o->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &o->nranks);
    if (provided < thread_level)
        bench_fail("the MPI library provides thread level %d, %d is needed", provided,
                   thread_level);
    if (o->threads > 1 && provided < MPI_THREAD_MULTIPLE)
        bench_fail("--threads %d needs MPI_THREAD_MULTIPLE", o->threads);
    if (o->any_ranks && o->nranks < 2)
        bench_fail("%s runs on 2 ranks or more (mpiexec -n 3: one idle), not %d", name, o->nranks);
    if (!o->any_ranks && o->nranks != 2)
        bench_fail("%s runs on exactly 2 ranks (mpiexec -n 2), not %d", name, o->nranks);
}

void bench_finalize(bench_opts_t * o)
{
    (void) o;
    fflush(stdout);
    MPI_Finalize();
}

void bench_fail(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "benchmark error: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    abort();
}

void bench_print_header(const bench_opts_t * o, const char *params)
{
    if (o->rank != 0)
        return;
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(version, &len);
    /* The whole version string, one '#' line per line: the comparison runner
     * checks from it that the intended library was loaded. */
    for (char *line = strtok(version, "\n"); line; line = strtok(NULL, "\n"))
        if (strncmp(line, "MPICH configure", 15) != 0)  /* long and noisy */
            printf("# library: %s\n", line);
    printf("# bench: %s\n# ranks: %d\n# params: %s\n", o->name, o->nranks, params);
#ifdef CX_HAVE_PAPI
    printf("# counters: PAPI\n");
#endif
    printf("bench,case,x,metric,value,unit\n");
    fflush(stdout);
}

void bench_row(const bench_opts_t * o, const char *bcase, long x, const char *metric,
               double value, const char *unit)
{
    if (o->rank != 0)
        return;
    printf("%s,%s,%ld,%s,%.6g,%s\n", o->name, bcase, x, metric, value, unit);
    fflush(stdout);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

double bench_median(double *values, int n)
{
    qsort(values, n, sizeof(double), cmp_double);
    return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

static volatile double compute_sink;

void bench_compute(double ms, int busy)
{
    if (!busy) {
        usleep((useconds_t) (ms * 1000));
        return;
    }
    double end = MPI_Wtime() + ms * 1e-3, x = 1;
    while (MPI_Wtime() < end)
        for (int i = 0; i < 1000; i++)
            x = x * 1.0000001 + 1e-9;
    compute_sink = x;
}

void *bench_alloc(size_t bytes)
{
    void *p = NULL;
    if (posix_memalign(&p, 4096, bytes ? bytes : 1) != 0)
        bench_fail("out of memory allocating %zu bytes", bytes);
    memset(p, 1, bytes);
    return p;
}

#ifdef CX_HAVE_PAPI
static __thread int papi_set = PAPI_NULL;
static int papi_state;          /* 0 untried, 1 ready, -1 unavailable */

void bench_counters_start(void)
{
    if (papi_state == 0) {
        int rc = PAPI_library_init(PAPI_VER_CURRENT);
        papi_state = (rc == PAPI_VER_CURRENT) ? 1 : -1;
        if (papi_state < 0)
            fprintf(stderr, "# papi: unavailable: %s\n", PAPI_strerror(rc));
    }
    if (papi_state < 0)
        return;
    if (papi_set == PAPI_NULL) {
        int rc = PAPI_create_eventset(&papi_set);
        if (rc == PAPI_OK)
            rc = PAPI_add_event(papi_set, PAPI_TOT_INS);
        if (rc != PAPI_OK) {
            fprintf(stderr, "# papi: PAPI_TOT_INS unavailable: %s\n", PAPI_strerror(rc));
            papi_state = -1;
            return;
        }
    }
    PAPI_start(papi_set);
}

long long bench_counters_stop(void)
{
    long long v;
    if (papi_state < 0 || papi_set == PAPI_NULL || PAPI_stop(papi_set, &v) != PAPI_OK)
        return -1;
    return v;
}
#else
void bench_counters_start(void)
{
}

long long bench_counters_stop(void)
{
    return -1;
}
#endif

/* ---- threads ------------------------------------------------------------- */

static void *thread_main(void *p)
{
    bench_thread_ctx_t *ctx = p;
    ctx->fn(ctx);
    return NULL;
}

void bench_run_threads(const bench_opts_t * o, void (*fn)(bench_thread_ctx_t *), void *arg,
                       bench_thread_ctx_t * ctx)
{
    int n = o->threads;
    pthread_barrier_t barrier;
    pthread_t *tids = calloc((size_t) n, sizeof(pthread_t));
    pthread_barrier_init(&barrier, NULL, (unsigned) n);
    for (int t = 0; t < n; t++) {
        ctx[t] = (bench_thread_ctx_t) {
        .o = o,.index = t,.tag = o->per_thread_comm ? 0 : t,.comm = MPI_COMM_WORLD,.barrier =
                &barrier,.arg = arg,.fn = fn};
        /* Collective: every thread's communicator is made before any starts. */
        if (o->per_thread_comm)
            MPI_Comm_dup(MPI_COMM_WORLD, &ctx[t].comm);
    }
    for (int t = 1; t < n; t++)
        if (pthread_create(&tids[t], NULL, thread_main, &ctx[t]) != 0)
            bench_fail("pthread_create failed for thread %d", t);
    fn(&ctx[0]);
    for (int t = 1; t < n; t++)
        pthread_join(tids[t], NULL);
    pthread_barrier_destroy(&barrier);
    for (int t = 0; t < n; t++)
        if (o->per_thread_comm)
            MPI_Comm_free(&ctx[t].comm);
    free(tids);
}

void bench_thread_barrier(bench_thread_ctx_t * ctx)
{
    pthread_barrier_wait((pthread_barrier_t *) ctx->barrier);
}
