/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * Unit tests of src/mpid/ch4/shm/ipc/pip/pip_share.h with threads standing
 * in for a receiver and its sender:
 *   alone   the receiver copies every chunk itself (sender busy), sizes not
 *           a multiple of the chunk, truncated receives;
 *   help    a helper thread polls the list like a sender's progress loop;
 *           each copy must be byte-exact with nothing written past it, the
 *           two sides' bytes must add up to the message, and the helper must
 *           have copied some (the receiver naps before its own share of the
 *           work now and then); shares are poisoned and freed right after
 *           removal, so a helper touching one late is caught by the
 *           sanitizers;
 *   window  eight shares listed at once and offered in reverse order;
 *   stream  MPIDI_PIPI_copy_stream byte-exact for every destination alignment
 *           and short, odd and long sizes, nothing written outside; then
 *           alone, help and window again with streaming copies.
 */
#define _GNU_SOURCE
#include "pip_share.h"
#include <pthread.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_SIZE (512 * 1024)
#define GUARD 64

static int failures;
#define CHECK(c, ...) do { if (!(c)) { printf("FAIL %s:%d: ", __FILE__, __LINE__); \
    printf(__VA_ARGS__); printf("\n"); failures++; } } while (0)

static MPIDI_PIPI_share_list_t list;
static int stop, stream_mode;
static size_t helper_bytes, helper_chunks;

static void *helper(void *arg)
{
    (void) arg;
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
        size_t chunks = 0, b = MPIDI_PIPI_share_help(&list, &chunks);
        __atomic_fetch_add(&helper_bytes, b, __ATOMIC_RELAXED);
        __atomic_fetch_add(&helper_chunks, chunks, __ATOMIC_RELAXED);
    }
    return NULL;
}

static unsigned char *src, *dst;

static void fill(size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        src[i] = (unsigned char) (i * 13 + seed);
    memset(dst, 0xee, n + GUARD);
}

