/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * Unit tests of CAB-MPI's core (src/mpid/ch4/shm/ipc/pip/pip_steal.h and
 * pip_steal_victim.h) with threads standing in for ranks:
 *   segments  copies between random segment lists, any byte range, equal
 *             to a reference copy, nothing written outside;
 *   alone     an owner runs every chunk of its tasks itself, forward and
 *             reversed, sizes that are not a multiple of the chunk;
 *   steal     three workers steal from one owner's queue while the owner
 *             works too: every copy byte-exact, the workers' bytes and the
 *             owner's add up, workers ran some chunks; tasks are poisoned
 *             and freed right after unpublishing, so a worker touching one
 *             late is caught by the sanitizers;
 *   reduce    accumulate and get-accumulate tasks whose reduction adds one
 *             to every byte: each byte must end up exactly one higher (no
 *             chunk lost or run twice), elements never split;
 *   window    eight tasks published at once, stolen from concurrently;
 *   victims   localized, mixed and throughput-aware choice on a fake map
 *             of two NUMA nodes: who is tried, N_saturate, one check at a
 *             time, the tail of a task kept local;
 *   stream    MPIDI_PIPI_copy_stream byte-exact for every alignment.
 */
#define _GNU_SOURCE
#include "pip_steal_victim.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_SIZE (512 * 1024)
#define GUARD 64
#define NWORKERS 3

static int failures;
#define CHECK(c, ...) do { if (!(c)) { printf("FAIL %s:%d: ", __FILE__, __LINE__); \
    printf(__VA_ARGS__); printf("\n"); failures++; } } while (0)

static unsigned char *src, *dst, *ref;

/* Split [0, n) of buf into random segments spread gap bytes apart. */
static int make_segs(MPIDI_PIPI_seg_t * s, int max, unsigned char *buf, size_t n, size_t gap)
{
    int k = 0;
    size_t off = 0, addr = 0;
    while (off < n && k < max - 1) {
        size_t len = 1 + (size_t) rand() % 3000;
        if (len > n - off)
            len = n - off;
        s[k].base = (char *) buf + addr;
        off += len;
        addr += len + gap;
        s[k++].end = off;
    }
    if (off < n) {
        s[k].base = (char *) buf + addr;
        s[k++].end = n;
    }
    return k;
}

static void nap(void)
{
    struct timespec ts = { 0, 200000 };
    nanosleep(&ts, NULL);
}

static void test_segments(void)
{
    static MPIDI_PIPI_seg_t ss[1024], ds[1024];
    for (int it = 0; it < 200; it++) {
        size_t n = 1 + (size_t) rand() % (MAX_SIZE / 4);
        int ns = make_segs(ss, 1024, src, n, (size_t) (rand() % 3) * 7);
        int nd = make_segs(ds, 1024, dst, n, (size_t) (rand() % 3) * 5);
        for (size_t i = 0; i < MAX_SIZE; i++)
            src[i] = (unsigned char) (i * 31 + it);
        memset(dst, 0xee, MAX_SIZE + GUARD);
        memset(ref, 0xee, MAX_SIZE + GUARD);
        size_t off = (size_t) rand() % n, len = 1 + (size_t) rand() % (n - off);
        MPIDI_PIPI_seg_copy(ss, ns, ds, nd, off, len, it & 1);
        /* the reference: byte by byte through the lists */
        for (size_t b = off; b < off + len; b++) {
            int si = MPIDI_PIPI_seg_find(ss, ns, b), di = MPIDI_PIPI_seg_find(ds, nd, b);
            size_t d = (size_t) (MPIDI_PIPI_seg_addr(ds, di, b) - (char *) dst);
            ref[d] = *(unsigned char *) MPIDI_PIPI_seg_addr(ss, si, b);
        }
        CHECK(!memcmp(dst, ref, MAX_SIZE + GUARD), "segment copy %d (%zu+%zu of %zu) differs",
              it, off, len, n);
    }
}

static MPIDI_PIPI_taskq_t queue;
static int stop;
static size_t worker_bytes, worker_chunks;
static size_t most_chunks[NWORKERS];    /* the most one steal of each worker ran */

