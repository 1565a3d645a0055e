/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * mem_latency: what one cold cache line costs on this machine, no MPI: N
 * dependent loads around a random cycle of 64-byte lines of each --sizes, the
 * floor under the matcher's per-message time once its queues outgrow the caches.
 * Prints rows mem_latency,random,BYTES,latency,VALUE,ns; exits 1 if the walk
 * breaks. doc/user/benchmarks.md.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LINE 64

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

/* xorshift64*: a fixed seed, so every run walks the same order */
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;
static uint64_t rng(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dULL;
}

/* ns per dependent load over `bytes` of lines in random cyclic order; -1 if
 * the cycle is broken */
static double measure(size_t bytes, long loads)
{
    size_t n = bytes / LINE;
    char *mem = aligned_alloc(LINE, n * LINE);
    size_t *order = malloc(n * sizeof(*order));
    if (!mem || !order) {
        fprintf(stderr, "mem_latency: out of memory for %zu bytes\n", bytes);
        exit(2);
    }
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    for (size_t i = n - 1; i > 0; i--) {        /* Fisher-Yates */
        size_t j = rng() % (i + 1), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (size_t i = 0; i < n; i++)
        *(void **) (mem + order[i] * LINE) = mem + order[(i + 1) % n] * LINE;
    void **start = (void **) (mem + order[0] * LINE), **p = start;
    for (size_t i = 0; i < n; i++)      /* one lap to warm what fits */
        p = *p;
    long laps = (loads + (long) n - 1) / (long) n;
    double t0 = now_ns();
    for (long i = 0; i < laps * (long) n; i++)
        p = *p;
    double t = now_ns() - t0;
    double result = p == start ? t / ((double) laps * n) : -1;
    free(order);
    free(mem);
    return result;
}

int main(int argc, char **argv)
{
    char sizes[256] = "262144,2097152,33554432,134217728";
    long loads = 20000000;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--sizes") && i + 1 < argc)
            snprintf(sizes, sizeof(sizes), "%s", argv[++i]);
        else if (!strcmp(argv[i], "--loads") && i + 1 < argc)
            loads = atol(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--sizes BYTES,BYTES,...] [--loads N]\n", argv[0]);
            return 2;
        }
    }
    if (loads < 1) {
        fprintf(stderr, "mem_latency: --loads must be positive\n");
        return 2;
    }
    printf("# bench: mem_latency\n# params: sizes=%s loads=%ld line=%d\n", sizes, loads, LINE);
    printf("bench,case,x,metric,value,unit\n");
    for (char *s = strtok(sizes, ","); s; s = strtok(NULL, ",")) {
        size_t bytes = strtoull(s, NULL, 0);
        if (bytes < 2 * LINE) {
            fprintf(stderr, "mem_latency: size %s: at least %d bytes\n", s, 2 * LINE);
            return 2;
        }
        double ns = measure(bytes, loads);
        if (ns < 0) {
            fprintf(stderr, "mem_latency: %zu bytes: the walk did not return to its start\n",
                    bytes);
            return 1;
        }
        printf("mem_latency,random,%zu,latency,%.4g,ns\n", bytes, ns);
    }
    return 0;
}
