/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * Unit tests of the constant-time matcher (src/util/matching), no MPI:
 *   orders       the 24 posting orders of (s,t), (ANY,t), (s,ANY), (ANY,ANY):
 *                four messages from s with tag t go to them in posting order
 *   unexpected   messages first, then receives with mixed wildcards
 *   cancel       removal at the head, middle and tail of each list kind
 *   contexts     the same (source, tag) on two contexts never cross
 *   reclaim      entries are reclaimed when the queues drain; tags up to 2^31-1
 *   rehash       thousands of keys: tables grow, lookups during a migration
 *                find entries still in the old array
 *   fuzz [N]     differential: random post / arrive / cancel / iprobe /
 *                mprobe over 3 sources x 3 tags x 2 contexts, against a
 *                linear reference matcher (N operations, default 1000000);
 *                every 1000 operations all queues drain
 *   short        short mode (list_max 2): moves to the tables in the middle
 *                of posting orders and unexpected sequences; back only when
 *                empty after exactly CX_MATCH_CALM_ADDS * list_max calm posts
 *   oom          allocation failures: the move to the tables stays in short
 *                mode, a failed post or arrival changes nothing
 * `-l K` runs a test with short mode up to K elements (default 0: tables
 * only), so every test also covers the moves between the two; `-c K` lets
 * an empty matcher return to short mode after K calm posts and arrivals
 * instead of the default, so the queues move back and forth often.  Built
 * twice: with the real hash, and with a hash that puts every key in one
 * bucket (collisions everywhere).
 */
#include "cx_match.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ANY (-1)

static int failures;
static size_t list_max;         /* -l K */
static long calm = -1;          /* -c K; -1: the matcher's default */

static int test_init(cx_matcher_t * m)
{
    int rc = cx_match_init(m, list_max);
    if (rc == 0 && calm >= 0)
        m->calm_need = (size_t) calm;   /* posts and arrivals before short mode again */
    return rc;
}

/* Allocation failures on demand (cx_match.c is built with
 * CX_MATCH_TEST_ALLOC): fail_allocs > 0 fails that many calls. */
static int fail_allocs;

void *cx_match_test_malloc(size_t n)
{
    if (fail_allocs > 0) {
        fail_allocs--;
        return NULL;
    }
    return malloc(n);
}

void *cx_match_test_calloc(size_t n, size_t size)
{
    if (fail_allocs > 0) {
        fail_allocs--;
        return NULL;
    }
    return calloc(n, size);
}

#define CHECK(cond, ...) \
    do { \
        if (!(cond)) { \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__); \
            fprintf(stderr, "\n"); \
            failures++; \
        } \
    } while (0)

/* A request as the tests see it: the cell plus an id. */
typedef struct {
    cx_match_cell_t cell;
    int id;
    int ctx, src, tag;
    int in_use;                 /* 1 posted, 2 unexpected */
} req_t;

#define REQ_OF(c) ((req_t *) ((char *) (c) - offsetof(req_t, cell)))

static int id_of(cx_match_cell_t * c)
{
    return c ? REQ_OF(c)->id : -1;
}

/* ---- orders ---------------------------------------------------------------- */

