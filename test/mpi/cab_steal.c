/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * CAB-MPI work stealing (doc/user/cab-stealing.md) under mpiexec -pip, best
 * with MPIR_CVAR_CH4_CX_STEAL_THRESHOLD=0 and tiny chunks so that every
 * copy and reduction is a task:
 *   p2p  rank 0 sends rank 1 messages of random sizes and datatypes
 *        (contiguous, vector, hindexed, struct at either end), some to
 *        MPI_ANY_SOURCE, some truncated, some posted with MPI_Isend while
 *        the sender sleeps outside MPI (only idle ranks can help then);
 *        every byte and the order are checked (a truncated receive's
 *        contents are undefined: only that nothing outside it was written).  Rank 2 waits in MPI_Recv
 *        for a message rank 0 sends halfway through (a worker whose own
 *        message arrives mid-steal), then sits in MPI_Barrier like the
 *        other ranks.
 *   acc  every rank but 0 accumulates into rank 0's window at once under
 *        fence, MPI_Accumulate and MPI_Get_accumulate with MPI_SUM on
 *        doubles: exact sums, and every get-accumulate result a snapshot
 *        (all its elements equal: no reduction interleaved with another).
 * With "expect-steals" the ranks that only waited must have stolen chunks
 * (pvar cx_steal_local_chunks; in p2p after at most 100 more messages sent
 * while the sender sleeps, for 2 cores may leave them no chance before),
 * and the owners published tasks; in acc, ranks in the closing fence must
 * have taken a task's chunks to the end as its waiter (cx_steal_waiter_runs).  A last
 * argument "post_comm_access=VALUE" sets that info key on MPI_COMM_WORLD and
 * on the window (the order in which chunks run); "no-truncate" leaves the
 * truncated receives out (MPICH 4.0.2's OFI pack path reports them as
 * MPI_ERR_TYPE, pristine MPICH included).
 */
#include "mpitest.h"
#include <stdint.h>
#include <string.h>
#include <unistd.h>

static int rank, size;
static MPI_Info info = MPI_INFO_NULL;
static int truncate_ok = 1;     /* "no-truncate": never post a short receive */

enum { N_TYPES = 4 };
static const char *type_names[N_TYPES] = { "contig", "vector", "hindexed", "struct" };

/* A datatype of kind k holding at least n doubles; *span: doubles the
 * buffer needs; *count: elements of the type to send. */
static MPI_Datatype make_type(int k, int n, int *span, int *count)
{
    MPI_Datatype t = MPI_DOUBLE;
    int bl = 64 + n % 200;      /* block length in doubles */
    int nb = (n + bl - 1) / bl;
    *count = 1;
    switch (k) {
        case 0:
            *count = nb * bl;
            *span = nb * bl;
            return MPI_DOUBLE;
        case 1:
            MPI_Type_vector(nb, bl, bl + 3, MPI_DOUBLE, &t);
            *span = nb * (bl + 3);
            break;
        case 2:{
                int *lens = malloc(nb * sizeof(int));
                MPI_Aint *disps = malloc(nb * sizeof(MPI_Aint));
                for (int i = 0; i < nb; i++) {
                    lens[i] = bl;
                    /* blocks in reverse order, gaps of 5 doubles */
                    disps[i] = (MPI_Aint) (nb - 1 - i) * (bl + 5) * sizeof(double);
                }
                MPI_Type_create_hindexed(nb, lens, disps, MPI_DOUBLE, &t);
                *span = nb * (bl + 5);
                free(lens);
                free(disps);
                break;
            }
        case 3:{
                int lens[2] = { bl, bl };
                MPI_Aint disps[2] = { 0, (MPI_Aint) (bl + 7) * sizeof(double) };
                MPI_Datatype types[2] = { MPI_DOUBLE, MPI_DOUBLE }, s;
                MPI_Type_create_struct(2, lens, disps, types, &s);
                MPI_Type_create_resized(s, 0, (MPI_Aint) (2 * bl + 9) * sizeof(double), &t);
                MPI_Type_free(&s);
                *count = (nb + 1) / 2;
                *span = *count * (2 * bl + 9);
                break;
            }
    }
    MPI_Type_commit(&t);
    return t;
}