/* What each worker's wait is known by in tasks' waiter field: its index,
 * unless a test shares one id among several (a window's fence). */
static int worker_wait_id[NWORKERS] = { 0, 1, 2 };

/* Worker id (0 .. NWORKERS - 1). */
static void *worker(void *arg)
{
    int id = (int) (intptr_t) arg;
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
        size_t n = 0, b = MPIDI_PIPI_taskq_steal(&queue, 0, worker_wait_id[id], &n);
        if (b) {
            __atomic_fetch_add(&worker_bytes, b, __ATOMIC_RELAXED);
            __atomic_fetch_add(&worker_chunks, n, __ATOMIC_RELAXED);
            if (n > most_chunks[id])
                most_chunks[id] = n;
        } else
            sched_yield();
    }
    return NULL;
}

static void start_workers(pthread_t * th)
{
    stop = 0;
    worker_bytes = worker_chunks = 0;
    for (int i = 0; i < NWORKERS; i++) {
        most_chunks[i] = 0;
        pthread_create(&th[i], NULL, worker, (void *) (intptr_t) i);
    }
}

static void stop_workers(pthread_t * th)
{
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < NWORKERS; i++)
        pthread_join(th[i], NULL);
}

static int task_waiter = MPIDI_PIPI_NO_WAITER;  /* owner_copy's tasks' waiter */

/* One owner copy of n bytes from src to dst in chunks; seg: noncontiguous
 * at both ends; returns the chunks the owner ran. */
static size_t owner_copy(size_t n, size_t chunk, int reverse, int seg, int sleepy)
{
    static MPIDI_PIPI_seg_t ss[1024], ds[1024];
    MPIDI_PIPI_seg_t s1 = { (char *) src, n }, d1 = { (char *) dst, n };
    int ns = 1, nd = 1;
    if (seg) {
        ns = make_segs(ss, 1024, src, n, 0);    /* contiguous underneath: easy to verify */
        nd = make_segs(ds, 1024, dst, n, 0);
    }
    MPIDI_PIPI_task_t *t = aligned_alloc(64, sizeof(*t));
    MPIDI_PIPI_task_init(t, MPIDI_PIPI_TASK_COPY, n, chunk, seg ? ss : &s1, ns, seg ? ds : &d1, nd);
    t->reverse = reverse;
    t->waiter = task_waiter;
    MPIDI_PIPI_taskq_publish(&queue, t);
    if (sleepy)
        nap();
    size_t chunks = MPIDI_PIPI_task_work(t);
    MPIDI_PIPI_task_wait(t);
    MPIDI_PIPI_taskq_unpublish(&queue, t);
    memset(t, 0x5a, sizeof(*t));
    free(t);
    return chunks;
}

static int verify(size_t n, unsigned seed)
{
    for (size_t i = n; i-- > 0;)
        if (dst[i] != (unsigned char) (i * 13 + seed)) {
            CHECK(0, "byte %zu of %zu wrong", i, n);
            return 0;
        }
    for (size_t i = n; i < n + GUARD; i++)
        if (dst[i] != 0xee) {
            CHECK(0, "byte %zu written past the %zu copied", i, n);
            return 0;
        }
    return 1;
}

static void fill(size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        src[i] = (unsigned char) (i * 13 + seed);
    memset(dst, 0xee, n + GUARD);
}

static void test_alone(void)
{
    size_t sizes[] = { 1, 4095, 4096, 65536, 65537, 300001, MAX_SIZE };
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
        for (int rev = 0; rev < 2; rev++) {
            size_t n = sizes[i], chunk = 4096 << (i % 3);
            fill(n, (unsigned) i);
            size_t chunks = owner_copy(n, chunk, rev, i & 1, 0);
            verify(n, (unsigned) i);
            CHECK(chunks == (n + chunk - 1) / chunk, "%zu bytes in %zu-byte chunks: %zu run", n,
                  chunk, chunks);
        }
    CHECK(MPIDI_PIPI_taskq_empty(&queue), "queue not empty");
}