static void test_orders(void)
{
    const int pat[4][2] = { {5, 7}, {ANY, 7}, {5, ANY}, {ANY, ANY} };
    int perm[4] = { 0, 1, 2, 3 };
    int n = 0;
    /* Heap's algorithm over the 24 permutations */
    int c[4] = { 0 };
    for (int i = 0;;) {
        cx_matcher_t m;
        req_t r[4];
        CHECK(test_init(&m) == 0, "init");
        for (int k = 0; k < 4; k++) {
            r[k] = (req_t) {
            .id = k};
            CHECK(cx_match_post(&m, &r[k].cell, 1, pat[perm[k]][0], pat[perm[k]][1]) == 0, "post");
        }
        for (int k = 0; k < 4; k++) {
            cx_match_cell_t *got = cx_match_posted_find(&m, 1, 5, 7);
            CHECK(id_of(got) == k, "order %d%d%d%d: message %d went to %d", perm[0], perm[1],
                  perm[2], perm[3], k, id_of(got));
            if (got)
                cx_match_unpost(&m, got);
        }
        CHECK(cx_match_posted_find(&m, 1, 5, 7) == NULL, "a fifth match");
        cx_match_stats_t s;
        cx_match_get_stats(&m, &s);
        CHECK(s.entries == 0 && s.posted == 0, "entries %zu posted %zu left", s.entries, s.posted);
        cx_match_destroy(&m);
        n++;
        /* next permutation */
        while (i < 4 && c[i] >= i) {
            c[i] = 0;
            i++;
        }
        if (i >= 4)
            break;
        int j = (i % 2) ? c[i] : 0;
        int t = perm[j];
        perm[j] = perm[i];
        perm[i] = t;
        c[i]++;
        i = 0;
    }
    CHECK(n == 24, "%d orders", n);
}

/* ---- unexpected first ---------------------------------------------------- */

static void test_unexpected(void)
{
    cx_matcher_t m;
    req_t u[5];
    test_init(&m);
    /* from source 3: tags 10 (A), 11 (B), 12 (C); from source 4: tag 11 (D), 10 (E) */
    const int msgs[5][2] = { {3, 10}, {3, 11}, {3, 12}, {4, 11}, {4, 10} };
    for (int i = 0; i < 5; i++) {
        u[i] = (req_t) {
        .id = i};
        CHECK(cx_match_posted_find(&m, 0, msgs[i][0], msgs[i][1]) == NULL, "nothing posted");
        CHECK(cx_match_unexp_add(&m, &u[i].cell, 0, msgs[i][0], msgs[i][1]) == 0, "unexp add");
    }
    struct {
        int src, tag, want;
    } steps[] = {
        {3, ANY, 0},    /* (s, ANY) -> A */
        {ANY, 12, 2},   /* (ANY, C) -> C */
        {ANY, ANY, 1},  /* (ANY, ANY) -> B: A and C are gone everywhere */
        {ANY, 10, 4},   /* (ANY, 10) -> E (A is consumed) */
        {4, 11, 3},     /* fully specified -> D */
        {ANY, ANY, -1},
    };
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        cx_match_cell_t *c = cx_match_unexp_find(&m, 0, steps[i].src, steps[i].tag);
        CHECK(id_of(c) == steps[i].want, "step %zu: (%d,%d) got %d, want %d", i, steps[i].src,
              steps[i].tag, id_of(c), steps[i].want);
        if (c)
            cx_match_unexp_remove(&m, c);
    }
    cx_match_stats_t s;
    cx_match_get_stats(&m, &s);
    CHECK(s.entries == 0 && s.unexp == 0, "entries %zu unexp %zu left", s.entries, s.unexp);
    cx_match_destroy(&m);
}

/* ---- cancel ---------------------------------------------------------------- */

