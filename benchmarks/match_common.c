/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * Matching benchmarks: N outstanding 1-byte receives on rank 1, N messages from
 * rank 0; the receiver's time per message for each N, receives posted first or
 * messages unexpected first, optionally with wildcards. Every message is checked
 * (tag, source, payload). Details: doc/user/benchmarks.md.
 */
#include "match_common.h"
#include "bench_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const bench_opts_t *o;
    int shuffle, any_tag, any_source, unexpected_first;
    long n;
    int *msg_tag;               /* tag of message i */
    long *post_order;           /* receive slot j is posted for message post_order[j] */
    unsigned char *buf;
    MPI_Request *reqs;
    MPI_Status *st;
} match_run_t;

static int sync_tag(long n)
{
    return (int) (2 * n + 1);
}

static unsigned char payload(long i)
{
    return (unsigned char) (i * 7 + 3);
}

static int is_wild(const match_run_t * r, long i)
{
    return r->any_tag && (i % 8) == 7;
}

/* Tags and posting order for one N. */
static void plan(match_run_t * r, unsigned seed)
{
    long n = r->n, k = 0;
    for (long i = 0; i < n; i++)
        r->msg_tag[i] = is_wild(r, i) ? (int) (n + i) : (r->shuffle ? (int) i : 0);
    /* Specific receives first (shuffled for match_shuffle), wildcards last. */
    for (long i = 0; i < n; i++)
        if (!is_wild(r, i))
            r->post_order[k++] = i;
    long nspecific = k;
    if (r->shuffle) {
        srand(seed);
        for (long j = nspecific - 1; j > 0; j--) {
            long x = ((long) rand() * ((long) RAND_MAX + 1) + rand()) % (j + 1);
            long t = r->post_order[j];
            r->post_order[j] = r->post_order[x];
            r->post_order[x] = t;
        }
    }
    for (long i = 0; i < n; i++)
        if (is_wild(r, i))
            r->post_order[k++] = i;
}

static void post_receives(match_run_t * r)
{
    for (long j = 0; j < r->n; j++) {
        long i = r->post_order[j];
        int tag = is_wild(r, i) ? MPI_ANY_TAG : r->msg_tag[i];
        int src = r->any_source ? MPI_ANY_SOURCE : 0;
        MPI_Irecv(&r->buf[j], 1, MPI_BYTE, src, tag, MPI_COMM_WORLD, &r->reqs[j]);
    }
}

static void check(const match_run_t * r)
{
    for (long j = 0; j < r->n; j++) {
        long i = r->post_order[j];
        int tag = r->st[j].MPI_TAG;
        /* Burst: same-tag receives match messages in order of posting. */
        long got = r->shuffle || is_wild(r, i) ? (tag >= r->n ? tag - r->n : tag) : i;
        /* Wildcard receives are posted last, in order, and only the reserved
         * tags are left for them: receive i gets message i. */
        if (r->st[j].MPI_SOURCE != 0 || r->buf[j] != payload(got) || tag != r->msg_tag[i])
            bench_fail("%s: receive %ld (for message %ld) matched source %d tag %d payload %u",
                       r->o->name, j, i, r->st[j].MPI_SOURCE, tag, r->buf[j]);
    }
}