static int verify(size_t n, unsigned seed)
{
    for (size_t i = n; i-- > 0;)        /* the last chunks are the likeliest in flight */
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

static MPIDI_PIPI_share_t *open_share(void)
{
    MPIDI_PIPI_share_t *s = aligned_alloc(64, sizeof(*s));
    MPIDI_PIPI_share_init(s, src);
    MPIDI_PIPI_share_add(&list, s);
    return s;
}

static void close_share(MPIDI_PIPI_share_t * s)
{
    MPIDI_PIPI_share_remove(&list, s);
    memset(s, 0xff, sizeof(*s));        /* a late helper would see garbage */
    free(s);
}

/* receive one message of n bytes (want bytes fit) in chunks of at least c */
static size_t receive(size_t n, size_t want, size_t c, unsigned seed, int nap)
{
    fill(n, seed);
    MPIDI_PIPI_share_t *s = open_share();
    MPIDI_PIPI_share_offer(s, dst, want, c, stream_mode);
    if (nap)
        usleep(200);
    size_t chunks = 0, b = MPIDI_PIPI_share_work(s, &chunks);
    MPIDI_PIPI_share_wait(s);
    CHECK(__atomic_load_n(&s->done, __ATOMIC_RELAXED) == want, "wait returned early");
    verify(want, seed);
    close_share(s);
    return b;
}

static void test_alone(void)
{
    size_t sizes[] = { 1, 4095, 4096, 65536, 65537, 300001 };
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
        for (size_t c = 4096; c <= 131072; c *= 8) {
            size_t n = sizes[i];
            CHECK(receive(n, n, c, (unsigned) i, 0) == n, "alone: %zu bytes", n);
            CHECK(receive(n, n / 2, c, (unsigned) i, 0) == n / 2, "truncated %zu", n / 2);
        }
}

/* The schedule: chunks of a quarter of what is left, in whole pages,
 * shrinking to the minimum, never leaving less than the minimum behind,
 * adding up to the message, few of them. */
static void test_chunk(void)
{
    CHECK(MPIDI_PIPI_share_next_chunk(4194304, 16384) == 1048576, "4 MiB: %zu",
          MPIDI_PIPI_share_next_chunk(4194304, 16384));
    CHECK(MPIDI_PIPI_share_next_chunk(65536, 16384) == 16384, "64 KiB: %zu",
          MPIDI_PIPI_share_next_chunk(65536, 16384));
    CHECK(MPIDI_PIPI_share_next_chunk(20000, 16384) == 20000, "a remainder under two chunks");
    CHECK(MPIDI_PIPI_share_next_chunk(100, 16384) == 100, "a remainder under one chunk");
    for (size_t n = 1; n < ((size_t) 64 << 30); n = n * 3 + 1)
        for (size_t min = 4096; min <= 65536; min *= 4) {
            size_t off = 0, k = 0, prev = SIZE_MAX;
            while (off < n) {
                size_t c = MPIDI_PIPI_share_next_chunk(n - off, min);
                if (off + c < n) {
                    CHECK(c >= min && c % 4096 == 0 && c <= prev && n - off - c >= min,
                          "%zu bytes, min %zu: chunk %zu at %zu after %zu", n, min, c, off, prev);
                    prev = c;
                }
                off += c;
                k++;
            }
            CHECK(off == n, "%zu bytes: chunks add up to %zu", n, off);
            /* 3/4 left after each chunk: about 2.4 chunks per halving */
            size_t halvings = 0;
            for (size_t r = n / min; r > 1; r /= 2)
                halvings++;
            CHECK(k <= 3 + 3 * halvings, "%zu bytes, min %zu: %zu chunks", n, min, k);
        }
}

static void test_help(void)
{
    pthread_t t;
    size_t total = 0, mine = 0;
    pthread_create(&t, NULL, helper, NULL);
    srand(7);
    for (int it = 0; it < 400; it++) {
        size_t n = 1 + (size_t) rand() % MAX_SIZE;
        size_t want = it % 5 == 0 ? n - (size_t) rand() % n : n;
        size_t c = (size_t) 1024 << (rand() % 7);
        mine += receive(n, want, c, (unsigned) it, it % 3 == 0);
        total += want;
    }
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    pthread_join(t, NULL);
    CHECK(mine + helper_bytes == total, "receiver %zu + helper %zu bytes != %zu", mine,
          helper_bytes, total);
    CHECK(helper_bytes > 0 && helper_chunks > 0, "the helper never copied");
    CHECK(list.head == NULL, "shares left listed");
    printf("help: %zu bytes, %zu by the helper in %zu chunks\n", total, helper_bytes,
           helper_chunks);
}

static void test_window(void)
{
    enum { W = 8, N = 100000 };
    static unsigned char srcs[W][N], dsts[W][N];
    MPIDI_PIPI_share_t *s[W];
    pthread_t t;
    stop = 0;
    helper_bytes = 0;
    pthread_create(&t, NULL, helper, NULL);
    for (int round = 0; round < 50; round++) {
        for (int w = 0; w < W; w++) {
            for (int i = 0; i < N; i++)
                srcs[w][i] = (unsigned char) (i + w + round);
            memset(dsts[w], 0, N);
            s[w] = aligned_alloc(64, sizeof(MPIDI_PIPI_share_t));
            MPIDI_PIPI_share_init(s[w], srcs[w]);
            MPIDI_PIPI_share_add(&list, s[w]);
        }
        for (int w = W - 1; w >= 0; w--) {
            size_t chunks = 0;
            MPIDI_PIPI_share_offer(s[w], dsts[w], N, 4096, stream_mode);
            MPIDI_PIPI_share_work(s[w], &chunks);
            MPIDI_PIPI_share_wait(s[w]);
        }
        for (int w = 0; w < W; w++) {
            for (int i = 0; i < N; i++)
                if (dsts[w][i] != (unsigned char) (i + w + round)) {
                    CHECK(0, "window %d byte %d wrong", w, i);
                    break;
                }
            MPIDI_PIPI_share_remove(&list, s[w]);
            free(s[w]);
        }
    }
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    pthread_join(t, NULL);
    CHECK(list.head == NULL, "shares left listed");
}

/* The streaming copy alone: every destination alignment mod 64, a few
 * source offsets, sizes around its 16-byte head and 64-byte blocks. */
static void test_stream_copy(void)
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
    src = malloc(MAX_SIZE + 64);
    dst = malloc(MAX_SIZE + 64 + GUARD);
    if (!strcmp(t, "stream")) {
        test_stream_copy();
        stream_mode = 1;
        test_alone();
        test_help();
        stop = 0;
        test_window();
    } else if (!strcmp(t, "alone")) {
        test_alone();
        test_chunk();
    } else if (!strcmp(t, "help"))
        test_help();
    else if (!strcmp(t, "window"))
        test_window();
    else {
        fprintf(stderr, "usage: %s alone|help|window|stream\n", argv[0]);
        return 2;
    }
    free(src);
    free(dst);
    if (failures)
        return 1;
    printf("No Errors\n");
    return 0;
}