static void test_cancel(void)
{
    const int pat[4][2] = { {2, 9}, {ANY, 9}, {2, ANY}, {ANY, ANY} };
    for (int p = 0; p < 4; p++) {
        for (int victim = 0; victim < 3; victim++) {    /* head, middle, tail */
            cx_matcher_t m;
            req_t r[3];
            test_init(&m);
            for (int k = 0; k < 3; k++) {
                r[k] = (req_t) {
                .id = k};
                cx_match_post(&m, &r[k].cell, 0, pat[p][0], pat[p][1]);
            }
            cx_match_unpost(&m, &r[victim].cell);
            for (int k = 0; k < 3; k++) {
                if (k == victim)
                    continue;
                cx_match_cell_t *c = cx_match_posted_find(&m, 0, 2, 9);
                CHECK(id_of(c) == k, "pattern %d, cancelled %d: got %d want %d", p, victim,
                      id_of(c), k);
                if (c)
                    cx_match_unpost(&m, c);
            }
            CHECK(cx_match_posted_find(&m, 0, 2, 9) == NULL, "left over");
            cx_match_destroy(&m);
        }
    }
    /* unexpected messages: removing the middle one unlinks it from all four lists */
    cx_matcher_t m;
    req_t u[3];
    test_init(&m);
    for (int k = 0; k < 3; k++) {
        u[k] = (req_t) {
        .id = k};
        cx_match_unexp_add(&m, &u[k].cell, 0, 2, 9);
    }
    cx_match_unexp_remove(&m, &u[1].cell);      /* e.g. taken by MPI_Mprobe */
    const int pats[4][2] = { {2, 9}, {ANY, 9}, {2, ANY}, {ANY, ANY} };
    for (int p = 0; p < 4; p++) {
        CHECK(id_of(cx_match_unexp_find(&m, 0, pats[p][0], pats[p][1])) == 0,
              "pattern %d does not see message 0 first", p);
    }
    cx_match_unexp_remove(&m, &u[0].cell);
    for (int p = 0; p < 4; p++)
        CHECK(id_of(cx_match_unexp_find(&m, 0, pats[p][0], pats[p][1])) == 2,
              "pattern %d does not see message 2", p);
    cx_match_unexp_remove(&m, &u[2].cell);
    cx_match_destroy(&m);
}

/* ---- contexts, reclaim, big tags ------------------------------------------- */

static void test_contexts(void)
{
    cx_matcher_t m;
    req_t a = {.id = 1 }, b = {.id = 2 }, u = {.id = 3 };
    test_init(&m);
    cx_match_post(&m, &a.cell, 4, ANY, ANY);
    cx_match_post(&m, &b.cell, 5, 1, 1);
    CHECK(id_of(cx_match_posted_find(&m, 5, 1, 1)) == 2, "context 5 message went elsewhere");
    CHECK(id_of(cx_match_posted_find(&m, 4, 1, 1)) == 1, "context 4 message went elsewhere");
    CHECK(cx_match_posted_find(&m, 6, 1, 1) == NULL, "context 6 matched");
    cx_match_unexp_add(&m, &u.cell, 7, 1, 1);
    CHECK(cx_match_unexp_find(&m, 4, ANY, ANY) == NULL, "context 4 sees context 7's message");
    CHECK(id_of(cx_match_unexp_find(&m, 7, ANY, ANY)) == 3, "context 7 misses its message");
    cx_match_destroy(&m);
}

static void test_reclaim(void)
{
    cx_matcher_t m;
    enum { N = 5000 };
    static req_t r[N];
    test_init(&m);
    for (int i = 0; i < N; i++) {
        r[i] = (req_t) {
        .id = i};
        /* distinct (source, tag) pairs, tags up to 2^31-1 */
        int tag = (i % 2) ? 0x7fffffff - i : i;
        cx_match_post(&m, &r[i].cell, (uint32_t) (i % 3), i % 17, tag);
    }
    cx_match_stats_t s;
    cx_match_get_stats(&m, &s);
    CHECK(s.posted == N && s.entries >= N - 17 * 3, "posted %zu entries %zu", s.posted, s.entries);
    for (int i = N - 1; i >= 0; i--) {
        int tag = (i % 2) ? 0x7fffffff - i : i;
        cx_match_cell_t *c = cx_match_posted_find(&m, (uint32_t) (i % 3), i % 17, tag);
        CHECK(id_of(c) == i, "receive %d: got %d", i, id_of(c));
        if (c)
            cx_match_unpost(&m, c);
    }
    cx_match_get_stats(&m, &s);
    CHECK(s.posted == 0 && s.entries == 0, "after draining: posted %zu entries %zu", s.posted,
          s.entries);
    size_t kept = s.free_entries;
    CHECK(kept >= N - 17 * 3, "after draining: %zu entries kept for reuse", kept);
    /* Another N receives with keys never used before reuse the kept
     * entries: memory follows the peak, not the keys ever seen. */
    for (int i = 0; i < N; i++)
        cx_match_post(&m, &r[i].cell, 9, i % 17, N + i);
    cx_match_stats_t s2;
    cx_match_get_stats(&m, &s2);
    CHECK(s2.entries + s2.free_entries == kept, "second round: %zu entries + %zu kept, was %zu",
          s2.entries, s2.free_entries, kept);
    printf("reclaim: %d receives, then drained: %zu entries (%zu kept for reuse), "
           "%zu bucket slots, %llu rehashes\n", N, s.entries, kept, s.buckets,
           (unsigned long long) s.rehashes);
    cx_match_destroy(&m);
}