/* One exchange of N messages; returns the receiver's elapsed seconds. */
static double exchange(match_run_t * r)
{
    double t = 0;
    long n = r->n;
    if (r->o->rank == 0) {
        if (!r->unexpected_first)
            MPI_Barrier(MPI_COMM_WORLD);        /* receives are posted */
        for (long i = 0; i < n; i++) {
            unsigned char b = payload(i);
            MPI_Send(&b, 1, MPI_BYTE, 1, r->msg_tag[i], MPI_COMM_WORLD);
        }
        if (r->unexpected_first) {
            MPI_Send(NULL, 0, MPI_BYTE, 1, sync_tag(n), MPI_COMM_WORLD);
            MPI_Barrier(MPI_COMM_WORLD);
        }
    } else {
        memset(r->buf, 0, (size_t) n);
        if (r->unexpected_first) {
            /* Messages from one sender arrive in order: once the sync message
             * is here, all N wait in the unexpected queue. */
            MPI_Recv(NULL, 0, MPI_BYTE, 0, sync_tag(n), MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            t = MPI_Wtime();
            post_receives(r);
            MPI_Waitall((int) n, r->reqs, r->st);
            t = MPI_Wtime() - t;
            MPI_Barrier(MPI_COMM_WORLD);
        } else {
            /* Posting plus matching; the barrier that releases the sender is
             * not timed. */
            t = MPI_Wtime();
            post_receives(r);
            t = MPI_Wtime() - t;
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            MPI_Waitall((int) n, r->reqs, r->st);
            t += MPI_Wtime() - t0;
        }
        check(r);
    }
    return t;
}

int match_main(int argc, char **argv, const char *name, int shuffle)
{
    bench_opts_t o = {.name = name,.iters = 5,.warmup = 1,.threads = 1,.window = 1,
        .wildcard = "none",.order = NULL,.seed = 42
    };
    bench_init(&argc, &argv, &o, MPI_THREAD_SINGLE);
    if (o.ncounts == 0)
        for (long n = 1; n <= (o.quick ? 1024 : 65536); n *= (o.quick ? 4 : 2))
            o.counts[o.ncounts++] = n;
    long max = 0;
    for (int i = 0; i < o.ncounts; i++) {
        if (o.counts[i] < 1 || o.counts[i] > (1L << 24))
            bench_fail("--counts: N must be between 1 and %ld, not %ld", 1L << 24, o.counts[i]);
        max = o.counts[i] > max ? o.counts[i] : max;
    }

    match_run_t r = {.o = &o,.shuffle = shuffle };
    r.any_tag = strcmp(o.wildcard, "any-tag") == 0;
    r.any_source = strcmp(o.wildcard, "any-source") == 0;
    r.msg_tag = malloc(sizeof(int) * (size_t) max);
    r.post_order = malloc(sizeof(long) * (size_t) max);
    r.buf = malloc((size_t) max);
    r.reqs = malloc(sizeof(MPI_Request) * (size_t) max);
    r.st = malloc(sizeof(MPI_Status) * (size_t) max);
    int tag_ub, flag, *ub;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
    tag_ub = flag ? *ub : 32767;
    if (2 * max + 1 > tag_ub)
        bench_fail("--counts: N=%ld needs tags up to %ld, MPI_TAG_UB is %d", max, 2 * max + 1,
                   tag_ub);

    char params[128];
    snprintf(params, sizeof(params), "iters=%d warmup=%d wildcard=%s seed=%u", o.iters, o.warmup,
             o.wildcard, o.seed);
    bench_print_header(&o, params);
    static const char *const orders[] = { "posted-first", "unexpected-first" };
    for (int k = 0; k < 2; k++) {
        if (o.order && strcmp(o.order, orders[k]) != 0)
            continue;
        r.unexpected_first = k;
        char bcase[64];
        snprintf(bcase, sizeof(bcase), "%s %s", orders[k], o.wildcard);
        for (int c = 0; c < o.ncounts; c++) {
            r.n = o.counts[c];
            plan(&r, o.seed + (unsigned) c);
            /* Fewer repetitions for large N keep the sweep's cost bounded. */
            int iters = r.n > 4096 ? (int) ((o.iters * 4096L + r.n - 1) / r.n) : o.iters;
            for (int w = 0; w < o.warmup; w++)
                exchange(&r);
            double total = 0;
            for (int it = 0; it < iters; it++)
                total += exchange(&r);
            /* The receiver (rank 1) measured; rank 0 prints. */
            MPI_Bcast(&total, 1, MPI_DOUBLE, 1, MPI_COMM_WORLD);
            bench_row(&o, bcase, r.n, "time_per_msg", total * 1e6 / ((double) iters * r.n), "us");
        }
    }
    free(r.msg_tag);
    free(r.post_order);
    free(r.buf);
    free(r.reqs);
    free(r.st);
    bench_finalize(&o);
    return 0;
}