static void test_steal(void)
{
    pthread_t th[NWORKERS];
    size_t owner_bytes = 0, total = 0;
    start_workers(th);
    for (int it = 0; it < 300; it++) {
        size_t n = 1 + (size_t) rand() % MAX_SIZE, chunk = 1024 << (rand() % 5);
        fill(n, (unsigned) it);
        size_t chunks = owner_copy(n, chunk, it & 1, it % 3 == 0, it % 4 == 0);
        verify(n, (unsigned) it);
        total += n;
        owner_bytes += chunks * chunk;  /* an upper bound: the last chunk may be short */
    }
    stop_workers(th);
    CHECK(worker_chunks > 0, "the workers never stole a chunk");
    CHECK(worker_bytes <= total, "workers copied %zu of %zu bytes", worker_bytes, total);
    CHECK(worker_bytes + owner_bytes >= total, "owner and workers copied less than the total");
    for (int i = 0; i < NWORKERS; i++)
        CHECK(most_chunks[i] <= 1, "worker %d ran %zu chunks in one steal of a task without "
              "a waiter", i, most_chunks[i]);
    printf("workers stole %zu chunks, %zu of %zu bytes\n", worker_chunks, worker_bytes, total);
}

/* 200 tasks of random sizes and chunks with waiter task_waiter, copied
 * by the owner while the workers steal; every byte checked. */
static void run_waiter_tasks(void)
{
    pthread_t th[NWORKERS];
    start_workers(th);
    for (int it = 0; it < 200; it++) {
        size_t n = 65536 + (size_t) rand() % (MAX_SIZE - 65536), chunk = 1024 << (rand() % 3);
        fill(n, (unsigned) it);
        owner_copy(n, chunk, it & 1, it % 3 == 0, 1);
        verify(n, (unsigned) it);
    }
    stop_workers(th);
}

/* Tasks whose waiter is worker 0: it keeps taking their chunks in one
 * steal, the others one chunk per steal; every byte once. */
static void test_waiter(void)
{
    task_waiter = 0;
    run_waiter_tasks();
    task_waiter = MPIDI_PIPI_NO_WAITER;
    CHECK(most_chunks[0] > 1, "the waiter never ran more than one chunk per steal");
    for (int i = 1; i < NWORKERS; i++)
        CHECK(most_chunks[i] <= 1, "worker %d, not the waiter, ran %zu chunks in one steal", i,
              most_chunks[i]);
    printf("the waiter ran up to %zu chunks in one steal\n", most_chunks[0]);
}

/* Tasks whose waiter is an id shared by workers 0 and 1, as ranks waiting
 * in one window's closing fence share it: both may take chunks to the
 * end, the others one per steal; every byte once. */
static void test_shared_waiter(void)
{
    task_waiter = worker_wait_id[0] = worker_wait_id[1] = -7;
    run_waiter_tasks();
    task_waiter = MPIDI_PIPI_NO_WAITER;
    worker_wait_id[0] = 0;
    worker_wait_id[1] = 1;
    CHECK(most_chunks[0] > 1 || most_chunks[1] > 1,
          "neither worker sharing the waiter id ran more than one chunk per steal");
    for (int i = 2; i < NWORKERS; i++)
        CHECK(most_chunks[i] <= 1, "worker %d, not a waiter, ran %zu chunks in one steal", i,
              most_chunks[i]);
    printf("the shared-id waiters ran up to %zu and %zu chunks in one steal\n", most_chunks[0],
           most_chunks[1]);
}

/* Adds one to every byte of inout (in is all ones); checks whole elements. */
static void add_bytes(const void *in, void *inout, size_t bytes, const void *arg)
{
    size_t elem = *(const size_t *) arg;
    CHECK(bytes % elem == 0 && ((uintptr_t) inout - (uintptr_t) dst) % elem == 0,
          "reduction of %zu bytes at %zu splits %zu-byte elements", bytes,
          (size_t) ((uintptr_t) inout - (uintptr_t) dst), elem);
    for (size_t i = 0; i < bytes; i++)
        ((unsigned char *) inout)[i] += ((const unsigned char *) in)[i];
}