/* ---- rehash -------------------------------------------------------------- */

static void test_rehash(void)
{
    cx_matcher_t m;
    enum { N = 20000 };
    static req_t r[N];
    test_init(&m);
    unsigned long long x = 88172645463325252ULL;
    for (int i = 0; i < N; i++) {
        r[i] = (req_t) {
        .id = i};
        cx_match_post(&m, &r[i].cell, 0, i, i * 7);
        /* look up a random earlier key between insertions: some of them
         * sit in the array being migrated */
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        int j = (int) (x % (unsigned) (i + 1));
        cx_match_cell_t *c = cx_match_posted_find(&m, 0, j, j * 7);
        CHECK(id_of(c) == j, "lookup %d during growth: got %d", j, id_of(c));
    }
    cx_match_stats_t s;
    cx_match_get_stats(&m, &s);
    CHECK(s.rehashes >= 5, "only %llu rehashes for %d keys", (unsigned long long) s.rehashes, N);
    CHECK(s.old_hits > 0, "no lookup was served by an array under migration");
    printf
        ("rehash: %d keys, %llu rehashes, %llu lookups found in the old array, longest chain %zu\n",
         N, (unsigned long long) s.rehashes, (unsigned long long) s.old_hits, s.max_chain);
    for (int i = 0; i < N; i++)
        cx_match_unpost(&m, &r[i].cell);
    cx_match_get_stats(&m, &s);
    CHECK(s.entries == 0, "%zu entries left", s.entries);
    cx_match_destroy(&m);
}

/* ---- differential fuzzing -------------------------------------------------- */

#define POOL 512
#define NSRC 3
#define NTAG 3
#define NCTX 2

static req_t pool[POOL];
/* the reference: posted receives in posting order, unexpected messages in
 * arrival order, as arrays of pool indices */
static int ref_posted[POOL], n_ref_posted;
static int ref_unexp[POOL], n_ref_unexp;

static bool matches(int psrc, int ptag, int src, int tag)
{
    return (psrc == ANY || psrc == src) && (ptag == ANY || ptag == tag);
}

/* The reference's answer: the oldest unexpected message a pattern matches,
 * or the oldest posted receive a message matches (pool index, -1 if none;
 * *pos its place in the array). */
static int ref_first_unexp(int ctx, int src, int tag, int *pos)
{
    for (int i = 0; i < n_ref_unexp; i++) {
        req_t *u = &pool[ref_unexp[i]];
        if (u->ctx == ctx && matches(src, tag, u->src, u->tag))
            return *pos = i, ref_unexp[i];
    }
    return *pos = -1;
}

static int ref_first_posted(int ctx, int src, int tag, int *pos)
{
    for (int i = 0; i < n_ref_posted; i++) {
        req_t *p = &pool[ref_posted[i]];
        if (p->ctx == ctx && matches(p->src, p->tag, src, tag))
            return *pos = i, ref_posted[i];
    }
    return *pos = -1;
}

static void ref_remove(int *a, int *n, int pos)
{
    memmove(&a[pos], &a[pos + 1], (size_t) (*n - pos - 1) * sizeof(int));
    (*n)--;
}

static int free_slot(void)
{
    for (int tries = 0; tries < 8; tries++) {
        int i = rand() % POOL;
        if (!pool[i].in_use)
            return i;
    }
    for (int i = 0; i < POOL; i++)
        if (!pool[i].in_use)
            return i;
    return -1;
}

static int rand_src(bool wild)
{
    return (wild && rand() % 4 == 0) ? ANY : rand() % NSRC;
}

