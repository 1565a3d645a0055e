/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * Unit tests of PiP-MColl's meetings and partition
 * (src/mpid/ch4/shm/ipc/pip/pip_mcoll_sync.h), no MPI: threads as the
 * ranks of one address space. Usage: test_mcoll_sync TEST
 *   posts   every rank reads what each peer posted at the same meeting,
 *           while fast ranks already post the next one (both address sets)
 *   reuse   a slot taken by a new communicator keeps its step: a peer that
 *           still polls it for the old communicator is not held up, and
 *           the new communicator's meetings line up
 *   parts   the parts of a vector cover it once, in order, balanced, and
 *           never smaller than the minimum unless there is one part
 *   oneway  one-way steps (a root publishes its stage and goes on; the
 *           same root several times in a row, then meetings) mixed with
 *           meetings: every taker reads the value of its step, never the
 *           next one, and the slots' steps line up at the end
 */
#define _GNU_SOURCE
#include <sched.h>
#define MPIDI_PIP_MCOLL_SPINS 16
#define MPIDI_PIP_MCOLL_IDLE() sched_yield()
#include "pip_mcoll_sync.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c_) \
    do { if (!(c_)) { fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #c_); exit(1); } } while (0)

#define MAXP 8
static MPIDI_PIP_mcoll_slot_t slots[MAXP];
static MPIDI_PIP_mcoll_peer_t peers[MAXP];
static int nranks, rounds;

static unsigned next_rand(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return *s >> 16;
}

static void jitter(unsigned *seed)
{
    unsigned r = next_rand(seed) % 64;
    if (r < 4)
        sched_yield();
    else
        for (volatile unsigned i = 0; i < r * 10; i++);
}

static void *posts_rank(void *arg)
{
    int rank = (int) (long) arg;
    unsigned seed = 7u * rank + 1;
    long mine[2];               /* the value offered, and a second one */
    MPIDI_PIP_mcoll_sync_t s = { nranks, rank, 0, peers };
    for (int r = 0; r < rounds; r++) {
        /* written only after the last meeting: nobody reads it any more */
        mine[0] = (long) r *nranks + rank;
        mine[1] = -mine[0];
        jitter(&seed);
        MPIDI_PIP_mcoll_post(&s, &mine[0], &mine[1], (uint64_t) r);
        for (int j = 0; j < nranks; j++) {
            const long *a = MPIDI_PIP_mcoll_addr(&s, j, 0), *b = MPIDI_PIP_mcoll_addr(&s, j, 1);
            jitter(&seed);
            CHECK(*a == (long) r * nranks + j);
            CHECK(*b == -((long) r * nranks + j));
            CHECK(MPIDI_PIP_mcoll_info(&s, j) == (uint64_t) r);
        }
        MPIDI_PIP_mcoll_meet(&s);
    }
    return NULL;
}

static void run_ranks(void *(*fn)(void *))
{
    pthread_t t[MAXP];
    for (int i = 0; i < nranks; i++)
        CHECK(pthread_create(&t[i], NULL, fn, (void *) (long) i) == 0);
    for (int i = 0; i < nranks; i++)
        pthread_join(t[i], NULL);
}

static void setup(int n)
{
    nranks = n;
    memset(slots, 0, sizeof(slots));
    for (int i = 0; i < n; i++) {
        peers[i].slot = &slots[i];
        peers[i].base = 0;
    }
}

static void test_posts(void)
{
    for (int n = 2; n <= MAXP; n += 3) {
        setup(n);
        rounds = 600;
        run_ranks(posts_rank);
        for (int i = 0; i < n; i++)
            CHECK(slots[i].step == 2u * rounds);
    }
}

/* Communicator A of ranks 0-2, freed; B of ranks 0 and 2 reuses their
 * slots (rank 1's stays with A and is read no more). */
static MPIDI_PIP_mcoll_peer_t peers_b[2];
static void *reuse_rank(void *arg)
{
    int rank = (int) (long) arg;
    unsigned seed = rank + 3;
    long v;
    MPIDI_PIP_mcoll_sync_t a = { 3, rank, 0, peers };
    for (int r = 0; r < 100; r++) {
        v = rank;
        MPIDI_PIP_mcoll_post(&a, &v, NULL, 0);
        jitter(&seed);
        MPIDI_PIP_mcoll_meet(&a);
    }
    if (rank == 1)
        return NULL;
    /* the new communicator's exchange: base is the slot's step now */
    int rb = rank / 2;
    peers_b[rb].base = __atomic_load_n(&slots[rank].step, __ATOMIC_RELAXED);
    __atomic_store_n(&peers_b[rb].slot, &slots[rank], __ATOMIC_RELEASE);
    /* (an exchange by messages is a barrier; here: wait for the other) */
    while (!__atomic_load_n(&peers_b[1 - rb].slot, __ATOMIC_ACQUIRE))
        sched_yield();
    MPIDI_PIP_mcoll_sync_t b = { 2, rb, 0, peers_b };
    for (int r = 0; r < 100; r++) {
        v = 1000 + r + rb;
        MPIDI_PIP_mcoll_post(&b, &v, NULL, 0);
        CHECK(*(const long *) MPIDI_PIP_mcoll_addr(&b, 1 - rb, 0) == 1000 + r + (1 - rb));
        MPIDI_PIP_mcoll_meet(&b);
    }
    return NULL;
}

static void test_reuse(void)
{
    setup(3);
    memset(peers_b, 0, sizeof(peers_b));
    run_ranks(reuse_rank);
    CHECK(slots[0].step == 400 && slots[2].step == 400 && slots[1].step == 200);
}

static uint64_t fill_want(char *stage, void *arg)
{
    long want = *(long *) arg;
    memcpy(stage, &want, sizeof(want));
    memset(stage + sizeof(want), (int) (want & 0x7f), 64);
    return 1;
}

/* Rounds of: 3 one-way steps from root r % n, then a meeting whose posted
 * address must be the peer's value of this round, and the closing one. */
static void *oneway_rank(void *arg)
{
    int rank = (int) (long) arg;
    unsigned seed = 11u * rank + 5;
    long mine;
    MPIDI_PIP_mcoll_sync_t s = { nranks, rank, 0, peers };
    for (int r = 0; r < rounds; r++) {
        int root = r % nranks;
        for (int k = 0; k < 3; k++) {
            long want = (long) r * 100 + k;
            if (rank == root) {
                MPIDI_PIP_mcoll_publish(&s, fill_want, &want);
                jitter(&seed);
            } else {
                jitter(&seed);
                const char *stage = MPIDI_PIP_mcoll_take(&s, root);
                long got;
                memcpy(&got, stage, sizeof(got));
                jitter(&seed);
                CHECK(got == want);
                for (int b = 0; b < 64; b++)
                    CHECK(stage[sizeof(long) + b] == (char) (want & 0x7f));
                CHECK(MPIDI_PIP_mcoll_take_info(&s, root) == 1);
                MPIDI_PIP_mcoll_taken(&s);
            }
        }
        mine = (long) r * nranks + rank;
        MPIDI_PIP_mcoll_post(&s, &mine, NULL, 0);
        for (int j = 0; j < nranks; j++) {
            jitter(&seed);
            CHECK(*(const long *) MPIDI_PIP_mcoll_addr(&s, j, 0) == (long) r * nranks + j);
        }
        /* as a collective ends (finish()): the posted buffers are free */
        MPIDI_PIP_mcoll_meet(&s);
    }
    /* as at a communicator's free: every peer has finished the last step */
    MPIDI_PIP_mcoll_quiesce(&s);
    return NULL;
}

static void test_oneway(void)
{
    for (int n = 2; n <= MAXP; n += 3) {
        setup(n);
        rounds = 300;
        run_ranks(oneway_rank);
        for (int i = 0; i < n; i++)
            CHECK(slots[i].step == 5u * rounds);
    }
}

static void test_parts(void)
{
    size_t counts[] = { 0, 1, 2, 3, 7, 64, 1000, 1023, 65536, 65537, 1000003 };
    for (size_t ci = 0; ci < sizeof(counts) / sizeof(counts[0]); ci++) {
        for (int size = 1; size <= 15; size++) {
            for (size_t esz = 1; esz <= 8; esz *= 2) {
                size_t count = counts[ci], min = 4096;
                int n = MPIDI_PIP_mcoll_nparts(count, esz, size, min);
                CHECK(n >= 1 && n <= size);
                CHECK(n == 1 || count * esz / n >= min);
                CHECK(count * esz < (size_t) size * min || n == size);
                size_t next = 0, smallest = (size_t) -1, largest = 0;
                for (int i = 0; i < n; i++) {
                    size_t lo, hi;
                    MPIDI_PIP_mcoll_part(count, n, i, &lo, &hi);
                    CHECK(lo == next && hi >= lo);
                    next = hi;
                    if (hi - lo < smallest)
                        smallest = hi - lo;
                    if (hi - lo > largest)
                        largest = hi - lo;
                }
                CHECK(next == count);
                CHECK(largest - smallest <= 1);
            }
        }
    }
    /* no minimum: one part per rank, at most one per element */
    CHECK(MPIDI_PIP_mcoll_nparts(3, 4, 8, 0) == 3);
    CHECK(MPIDI_PIP_mcoll_nparts(100, 4, 8, 0) == 8);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s posts|reuse|parts|oneway\n", argv[0]);
        return 2;
    }
    if (!strcmp(argv[1], "posts"))
        test_posts();
    else if (!strcmp(argv[1], "reuse"))
        test_reuse();
    else if (!strcmp(argv[1], "parts"))
        test_parts();
    else if (!strcmp(argv[1], "oneway"))
        test_oneway();
    else {
        fprintf(stderr, "unknown test %s\n", argv[1]);
        return 2;
    }
    printf("No Errors\n");
    return 0;
}