static void test_reduce(void)
{
    pthread_t th[NWORKERS];
    start_workers(th);
    for (int it = 0; it < 200; it++) {
        size_t elem = (size_t) 1 << (rand() % 5);
        if (it % 7 == 0)
            elem = 12;
        size_t n = elem * (1 + (size_t) rand() % (MAX_SIZE / elem));
        int get = it & 1;
        memset(src, 1, n);
        for (size_t i = 0; i < n; i++)
            dst[i] = (unsigned char) (i * 5);
        memset(dst + n, 0xee, GUARD);
        memset(ref, 0xee, n + GUARD);
        MPIDI_PIPI_seg_t s1 = { (char *) src, n }, d1 = { (char *) dst, n };
        MPIDI_PIPI_task_t *t = aligned_alloc(64, sizeof(*t));
        MPIDI_PIPI_task_init(t, get ? MPIDI_PIPI_TASK_GET_ACC : MPIDI_PIPI_TASK_ACC, n,
                             1000 + (size_t) rand() % 9000, &s1, 1, &d1, 1);
        MPIDI_PIPI_task_set_reduce(t, add_bytes, &elem, (int) elem, get ? (char *) ref : NULL);
        MPIDI_PIPI_taskq_publish(&queue, t);
        if (it % 3 == 0)
            nap();
        MPIDI_PIPI_task_work(t);
        MPIDI_PIPI_task_wait(t);
        MPIDI_PIPI_taskq_unpublish(&queue, t);
        free(t);
        size_t bad = SIZE_MAX;
        for (size_t i = 0; i < n && bad == SIZE_MAX; i++)
            if (dst[i] != (unsigned char) (i * 5 + 1) || (get && ref[i] != (unsigned char) (i * 5)))
                bad = i;
        CHECK(bad == SIZE_MAX, "reduction %d (%zu bytes, %zu-byte elements): byte %zu", it, n,
              elem, bad);
        for (size_t i = n; i < n + GUARD; i++)
            CHECK(dst[i] == 0xee && (!get || ref[i] == 0xee), "byte %zu past the end written", i);
    }
    stop_workers(th);
    CHECK(worker_chunks > 0, "the workers never stole a chunk");
}

static void test_window(void)
{
    pthread_t th[NWORKERS];
    enum { W = 8, N = 64 * 1024 };
    MPIDI_PIPI_task_t *t[W];
    MPIDI_PIPI_seg_t s1[W], d1[W];
    start_workers(th);
    for (int it = 0; it < 50; it++) {
        for (int w = 0; w < W; w++) {
            for (size_t i = 0; i < N; i++)
                src[w * N + i] = (unsigned char) (i * 13 + w + it);
            memset(dst + w * N, 0xee, N);
            s1[w] = (MPIDI_PIPI_seg_t) {
            (char *) src + w * N, N};
            d1[w] = (MPIDI_PIPI_seg_t) {
            (char *) dst + w * N, N};
            t[w] = aligned_alloc(64, sizeof(*t[w]));
            MPIDI_PIPI_task_init(t[w], MPIDI_PIPI_TASK_COPY, N, 2048, &s1[w], 1, &d1[w], 1);
            MPIDI_PIPI_taskq_publish(&queue, t[w]);
        }
        nap();
        for (int w = W; w-- > 0;) {
            MPIDI_PIPI_task_work(t[w]);
            MPIDI_PIPI_task_wait(t[w]);
            MPIDI_PIPI_taskq_unpublish(&queue, t[w]);
            free(t[w]);
        }
        for (int w = 0; w < W; w++)
            for (size_t i = 0; i < N; i++)
                if (dst[w * N + i] != (unsigned char) (i * 13 + w + it)) {
                    CHECK(0, "task %d byte %zu", w, i);
                    break;
                }
    }
    stop_workers(th);
    CHECK(worker_chunks > 0, "the workers never stole a chunk");
    CHECK(MPIDI_PIPI_taskq_empty(&queue), "queue not empty");
}