static int rand_tag(bool wild)
{
    return (wild && rand() % 4 == 0) ? ANY : rand() % NTAG;
}

/* Every receive completes: each context's unexpected messages are taken by
 * (ANY, ANY) receives in arrival order, the posted receives cancelled.  The
 * queues empty (short mode comes back) and fill again. */
static void fuzz_drain(cx_matcher_t * m, long op)
{
    for (int ctx = 0; ctx < NCTX; ctx++) {
        int pos, want;
        while ((want = ref_first_unexp(ctx, ANY, ANY, &pos)) >= 0) {
            cx_match_cell_t *c = cx_match_unexp_find(m, (uint32_t) ctx, ANY, ANY);
            CHECK(id_of(c) == want, "op %ld drain ctx %d: got %d want %d", op, ctx, id_of(c), want);
            if (!c)
                return;
            cx_match_unexp_remove(m, c);
            ref_remove(ref_unexp, &n_ref_unexp, pos);
            pool[want].in_use = 0;
        }
    }
    while (n_ref_posted > 0) {
        int s = ref_posted[0];
        cx_match_unpost(m, &pool[s].cell);
        ref_remove(ref_posted, &n_ref_posted, 0);
        pool[s].in_use = 0;
    }
}

static void test_fuzz(long nops)
{
    cx_matcher_t m;
    long counts[6] = { 0 };
    test_init(&m);
    memset(pool, 0, sizeof(pool));
    n_ref_posted = n_ref_unexp = 0;
    srand(12345);
    for (long op = 0; op < nops && failures < 10; op++) {
        int kind = rand() % 6;
        int ctx = rand() % NCTX;
        counts[kind]++;
        switch (kind) {
            case 0:    /* MPI_Irecv: an unexpected message first, else post */
            case 1:{
                    int src = rand_src(true), tag = rand_tag(true);
                    int pos, want = ref_first_unexp(ctx, src, tag, &pos);
                    cx_match_cell_t *c = cx_match_unexp_find(&m, (uint32_t) ctx, src, tag);
                    CHECK(id_of(c) == want, "op %ld irecv (%d,%d,%d): got %d want %d", op, ctx, src,
                          tag, id_of(c), want);
                    if (want >= 0) {
                        if (c)
                            cx_match_unexp_remove(&m, c);
                        ref_remove(ref_unexp, &n_ref_unexp, pos);
                        pool[want].in_use = 0;
                    } else {
                        int s = free_slot();
                        if (s < 0)
                            break;
                        pool[s] = (req_t) {
                        .id = s,.ctx = ctx,.src = src,.tag = tag,.in_use = 1};
                        CHECK(cx_match_post(&m, &pool[s].cell, (uint32_t) ctx, src, tag) == 0,
                              "post");
                        ref_posted[n_ref_posted++] = s;
                    }
                    break;
                }
            case 2:    /* a message arrives */
            case 3:{
                    int src = rand_src(false), tag = rand_tag(false);
                    int pos, want = ref_first_posted(ctx, src, tag, &pos);
                    cx_match_cell_t *c = cx_match_posted_find(&m, (uint32_t) ctx, src, tag);
                    CHECK(id_of(c) == want, "op %ld arrive (%d,%d,%d): got %d want %d", op, ctx,
                          src, tag, id_of(c), want);
                    if (want >= 0) {
                        if (c)
                            cx_match_unpost(&m, c);
                        ref_remove(ref_posted, &n_ref_posted, pos);
                        pool[want].in_use = 0;
                    } else {
                        int s = free_slot();
                        if (s < 0)
                            break;
                        pool[s] = (req_t) {
                        .id = s,.ctx = ctx,.src = src,.tag = tag,.in_use = 2};
                        CHECK(cx_match_unexp_add(&m, &pool[s].cell, (uint32_t) ctx, src, tag) == 0,
                              "unexp add");
                        ref_unexp[n_ref_unexp++] = s;
                    }
                    break;
                }
            case 4:{   /* MPI_Cancel of a posted receive (any position) */
                    if (!n_ref_posted)
                        break;
                    int pos = rand() % n_ref_posted;
                    int s = ref_posted[pos];
                    cx_match_unpost(&m, &pool[s].cell);
                    ref_remove(ref_posted, &n_ref_posted, pos);
                    pool[s].in_use = 0;
                    break;
                }
            case 5:{   /* MPI_Iprobe, then half the time MPI_Mprobe (consumes) */
                    int src = rand_src(true), tag = rand_tag(true);
                    int pos, want = ref_first_unexp(ctx, src, tag, &pos);
                    cx_match_cell_t *c = cx_match_unexp_find(&m, (uint32_t) ctx, src, tag);
                    CHECK(id_of(c) == want, "op %ld probe (%d,%d,%d): got %d want %d", op, ctx, src,
                          tag, id_of(c), want);
                    if (want >= 0 && c && rand() % 2) {
                        cx_match_unexp_remove(&m, c);
                        ref_remove(ref_unexp, &n_ref_unexp, pos);
                        pool[want].in_use = 0;
                    }
                    break;
                }
        }
        if (op % 1000 == 999)
            fuzz_drain(&m, op);
        if (op % 4096 == 0) {
            cx_match_stats_t s;
            cx_match_get_stats(&m, &s);
            CHECK(s.posted == (size_t) n_ref_posted && s.unexp == (size_t) n_ref_unexp,
                  "op %ld: counts %zu/%zu, reference %d/%d", op, s.posted, s.unexp,
                  n_ref_posted, n_ref_unexp);
            size_t wild = 0;    /* short mode's exact-compare test relies on this count */
            for (int i = 0; i < n_ref_posted; i++)
                wild += pool[ref_posted[i]].src == ANY || pool[ref_posted[i]].tag == ANY;
            CHECK(s.hashed || m.short_wild == wild, "op %ld: short mode counts %zu wildcard "
                  "receives, the reference %zu", op, m.short_wild, wild);
        }
    }
    cx_match_stats_t s;
    cx_match_get_stats(&m, &s);
    printf("fuzz: %ld operations (irecv %ld, arrive %ld, cancel %ld, probe %ld); "
           "at the end %zu posted, %zu unexpected, %zu entries, longest chain %zu; "
           "short mode up to %zu, %llu moves to the tables\n",
           nops, counts[0] + counts[1], counts[2] + counts[3], counts[4], counts[5],
           s.posted, s.unexp, s.entries, s.max_chain, list_max, (unsigned long long) s.migrations);
    /* with a small short mode the queues cross list_max and drain again
     * many times: the moves both ways are part of what was checked */
    if (list_max > 0 && list_max < 8 && calm >= 0 && calm <= 2 && nops >= 100000)
        CHECK(s.migrations >= 100, "only %llu moves to the tables",
              (unsigned long long) s.migrations);
    cx_match_destroy(&m);
}