/* Pack/unpack through MPI itself to find the values each layout holds. */
static void fill_values(double *buf, int span, MPI_Datatype t, int count, int seq)
{
    int n;
    MPI_Type_size(t, &n);
    n = n / (int) sizeof(double) * count;
    double *vals = malloc(n * sizeof(double));
    for (int i = 0; i < n; i++)
        vals[i] = seq * 1e6 + i;
    for (int i = 0; i < span; i++)
        buf[i] = -1;
    int pos = 0;
    MPI_Unpack(vals, n * (int) sizeof(double), &pos, buf, count, t, MPI_COMM_SELF);
    free(vals);
}

/* Elements 0..got-1 of the packed message must be seq's; returns -1 or
 * the first wrong one; buffer parts outside the type must be untouched. */
static long check_values(double *buf, int span, MPI_Datatype t, int count, int seq, int got)
{
    int n, pos = 0;
    MPI_Type_size(t, &n);
    n = n / (int) sizeof(double) * count;
    double *vals = malloc(n * sizeof(double));
    MPI_Pack(buf, count, t, vals, n * (int) sizeof(double), &pos, MPI_COMM_SELF);
    long bad = -1;
    for (int i = 0; i < got && bad < 0; i++)
        if (vals[i] != seq * 1e6 + i)
            bad = i;
    /* the gaps: every double not in the type stays -1 */
    double *probe = malloc(span * sizeof(double));
    for (int i = 0; i < span; i++)
        probe[i] = 0;
    pos = 0;
    for (int i = 0; i < n; i++)
        vals[i] = 1;
    MPI_Unpack(vals, n * (int) sizeof(double), &pos, probe, count, t, MPI_COMM_SELF);
    for (int i = 0; i < span && bad < 0; i++)
        if (probe[i] == 0 && buf[i] != -1)
            bad = 1000000000L + i;
    free(probe);
    free(vals);
    return bad;
}

static unsigned rng = 12345;
static unsigned next_rand(void)
{
    rng = rng * 1103515245u + 12345u;
    return rng >> 8;
}

static void test_p2p(int iters)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    double token = 0;
    if (rank == 2)      /* waits, and steals, until rank 0's message comes */
        MPI_Recv(&token, 1, MPI_DOUBLE, 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int it = 0; it < iters && rank < 2; it++) {
        /* both ranks draw the same sequence */
        int n = 128 + (int) (next_rand() % (256 * 1024));       /* doubles: 1 KiB .. 2 MiB */
        int sk = (int) (next_rand() % N_TYPES), rk = (int) (next_rand() % N_TYPES);
        int any = next_rand() % 3 == 0, trunc = next_rand() % 8 == 0 && truncate_ok;
        int sleepy = next_rand() % 4 == 0;
        int sspan, scount, rspan, rcount;
        MPI_Datatype st = make_type(sk, n, &sspan, &scount);
        MPI_Datatype rt = make_type(rk, trunc ? n / 2 : n + 300, &rspan, &rcount);
        int ssize, rsize;
        MPI_Type_size(st, &ssize);
        MPI_Type_size(rt, &rsize);
        long long sbytes = (long long) ssize * scount, rbytes = (long long) rsize *rcount;
        if (rank == 0) {
            double *b = malloc(sspan * sizeof(double));
            fill_values(b, sspan, st, scount, it);
            if (it == iters / 2 && size > 2)
                MPI_Send(&token, 1, MPI_DOUBLE, 2, 99, MPI_COMM_WORLD);
            if (sleepy) {
                MPI_Request r;
                MPI_Isend(b, scount, st, 1, 7, MPI_COMM_WORLD, &r);
                usleep(3000);   /* outside MPI: the receiver's idle peers help */
                MPI_Wait(&r, MPI_STATUS_IGNORE);
            } else
                MPI_Send(b, scount, st, 1, 7, MPI_COMM_WORLD);
            free(b);
        } else {
            double *b = malloc(rspan * sizeof(double));
            for (int i = 0; i < rspan; i++)
                b[i] = -1;
            MPI_Status status;
            int err = MPI_Recv(b, rcount, rt, any ? MPI_ANY_SOURCE : 0, 7, MPI_COMM_WORLD,
                               &status);
            int cls = MPI_SUCCESS, got;
            MPI_Error_class(err, &cls);
            if (sbytes > rbytes) {
                MT_CHECK(cls == MPI_ERR_TRUNCATE, "iteration %d: %lld bytes into %lld: class %d",
                         it, sbytes, rbytes, cls);
                got = 0;        /* MPI leaves the contents undefined: only the gaps */
            } else {
                MT_CHECK(cls == MPI_SUCCESS, "iteration %d: error class %d", it, cls);
                MPI_Get_count(&status, MPI_BYTE, &got);
                MT_CHECK(got == sbytes, "iteration %d: received %d bytes of %lld", it, got, sbytes);
                got /= (int) sizeof(double);
            }
            MT_CHECK(status.MPI_SOURCE == 0, "iteration %d: source %d", it, status.MPI_SOURCE);
            long bad = check_values(b, rspan, rt, rcount, it, got);
            MT_CHECK(bad < 0, "iteration %d (%s %d doubles -> %s%s%s): element %ld wrong", it,
                     type_names[sk], n, type_names[rk], any ? ", any source" : "",
                     trunc ? ", truncated" : "", bad);
            free(b);
        }
        if (st != MPI_DOUBLE)
            MPI_Type_free(&st);
        if (rt != MPI_DOUBLE)
            MPI_Type_free(&rt);
    }
    MPI_Barrier(MPI_COMM_WORLD);        /* ranks 2.. wait here: workers */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* Chunks stolen by this rank since stolen0. */
