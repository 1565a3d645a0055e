/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * MPI's built-in pair types (MPI_DOUBLE_INT, MPI_SHORT_INT, ...) in messages
 * large enough for the single-copy (IPC) path: point-to-point and
 * MPI_MINLOC/MPI_MAXLOC reductions, whose collective traffic goes through the
 * same send path. The pair types have no type contents, which the IPC send path
 * once dereferenced (MPICH's coll12 and opminloc crashed on 4 processes).
 */
#include "mpitest.h"

#define MAXCOUNT (1 << 16)

struct di {
    double v;
    int i;
};
struct si {
    short v;
    int i;
};
struct ldi {
    long double v;
    int i;
};

/* value of element k on rank r, chosen so that ranks differ and tie often */
static int val(int r, int k)
{
    return (r * 7 + k * 3) % 11;
}

#define CHECK_PAIR_TYPE(T, MPIT, name) \
    do { \
        T *in = malloc(sizeof(T) * MAXCOUNT), *out = malloc(sizeof(T) * MAXCOUNT); \
        for (int count = 1; count <= MAXCOUNT; count *= 16) { \
            for (int k = 0; k < count; k++) { \
                in[k].v = val(rank, k); \
                in[k].i = rank; \
            } \
            /* point-to-point: ring */ \
            MPI_Sendrecv(in, count, MPIT, (rank + 1) % size, 0, out, count, MPIT, \
                         (rank + size - 1) % size, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); \
            int from = (rank + size - 1) % size; \
            for (int k = 0; k < count; k++) \
                if (out[k].v != val(from, k) || out[k].i != from) { \
                    MT_CHECK(0, "%s count %d element %d from %d: %g %d", name, count, k, from, \
                             (double) out[k].v, out[k].i); \
                    break; \
                } \
            for (int op = 0; op < 2; op++) { \
                MPI_Allreduce(in, out, count, MPIT, op ? MPI_MAXLOC : MPI_MINLOC, MPI_COMM_WORLD); \
                for (int k = 0; k < count; k++) { \
                    int best = 0; \
                    for (int r = 1; r < size; r++) \
                        if (op ? val(r, k) > val(best, k) : val(r, k) < val(best, k)) \
                            best = r; \
                    if (out[k].v != val(best, k) || out[k].i != best) { \
                        MT_CHECK(0, "%s %s count %d element %d: %g at %d, expected %d at %d", name, \
                                 op ? "MAXLOC" : "MINLOC", count, k, (double) out[k].v, out[k].i, \
                                 val(best, k), best); \
                        break; \
                    } \
                } \
            } \
        } \
        free(in); \
        free(out); \
    } while (0)

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    CHECK_PAIR_TYPE(struct di, MPI_DOUBLE_INT, "MPI_DOUBLE_INT");
    CHECK_PAIR_TYPE(struct si, MPI_SHORT_INT, "MPI_SHORT_INT");
    CHECK_PAIR_TYPE(struct ldi, MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT");

    return mt_finish();
}