/* ---- short mode ------------------------------------------------------------ */

/* A matcher in the tables with empty queues: one post and one match at a
 * time must bring it back to short mode after exactly CX_MATCH_CALM_ADDS *
 * list_max of them, not before. */
static void calm_down(cx_matcher_t * m, size_t list_max, const char *when)
{
    cx_match_stats_t s;
    size_t need = CX_MATCH_CALM_ADDS * list_max;
    for (size_t i = 1; i <= need; i++) {
        req_t r = {.id = 42 };
        cx_match_post(m, &r.cell, 1, 5, 7);
        cx_match_cell_t *c = cx_match_posted_find(m, 1, 5, 7);
        CHECK(id_of(c) == 42, "%s: calm post %zu not found", when, i);
        if (c)
            cx_match_unpost(m, c);
        cx_match_get_stats(m, &s);
        CHECK(s.hashed == (i < need), "%s: after %zu of %zu calm posts hashed %d", when, i, need,
              s.hashed);
    }
}

static void test_short(void)
{
    const int pat[4][2] = { {5, 7}, {ANY, 7}, {5, ANY}, {ANY, ANY} };
    /* the exact search packs a pattern's source and tag as a stored key's
     * read as one value */
    const int st[5][2] = { {0, 0}, {5, 7}, {7, 5}, {ANY, 7}, {0x7fffffff, ANY} };
    for (int i = 0; i < 5; i++) {
        cx_match_key_t k = {.ctx = 3,.src = st[i][0],.tag = st[i][1] };
        CHECK(cx_match_pack_src_tag(st[i][0], st[i][1]) == cx_match_src_tag(&k),
              "pack_src_tag(%d, %d) differs from the stored key's value", st[i][0], st[i][1]);
    }
    cx_matcher_t m;
    req_t r[4], u[4];
    cx_match_stats_t s;
    cx_match_init(&m, 2);
    for (int round = 0; round < 2; round++) {   /* the second after returning to short mode */
        for (int k = 0; k < 4; k++) {
            r[k] = (req_t) {
            .id = k};
            cx_match_post(&m, &r[k].cell, 1, pat[k][0], pat[k][1]);
            cx_match_get_stats(&m, &s);
            CHECK(s.hashed == (k >= 2), "round %d, %d posted: hashed %d", round, k + 1, s.hashed);
        }
        for (int k = 0; k < 4; k++) {
            cx_match_cell_t *c = cx_match_posted_find(&m, 1, 5, 7);
            CHECK(id_of(c) == k, "round %d: message %d went to %d", round, k, id_of(c));
            if (c)
                cx_match_unpost(&m, c);
        }
        /* drained right after crossing list_max: it stays in the tables */
        cx_match_get_stats(&m, &s);
        CHECK(s.hashed && s.entries == 0 && s.migrations == (uint64_t) round + 1,
              "round %d drained: hashed %d entries %zu moves %llu", round, s.hashed, s.entries,
              (unsigned long long) s.migrations);
        calm_down(&m, 2, "posted");
    }
    /* unexpected messages in short mode, then a third one moves them: the
     * arrival order holds in every structure */
    const int msgs[4][2] = { {3, 10}, {4, 10}, {3, 11}, {3, 10} };
    for (int k = 0; k < 4; k++) {
        u[k] = (req_t) {
        .id = k};
        cx_match_unexp_add(&m, &u[k].cell, 0, msgs[k][0], msgs[k][1]);
    }
    /* a receive posted now (tables) must still find no message of another context */
    CHECK(cx_match_unexp_find(&m, 1, ANY, ANY) == NULL, "context 1 sees context 0's messages");
    const struct {
        int src, tag, want;
    } steps[] = { {ANY, 10, 0}, {3, ANY, 2}, {ANY, ANY, 1}, {3, 10, 3}, {ANY, ANY, -1} };
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        cx_match_cell_t *c = cx_match_unexp_find(&m, 0, steps[i].src, steps[i].tag);
        CHECK(id_of(c) == steps[i].want, "unexpected step %zu: got %d want %d", i, id_of(c),
              steps[i].want);
        if (c)
            cx_match_unexp_remove(&m, c);
    }
    cx_match_get_stats(&m, &s);
    CHECK(s.hashed && s.migrations == 3 && s.unexp == 0, "hashed %d moves %llu unexp %zu",
          s.hashed, (unsigned long long) s.migrations, s.unexp);
    calm_down(&m, 2, "unexpected");
    /* cancel in short mode, at the head, middle and tail */
    for (int victim = 0; victim < 2; victim++) {
        for (int k = 0; k < 2; k++) {
            r[k] = (req_t) {
            .id = k};
            cx_match_post(&m, &r[k].cell, 0, 2, 9);
        }
        cx_match_unpost(&m, &r[victim].cell);
        CHECK(id_of(cx_match_posted_find(&m, 0, 2, 9)) == 1 - victim, "cancel %d in short mode",
              victim);
        cx_match_unpost(&m, &r[1 - victim].cell);
    }
    cx_match_destroy(&m);
}

