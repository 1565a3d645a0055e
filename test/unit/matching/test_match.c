/*
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
 *                linear reference matcher (N operations, default 1000000)
 * Built twice: with the real hash, and with a hash that puts every key in
 * one bucket (collisions everywhere).
 */
#include "cx_match.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ANY (-1)

static int failures;
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
        CHECK(cx_match_init(&m) == 0, "init");
        for (int k = 0; k < 4; k++) {
            r[k] = (req_t) {.id = k };
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
    cx_match_init(&m);
    /* from source 3: tags 10 (A), 11 (B), 12 (C); from source 4: tag 11 (D), 10 (E) */
    const int msgs[5][2] = { {3, 10}, {3, 11}, {3, 12}, {4, 11}, {4, 10} };
    for (int i = 0; i < 5; i++) {
        u[i] = (req_t) {.id = i };
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
            cx_match_init(&m);
            for (int k = 0; k < 3; k++) {
                r[k] = (req_t) {.id = k };
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
    cx_match_init(&m);
    for (int k = 0; k < 3; k++) {
        u[k] = (req_t) {.id = k };
        cx_match_unexp_add(&m, &u[k].cell, 0, 2, 9);
    }
    cx_match_unexp_remove(&m, &u[1].cell);     /* e.g. taken by MPI_Mprobe */
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
    cx_match_init(&m);
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
    cx_match_init(&m);
    for (int i = 0; i < N; i++) {
        r[i] = (req_t) {.id = i };
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
    printf("reclaim: %d receives, then drained: %zu entries, %zu bucket slots, %llu rehashes\n",
           N, s.entries, s.buckets, (unsigned long long) s.rehashes);
    cx_match_destroy(&m);
}

/* ---- rehash -------------------------------------------------------------- */

static void test_rehash(void)
{
    cx_matcher_t m;
    enum { N = 20000 };
    static req_t r[N];
    cx_match_init(&m);
    unsigned long long x = 88172645463325252ULL;
    for (int i = 0; i < N; i++) {
        r[i] = (req_t) {.id = i };
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
    printf("rehash: %d keys, %llu rehashes, %llu lookups found in the old array, longest chain %zu\n",
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

static void test_fuzz(long nops)
{
    cx_matcher_t m;
    long counts[6] = { 0 };
    cx_match_init(&m);
    memset(pool, 0, sizeof(pool));
    n_ref_posted = n_ref_unexp = 0;
    srand(12345);
    for (long op = 0; op < nops && failures < 10; op++) {
        int kind = rand() % 6;
        int ctx = rand() % NCTX;
        counts[kind]++;
        switch (kind) {
            case 0:    /* MPI_Irecv: an unexpected message first, else post */
            case 1: {
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
                    pool[s] = (req_t) {.id = s,.ctx = ctx,.src = src,.tag = tag,.in_use = 1 };
                    CHECK(cx_match_post(&m, &pool[s].cell, (uint32_t) ctx, src, tag) == 0, "post");
                    ref_posted[n_ref_posted++] = s;
                }
                break;
            }
            case 2:    /* a message arrives */
            case 3: {
                int src = rand_src(false), tag = rand_tag(false);
                int pos, want = ref_first_posted(ctx, src, tag, &pos);
                cx_match_cell_t *c = cx_match_posted_find(&m, (uint32_t) ctx, src, tag);
                CHECK(id_of(c) == want, "op %ld arrive (%d,%d,%d): got %d want %d", op, ctx, src,
                      tag, id_of(c), want);
                if (want >= 0) {
                    if (c)
                        cx_match_unpost(&m, c);
                    ref_remove(ref_posted, &n_ref_posted, pos);
                    pool[want].in_use = 0;
                } else {
                    int s = free_slot();
                    if (s < 0)
                        break;
                    pool[s] = (req_t) {.id = s,.ctx = ctx,.src = src,.tag = tag,.in_use = 2 };
                    CHECK(cx_match_unexp_add(&m, &pool[s].cell, (uint32_t) ctx, src, tag) == 0,
                          "unexp add");
                    ref_unexp[n_ref_unexp++] = s;
                }
                break;
            }
            case 4: {  /* MPI_Cancel of a posted receive (any position) */
                if (!n_ref_posted)
                    break;
                int pos = rand() % n_ref_posted;
                int s = ref_posted[pos];
                cx_match_unpost(&m, &pool[s].cell);
                ref_remove(ref_posted, &n_ref_posted, pos);
                pool[s].in_use = 0;
                break;
            }
            case 5: {  /* MPI_Iprobe, then half the time MPI_Mprobe (consumes) */
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
        if (op % 4096 == 0) {
            cx_match_stats_t s;
            cx_match_get_stats(&m, &s);
            CHECK(s.posted == (size_t) n_ref_posted && s.unexp == (size_t) n_ref_unexp,
                  "op %ld: counts %zu/%zu, reference %d/%d", op, s.posted, s.unexp,
                  n_ref_posted, n_ref_unexp);
        }
    }
    cx_match_stats_t s;
    cx_match_get_stats(&m, &s);
    printf("fuzz: %ld operations (irecv %ld, arrive %ld, cancel %ld, probe %ld); "
           "at the end %zu posted, %zu unexpected, %zu entries, longest chain %zu\n",
           nops, counts[0] + counts[1], counts[2] + counts[3], counts[4], counts[5],
           s.posted, s.unexp, s.entries, s.max_chain);
    cx_match_destroy(&m);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s orders|unexpected|cancel|contexts|reclaim|rehash|fuzz [N]\n",
                argv[0]);
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