/* Eight ranks, 0-3 on NUMA node 0 and 4-7 on node 1; rank 0 steals. */
#define NR 8
static MPIDI_PIPI_steal_rank_t ranks[NR];
static MPIDI_PIPI_steal_rank_t *rank_ptrs[NR], *hosts[NR];
static int local_idx[NR], remote_idx[NR];

static MPIDI_PIPI_task_t *post_task(int r, size_t n, size_t chunk)
{
    static MPIDI_PIPI_seg_t s1, d1;
    s1 = (MPIDI_PIPI_seg_t) {
    (char *) src, n};
    d1 = (MPIDI_PIPI_seg_t) {
    (char *) dst, n};
    MPIDI_PIPI_task_t *t = aligned_alloc(64, sizeof(*t));
    MPIDI_PIPI_task_init(t, MPIDI_PIPI_TASK_COPY, n, chunk, &s1, 1, &d1, 1);
    MPIDI_PIPI_taskq_publish(&ranks[r].q, t);
    return t;
}

static void drop_task(int r, MPIDI_PIPI_task_t * t)
{
    MPIDI_PIPI_task_work(t);
    MPIDI_PIPI_task_wait(t);
    MPIDI_PIPI_taskq_unpublish(&ranks[r].q, t);
    free(t);
}

static void test_victims(void)
{
    MPIDI_PIPI_steal_world_t w;
    unsigned rng = 2463534242u;
    memset(ranks, 0, sizeof(ranks));
    for (int i = 0; i < NR; i++) {
        rank_ptrs[i] = &ranks[i];
        ranks[i].numa = i / 4;
        ranks[i].active = 1;
    }
    ranks[0].active = 0;
    CHECK(MPIDI_PIPI_steal_world_init(&w, MPIDI_PIPI_STEAL_LOCALIZED, 2, rank_ptrs, NR, 0,
                                      local_idx, remote_idx, hosts) == 0, "init");
    CHECK(w.n_local == 3 && w.n_remote == 4, "%d local, %d remote peers", w.n_local, w.n_remote);
    for (int i = 0; i < NR; i++)
        CHECK(hosts[i] == &ranks[i / 4 * 4], "NUMA host of rank %d", i);

    /* localized: only ranks 1-3 are tried, one of them per attempt */
    MPIDI_PIPI_task_t *t = post_task(5, 64 * 1024, 4096);
    for (int i = 0; i < 100; i++) {
        MPIDI_PIPI_steal_result_t r = MPIDI_PIPI_steal_once(&w, w.me, &rng);
        CHECK(r.bytes == 0, "localized stole from remote rank 5");
    }
    drop_task(5, t);
    t = post_task(2, MAX_SIZE, 512);
    int hits = 0;
    for (int i = 0; i < 300; i++)
        hits += MPIDI_PIPI_steal_once(&w, w.me, &rng).bytes != 0;
    CHECK(hits > 30 && hits < 300, "localized: %d of 300 attempts hit rank 2 (1 in 3 expected)",
          hits);
    drop_task(2, t);
    CHECK(ranks[0].active == 0, "the worker left itself flagged active");

    /* mixed: the remote victim after an empty local one */
    w.strategy = MPIDI_PIPI_STEAL_MIXED;
    t = post_task(6, MAX_SIZE, 512);
    hits = 0;
    for (int i = 0; i < 300; i++) {
        MPIDI_PIPI_steal_result_t r = MPIDI_PIPI_steal_once(&w, w.me, &rng);
        hits += r.bytes != 0;
        CHECK(!r.bytes || r.remote, "mixed: a remote steal not flagged remote");
    }
    CHECK(hits > 30, "mixed: %d of 300 attempts hit remote rank 6", hits);
    drop_task(6, t);

    /* the tail of a task stays local: fewer than 3 chunks left */
    t = post_task(6, 2 * 4096, 4096);
    for (int i = 0; i < 100; i++)
        CHECK(MPIDI_PIPI_steal_once(&w, w.me, &rng).bytes == 0, "remote steal of a 2-chunk task");
    drop_task(6, t);

    /* throughput-aware: node 1 has 4 active ranks, N_saturate 2: denied */
    w.strategy = MPIDI_PIPI_STEAL_THROUGHPUT;
    t = post_task(6, MAX_SIZE, 512);
    int denied = 0;
    for (int i = 0; i < 300; i++) {
        MPIDI_PIPI_steal_result_t r = MPIDI_PIPI_steal_once(&w, w.me, &rng);
        CHECK(r.bytes == 0, "throughput: stole from a saturated node");
        denied += r.denied;
    }
    CHECK(denied > 30, "throughput: %d denials", denied);
    /* three of node 1 go idle: one active < 2, allowed */
    ranks[4].active = ranks[5].active = ranks[7].active = 0;
    hits = 0;
    for (int i = 0; i < 300; i++)
        hits += MPIDI_PIPI_steal_once(&w, w.me, &rng).bytes != 0;
    CHECK(hits > 30, "throughput: %d of 300 attempts stole from an unsaturated node", hits);
    /* another rank is checking node 1: follow its last verdict */
    ranks[4].numa_checking = 1;
    ranks[4].numa_allow = 0;
    for (int i = 0; i < 100; i++)
        CHECK(MPIDI_PIPI_steal_once(&w, w.me, &rng).bytes == 0,
              "stole while another check said no");
    ranks[4].numa_checking = 0;
    drop_task(6, t);

    w.strategy = MPIDI_PIPI_STEAL_OFF;
    t = post_task(1, 64 * 1024, 4096);
    for (int i = 0; i < 50; i++)
        CHECK(MPIDI_PIPI_steal_once(&w, w.me, &rng).bytes == 0, "stole with stealing off");
    drop_task(1, t);
    CHECK(MPIDI_PIPI_steal_world_init(&w, 1, 2, rank_ptrs, NR, NR, local_idx, remote_idx,
                                      hosts) == -1, "init accepted a rank outside the map");
}