/* ---- out of memory ----------------------------------------------------------- */

static void test_oom(void)
{
    cx_matcher_t m;
    req_t r[4], u;
    cx_match_stats_t s;
    cx_match_init(&m, 2);
    for (int k = 0; k < 2; k++) {
        r[k] = (req_t) {
        .id = k};
        cx_match_post(&m, &r[k].cell, 0, 1, k);
    }
    /* the third post cannot reserve entries: it stays a short-mode post */
    fail_allocs = 1000;
    r[2] = (req_t) {
    .id = 2};
    CHECK(cx_match_post(&m, &r[2].cell, 0, ANY, ANY) == 0, "short-mode post failed");
    cx_match_get_stats(&m, &s);
    CHECK(!s.hashed && s.posted == 3, "hashed %d posted %zu", s.hashed, s.posted);
    /* memory back: the next post moves everything, order kept */
    fail_allocs = 0;
    r[3] = (req_t) {
    .id = 3};
    CHECK(cx_match_post(&m, &r[3].cell, 0, 1, 1) == 0, "post");
    cx_match_get_stats(&m, &s);
    CHECK(s.hashed && s.posted == 4, "hashed %d posted %zu", s.hashed, s.posted);
    /* in the tables, a post that needs a new entry fails cleanly */
    req_t x = {.id = 9 };
    fail_allocs = 1000;
    CHECK(cx_match_post(&m, &x.cell, 0, 7, 7) == -1, "post without memory succeeded");
    u = (req_t) {
    .id = 8};
    CHECK(cx_match_unexp_add(&m, &u.cell, 0, 8, 8) == -1, "arrival without memory succeeded");
    fail_allocs = 0;
    cx_match_get_stats(&m, &s);
    CHECK(s.posted == 4 && s.unexp == 0, "a failed call changed the counts: %zu/%zu", s.posted,
          s.unexp);
    const int msgs[4][2] = { {1, 1}, {1, 0}, {1, 1}, {1, 1} };
    const int want[4] = { 1, 0, 2, 3 };
    for (int k = 0; k < 4; k++) {
        cx_match_cell_t *c = cx_match_posted_find(&m, 0, msgs[k][0], msgs[k][1]);
        CHECK(id_of(c) == want[k], "message %d went to %d, want %d", k, id_of(c), want[k]);
        if (c)
            cx_match_unpost(&m, c);
    }
    cx_match_get_stats(&m, &s); /* 4 posted a moment ago: still in the tables */
    CHECK(s.entries == 0 && s.hashed, "entries %zu hashed %d", s.entries, s.hashed);
    cx_match_destroy(&m);
}

