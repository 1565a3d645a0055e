/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * MPI matching semantics through MPIDIG's queues (doc/user/matching.md;
 * run with MPIR_CVAR_CH4_CX_MATCHING=hash and =list, over shared memory and over
 * the OFI active-message path):
 *   1. all 24 posting orders of (s,t), (ANY,t), (s,ANY), (ANY,ANY): four
 *      messages from s with tag t go to the receives in posting order;
 *   2. unexpected first: tags A, B, C arrive, then (s,ANY) gets A, (ANY,C)
 *      gets C, (ANY,ANY) gets B;
 *   3. non-overtaking across tags with MPI_ANY_TAG, eager and rendezvous
 *      sizes mixed;
 *   4. cancel at the head, middle and tail of each kind of list;
 *   5. MPI_Iprobe then MPI_Recv return the same message; an mprobed message
 *      matches nothing afterwards;
 *   6. the same (source, tag) on two communicators; a freed communicator's
 *      context reused;
 *   7. tags up to MPI_TAG_UB;
 *   8. under hash matching the cx_match_posted pvar counts posted receives;
 *      with MPIR_CVAR_CH4_CX_MATCHING_LIST_MAX=0 the queues never use plain
 *      lists (no moves), with 1 to 3 they move into the tables (the
 *      orders above hold more receives than that).
 * Argument netmod-matches: the netmod matches (ch4:ucx), so 1-7 check MPI's
 * rules there and 8 does not apply.
 */
#include "mpitest.h"
#include <stdint.h>

static int rank;
static const int S = 0;         /* the sender's rank */

#define ANY_S MPI_ANY_SOURCE
#define ANY_T MPI_ANY_TAG

static int netmod_matches;

/* whether the pvars of constant-time matching must show these messages */
static int hash_matching(void)
{
    const char *m = getenv("MPIR_CVAR_CH4_CX_MATCHING");
    if (netmod_matches)
        return 0;
    return !m || !*m || !strcmp(m, "hash");
}

static void test_orders(void)
{
    const int pat[4][2] = { {S, 7}, {ANY_S, 7}, {S, ANY_T}, {ANY_S, ANY_T} };
    int perm[4] = { 0, 1, 2, 3 }, c[4] = { 0 };
    int orders = 0;
    for (int i = 0;;) {
        if (rank == 1) {
            MPI_Request r[4];
            int got[4];
            for (int k = 0; k < 4; k++)
                MPI_Irecv(&got[k], 1, MPI_INT, pat[perm[k]][0], pat[perm[k]][1], MPI_COMM_WORLD,
                          &r[k]);
            if (orders == 0 && hash_matching()) {
                long long n = mt_pvar_level("cx_match_posted");
                MT_CHECK(n >= 4, "cx_match_posted is %lld with 4 receives posted", n);
            }
            MPI_Barrier(MPI_COMM_WORLD);
            MPI_Waitall(4, r, MPI_STATUSES_IGNORE);
            for (int k = 0; k < 4; k++)
                MT_CHECK(got[k] == k, "order %d%d%d%d: receive %d got message %d", perm[0],
                         perm[1], perm[2], perm[3], k, got[k]);
        } else if (rank == 0) {
            MPI_Barrier(MPI_COMM_WORLD);        /* all four are posted */
            for (int k = 0; k < 4; k++)
                MPI_Send(&k, 1, MPI_INT, 1, 7, MPI_COMM_WORLD);
        } else {
            MPI_Barrier(MPI_COMM_WORLD);
        }
        orders++;
        while (i < 4 && c[i] >= i) {
            c[i] = 0;
            i++;
        }
        if (i >= 4)
            break;
        int j = (i % 2) ? c[i] : 0, t = perm[j];
        perm[j] = perm[i];
        perm[i] = t;
        c[i]++;
        i = 0;
    }
    MT_CHECK(orders == 24, "%d orders", orders);
}