static void test_stream(void)
{
    size_t sizes[] = { 0, 1, 15, 16, 63, 64, 79, 80, 127, 128, 129, 1000, 4096, 65535, 300001 };
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
        for (size_t d = 0; d < 64; d++)
            for (size_t so = 0; so < 3; so++) {
                size_t n = sizes[i];
                for (size_t k = 0; k < n; k++)
                    src[so + k] = (unsigned char) (k * 7 + d);
                memset(dst, 0xee, d + n + GUARD);
                MPIDI_PIPI_copy_stream(dst + d, src + so, n);
                size_t bad = SIZE_MAX;
                for (size_t k = 0; k < d + n + GUARD && bad == SIZE_MAX; k++) {
                    unsigned char want = k >= d && k < d + n ?
                        (unsigned char) ((k - d) * 7 + d) : 0xee;
                    if (dst[k] != want)
                        bad = k;
                }
                CHECK(bad == SIZE_MAX, "stream copy of %zu bytes to +%zu from +%zu: byte %zu",
                      n, d, so, bad);
            }
}

int main(int argc, char **argv)
{
    const char *t = argc > 1 ? argv[1] : "";
    src = malloc(MAX_SIZE * 2);
    dst = malloc(MAX_SIZE * 2 + GUARD);
    ref = malloc(MAX_SIZE * 2 + GUARD);
    srand(12345);
    if (!strcmp(t, "segments"))
        test_segments();
    else if (!strcmp(t, "alone"))
        test_alone();
    else if (!strcmp(t, "steal"))
        test_steal();
    else if (!strcmp(t, "waiter"))
        test_waiter();
    else if (!strcmp(t, "shared-waiter"))
        test_shared_waiter();
    else if (!strcmp(t, "reduce"))
        test_reduce();
    else if (!strcmp(t, "window"))
        test_window();
    else if (!strcmp(t, "victims"))
        test_victims();
    else if (!strcmp(t, "stream"))
        test_stream();
    else {
        fprintf(stderr,
                "usage: %s segments|alone|steal|waiter|shared-waiter|reduce|window|victims|stream\n",
                argv[0]);
        return 2;
    }
    free(src);
    free(dst);
    free(ref);
    if (failures)
        return 1;
    printf("No Errors\n");
    return 0;
}