int main(int argc, char **argv)
{
    while (argc > 2 && (!strcmp(argv[1], "-l") || !strcmp(argv[1], "-c"))) {
        if (!strcmp(argv[1], "-l"))
            list_max = (size_t) atol(argv[2]);
        else
            calm = atol(argv[2]);
        argc -= 2;
        argv += 2;
    }
    if (argc < 2) {
        fprintf(stderr, "usage: %s [-l K] [-c K] orders|unexpected|cancel|contexts|reclaim|rehash|"
                "fuzz [N]|short|oom\n", argv[0]);
        return 2;
    }
    const char *t = argv[1];
    if (!strcmp(t, "orders"))
        test_orders();
    else if (!strcmp(t, "unexpected"))
        test_unexpected();
    else if (!strcmp(t, "cancel"))
        test_cancel();
    else if (!strcmp(t, "contexts"))
        test_contexts();
    else if (!strcmp(t, "reclaim"))
        test_reclaim();
    else if (!strcmp(t, "rehash"))
        test_rehash();
    else if (!strcmp(t, "fuzz"))
        test_fuzz(argc > 2 ? atol(argv[2]) : 1000000);
    else if (!strcmp(t, "short"))
        test_short();
    else if (!strcmp(t, "oom"))
        test_oom();
    else {
        fprintf(stderr, "unknown test %s\n", t);
        return 2;
    }
    if (failures) {
        printf("%s: %d failures\n", t, failures);
        return 1;
    }
    printf("%s: ok\n", t);
    return 0;
}