static void test_unexpected_first(void)
{
    enum { A = 10, B = 11, C = 12 };
    if (rank == 0) {
        int v[3] = { A, B, C };
        for (int k = 0; k < 3; k++)
            MPI_Send(&v[k], 1, MPI_INT, 1, v[k], MPI_COMM_WORLD);
    } else if (rank == 1) {
        int got;
        MPI_Status st;
        MPI_Probe(S, C, MPI_COMM_WORLD, &st);   /* C arrived, so A and B did */
        MPI_Recv(&got, 1, MPI_INT, S, ANY_T, MPI_COMM_WORLD, &st);
        MT_CHECK(got == A && st.MPI_TAG == A, "(s,ANY) got %d", got);
        MPI_Recv(&got, 1, MPI_INT, ANY_S, C, MPI_COMM_WORLD, &st);
        MT_CHECK(got == C, "(ANY,C) got %d", got);
        MPI_Recv(&got, 1, MPI_INT, ANY_S, ANY_T, MPI_COMM_WORLD, &st);
        MT_CHECK(got == B && st.MPI_TAG == B, "(ANY,ANY) got %d", got);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void test_non_overtaking(void)
{
    enum { N = 24, BIG = 1 << 18 };
    char *buf = malloc(BIG);
    if (rank == 0) {
        for (int k = 0; k < N; k++) {
            int len = (k % 3 == 1) ? BIG : 64;  /* rendezvous between eager ones */
            memset(buf, 0, (size_t) len);
            memcpy(buf, &k, sizeof(k));
            MPI_Send(buf, len, MPI_BYTE, 1, 100 + (k * 7) % 5, MPI_COMM_WORLD);
        }
    } else if (rank == 1) {
        for (int k = 0; k < N; k++) {
            int seq = -1;
            MPI_Status st;
            MPI_Recv(buf, BIG, MPI_BYTE, S, ANY_T, MPI_COMM_WORLD, &st);
            memcpy(&seq, buf, sizeof(seq));
            MT_CHECK(seq == k && st.MPI_TAG == 100 + (k * 7) % 5,
                     "ANY_TAG receive %d got message %d (tag %d)", k, seq, st.MPI_TAG);
        }
    }
    free(buf);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void test_cancel(void)
{
    const int pat[4][2] = { {S, 20}, {ANY_S, 20}, {S, ANY_T}, {ANY_S, ANY_T} };
    for (int p = 0; p < 4; p++) {
        for (int victim = 0; victim < 3; victim++) {
            if (rank == 1) {
                MPI_Request r[3];
                int got[3] = { -1, -1, -1 };
                for (int k = 0; k < 3; k++)
                    MPI_Irecv(&got[k], 1, MPI_INT, pat[p][0], pat[p][1], MPI_COMM_WORLD, &r[k]);
                MPI_Cancel(&r[victim]);
                MPI_Status st;
                int cancelled = 0;
                MPI_Wait(&r[victim], &st);
                MPI_Test_cancelled(&st, &cancelled);
                MT_CHECK(cancelled, "pattern %d: receive %d not cancelled", p, victim);
                MPI_Barrier(MPI_COMM_WORLD);
                int expect = 0;
                for (int k = 0; k < 3; k++) {
                    if (k == victim)
                        continue;
                    MPI_Wait(&r[k], MPI_STATUS_IGNORE);
                    MT_CHECK(got[k] == expect, "pattern %d, cancelled %d: receive %d got %d",
                             p, victim, k, got[k]);
                    expect++;
                }
            } else if (rank == 0) {
                MPI_Barrier(MPI_COMM_WORLD);
                for (int k = 0; k < 2; k++)
                    MPI_Send(&k, 1, MPI_INT, 1, 20, MPI_COMM_WORLD);
            } else {
                MPI_Barrier(MPI_COMM_WORLD);
            }
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void test_probe(void)
{
    if (rank == 0) {
        for (int t = 30; t < 34; t++)
            MPI_Send(&t, 1, MPI_INT, 1, t, MPI_COMM_WORLD);
        int last = 99;
        MPI_Send(&last, 1, MPI_INT, 1, 99, MPI_COMM_WORLD);
    } else if (rank == 1) {
        MPI_Status st;
        int flag = 0, got;
        MPI_Probe(S, 99, MPI_COMM_WORLD, &st);  /* everything arrived */
        for (int k = 0; k < 2; k++) {
            MPI_Iprobe(ANY_S, ANY_T, MPI_COMM_WORLD, &flag, &st);
            MT_CHECK(flag && st.MPI_TAG == 30 + k, "iprobe %d saw tag %d", k, st.MPI_TAG);
            MPI_Recv(&got, 1, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st);
            MT_CHECK(got == 30 + k, "receive after iprobe %d got %d", k, got);
        }
        MPI_Message msg;
        MPI_Mprobe(S, ANY_T, MPI_COMM_WORLD, &msg, &st);
        MT_CHECK(st.MPI_TAG == 32, "mprobe saw tag %d", st.MPI_TAG);
        MPI_Iprobe(ANY_S, 32, MPI_COMM_WORLD, &flag, &st);
        MT_CHECK(!flag, "the mprobed message is still visible to iprobe");
        MPI_Iprobe(ANY_S, ANY_T, MPI_COMM_WORLD, &flag, &st);
        MT_CHECK(flag && st.MPI_TAG == 33, "next message: tag %d", st.MPI_TAG);
        MPI_Mrecv(&got, 1, MPI_INT, &msg, &st);
        MT_CHECK(got == 32, "mrecv got %d", got);
        MPI_Recv(&got, 1, MPI_INT, S, 33, MPI_COMM_WORLD, &st);
        MPI_Recv(&got, 1, MPI_INT, S, 99, MPI_COMM_WORLD, &st);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void test_comms(void)
{
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    if (rank == 0) {
        int a = 1, b = 2;
        MPI_Send(&a, 1, MPI_INT, 1, 40, dup);
        MPI_Send(&b, 1, MPI_INT, 1, 40, MPI_COMM_WORLD);
    } else if (rank == 1) {
        int got;
        MPI_Recv(&got, 1, MPI_INT, ANY_S, 40, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MT_CHECK(got == 2, "world receive got the dup's message %d", got);
        MPI_Recv(&got, 1, MPI_INT, ANY_S, ANY_T, dup, MPI_STATUS_IGNORE);
        MT_CHECK(got == 1, "dup receive got %d", got);
    }
    /* a receive left posted (then cancelled) on a communicator that is freed;
     * the next communicators reuse contexts */
    if (rank == 1) {
        MPI_Request r;
        int x;
        MPI_Irecv(&x, 1, MPI_INT, ANY_S, ANY_T, dup, &r);
        MPI_Cancel(&r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    MPI_Comm_free(&dup);
    for (int round = 0; round < 4; round++) {
        MPI_Comm c;
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        if (rank == 0) {
            MPI_Send(&round, 1, MPI_INT, 1, 41, c);
        } else if (rank == 1) {
            int got = -1;
            MPI_Recv(&got, 1, MPI_INT, ANY_S, ANY_T, c, MPI_STATUS_IGNORE);
            MT_CHECK(got == round, "reused context, round %d: got %d", round, got);
        }
        MPI_Comm_free(&c);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void test_tag_ub(void)
{
    int *ub, flag;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
    MT_CHECK(flag && *ub >= 32767, "MPI_TAG_UB");
    int top = *ub;
    if (rank == 0) {
        int tags[3] = { top, top - 1, 0 };
        for (int k = 0; k < 3; k++)
            MPI_Send(&tags[k], 1, MPI_INT, 1, tags[k], MPI_COMM_WORLD);
    } else if (rank == 1) {
        int got;
        MPI_Status st;
        MPI_Recv(&got, 1, MPI_INT, S, top - 1, MPI_COMM_WORLD, &st);
        MT_CHECK(got == top - 1, "tag ub-1 got %d", got);
        MPI_Recv(&got, 1, MPI_INT, ANY_S, ANY_T, MPI_COMM_WORLD, &st);
        MT_CHECK(got == top && st.MPI_TAG == top, "tag ub: got %d tag %d", got, st.MPI_TAG);
        MPI_Recv(&got, 1, MPI_INT, S, 0, MPI_COMM_WORLD, &st);
        MT_CHECK(got == 0, "tag 0 got %d", got);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    netmod_matches = argc > 1 && !strcmp(argv[1], "netmod-matches");
    test_orders();
    test_unexpected_first();
    test_non_overtaking();
    test_cancel();
    test_probe();
    test_comms();
    test_tag_ub();
    if (rank == 1 && hash_matching()) {
        long long p = mt_pvar_level("cx_match_posted"), u = mt_pvar_level("cx_match_unexpected");
        long long e = mt_pvar_level("cx_match_entries");
        printf("# hash matching at the end: %lld posted, %lld unexpected, %lld entries, "
               "longest chain %lld\n", p, u, e, mt_pvar_level("cx_match_max_chain"));
        MT_CHECK(p == 0 && u == 0 && e == 0, "queues not empty at the end: %lld %lld %lld", p, u,
                 e);
        const char *lm = getenv("MPIR_CVAR_CH4_CX_MATCHING_LIST_MAX");
        long long moves = mt_pvar_read_class("cx_match_migrations", MPI_T_PVAR_CLASS_COUNTER);
        printf("# MPIR_CVAR_CH4_CX_MATCHING_LIST_MAX=%s: %lld moves to the tables\n",
               lm ? lm : "(default)", moves);
        if (lm && atoi(lm) == 0)
            MT_CHECK(moves == 0, "%lld moves with the tables always in use", moves);
        if (lm && atoi(lm) >= 1 && atoi(lm) <= 3)
            MT_CHECK(moves > 0, "no move to the tables with list max %s", lm);
    }
    return mt_finish();
}