static long long stolen_since(long long stolen0)
{
    return mt_pvar_read("cx_steal_local_chunks") + mt_pvar_read("cx_steal_remote_chunks") - stolen0;
}

/* p2p with expect-steals: ranks 2.. must have stolen, but with more ranks
 * than cores they may have sat out every task above (run them bound,
 * -bind-to core: unbound, the kernel may keep rank 1 and rank 2 on one
 * CPU's run queue, and rank 2 then runs only while rank 1 is not copying).
 * Give them rounds in which rank 0 sleeps outside MPI while rank 1
 * receives 2 MiB as a vector, at most 100, until one of them has stolen;
 * returns the number of rounds. */
static int rounds_until_stolen(long long stolen0)
{
    int span, count, round;
    MPI_Datatype t = make_type(1, 256 * 1024, &span, &count);
    double *b = malloc(span * sizeof(double));
    for (int i = 0; i < span; i++)
        b[i] = i;
    for (round = 0; round < 100; round++) {
        long long mine = rank >= 2 ? stolen_since(stolen0) : 0, all;
        MPI_Allreduce(&mine, &all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        if (all > 0)
            break;
        if (rank == 0) {
            MPI_Request r;
            MPI_Isend(b, count, t, 1, 8, MPI_COMM_WORLD, &r);
            usleep(20000);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        } else if (rank == 1)
            MPI_Recv(b, count, t, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Barrier(MPI_COMM_WORLD);    /* ranks 2.. wait here: workers */
    }
    MPI_Type_free(&t);
    free(b);
    return round;
}

static void test_acc(int iters)
{
    enum { N = 256 * 1024 };    /* doubles: 2 MiB */
    double *base = NULL, *orig = malloc(N * sizeof(double)), *res = malloc(N * sizeof(double));
    MPI_Win win;
    if (rank == 0) {
        base = malloc(N * sizeof(double));
        for (int i = 0; i < N; i++)
            base[i] = 0;
    }
    MPI_Win_create(base, rank == 0 ? N * sizeof(double) : 0, sizeof(double), info,
                   MPI_COMM_WORLD, &win);
    double want = 0;
    for (int it = 0; it < iters; it++) {
        int get = it & 1;
        MPI_Win_fence(0, win);
        if (rank > 0) {
            for (int i = 0; i < N; i++)
                orig[i] = rank;
            if (get) {
                MPI_Get_accumulate(orig, N, MPI_DOUBLE, res, N, MPI_DOUBLE, 0, 0, N, MPI_DOUBLE,
                                   MPI_SUM, win);
            } else
                MPI_Accumulate(orig, N, MPI_DOUBLE, 0, 0, N, MPI_DOUBLE, MPI_SUM, win);
        }
        MPI_Win_fence(0, win);  /* rank 0 waits here: a worker */
        for (int r = 1; r < size; r++)
            want += r;
        if (rank > 0 && get) {
            long bad = -1;
            for (int i = 1; i < N && bad < 0; i++)
                if (res[i] != res[0])
                    bad = i;
            MT_CHECK(bad < 0, "get-accumulate %d: element %ld is %g, element 0 %g (not atomic)",
                     it, bad, bad < 0 ? 0 : res[bad], res[0]);
        }
        if (rank == 0) {
            long bad = -1;
            for (int i = 0; i < N && bad < 0; i++)
                if (base[i] != want)
                    bad = i;
            MT_CHECK(bad < 0, "accumulate %d: element %ld is %g, not %g", it, bad,
                     bad < 0 ? 0 : base[bad], want);
        }
    }
    MPI_Win_free(&win);
    free(base);
    free(orig);
    free(res);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "p2p";
    int iters = argc > 2 ? atoi(argv[2]) : 40;
    int expect = 0;
    const char *access = NULL;
    for (int i = 3; i < argc; i++)
        if (!strcmp(argv[i], "expect-steals"))
            expect = 1;
        else if (!strcmp(argv[i], "no-truncate"))
            truncate_ok = 0;
        else if (!strncmp(argv[i], "post_comm_access=", 17))
            access = argv[i] + 17;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        printf("needs at least 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (access) {
        MPI_Info_create(&info);
        MPI_Info_set(info, "post_comm_access", access);
        MPI_Comm_set_info(MPI_COMM_WORLD, info);
    }
    long long tasks0 = mt_pvar_read("cx_steal_tasks"), runs0 = mt_pvar_read("cx_steal_waiter_runs");
    long long stolen0 = stolen_since(0);
    MT_CHECK(tasks0 >= 0 && stolen0 >= 0, "the cx_steal pvars are missing");
    if (!strcmp(mode, "p2p")) {
        test_p2p(iters);
        if (expect && size > 2) {
            int rounds = rounds_until_stolen(stolen0);
            if (rank == 0 && rounds > 0)
                printf("p2p: %d more message(s) before a rank with no message of its own stole\n",
                       rounds);
        }
    } else if (!strcmp(mode, "acc"))
        test_acc(iters);
    else {
        printf
            ("usage: %s p2p|acc [ITERATIONS [expect-steals] [no-truncate] [post_comm_access=V]]\n",
             argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long long mine[2] = { mt_pvar_read("cx_steal_tasks") - tasks0, stolen_since(stolen0) };
    /* owners: rank 1 (p2p) or ranks 1.. (acc); workers: the others, of
     * which rank 0 sends the p2p messages and ranks 2.. have none of their own */
    int p2p = !strcmp(mode, "p2p"), owner = p2p ? rank == 1 : rank > 0;
    long long owned[4] = { owner ? mine[0] : 0, owner ? 0 : mine[1],
        p2p && rank >= 2 ? mine[1] : 0, mt_pvar_read("cx_steal_waiter_runs") - runs0
    }, all[4];
    MPI_Reduce(owned, all, 4, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("%s: owners published %lld tasks, waiting ranks stole %lld chunks", mode, all[0],
               all[1]);
        if (p2p)
            printf(" (%lld by ranks with no message of their own)", all[2]);
        printf("; %lld steals ran a task to the end as its waiter\n", all[3]);
    }
    /* p2p: the ranks with no message of their own, not the blocked sender;
     * acc: also ranks in the closing fence taking chunks to the end */
    int ok = !expect || (all[0] && (p2p ? all[2] : all[1] && all[3]));
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!ok) {  /* each rank's view, for the log */
        long long v[4] = { mine[0], mine[1], mt_pvar_read("cx_steal_empty"),
            mt_pvar_read("cx_steal_denied")
        };
        long long *every = rank == 0 ? malloc(4 * size * sizeof(long long)) : NULL;
        MPI_Gather(v, 4, MPI_LONG_LONG, every, 4, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
        for (int r = 0; rank == 0 && r < size; r++)
            printf("rank %d: %lld tasks, %lld chunks stolen, %lld attempts found none, "
                   "%lld denied\n", r, every[4 * r], every[4 * r + 1], every[4 * r + 2],
                   every[4 * r + 3]);
        free(every);
        MT_CHECK(rank != 0, "expected tasks and steals");
    }
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    return mt_finish();
}
