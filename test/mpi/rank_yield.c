/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * Ranks that outnumber their CPUs yield in their waits
 * (MPIR_CVAR_CH4_CX_RANK_YIELD): the pvars say whether this run yields and
 * how many CPUs the node's ranks share, and a run of small allreduces and
 * barriers finishes in time; a rank that kept its core through its time
 * slices would make every step cost one (about 4 ms).
 *
 *     rank_yield EXPECT ITERS SECONDS
 *
 * EXPECT: yield (cx_rank_yield_on must be 1, and yields counted), noyield
 * (0 and none counted). ITERS allreduces of 4 floats plus ITERS barriers
 * must take at most SECONDS (0: not timed).
 */
#include "mpitest.h"
#include <stdbool.h>

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 4 || (strcmp(argv[1], "yield") && strcmp(argv[1], "noyield"))) {
        if (rank == 0)
            fprintf(stderr, "usage: %s yield|noyield ITERS SECONDS\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    bool expect = !strcmp(argv[1], "yield");
    int iters = atoi(argv[2]);
    double limit = atof(argv[3]);

    long long on = mt_pvar_level("cx_rank_yield_on");
    long long cpus = mt_pvar_level("cx_node_cpus");
    MT_CHECK(on == expect, "cx_rank_yield_on %lld, expected %d (%d ranks, %lld CPUs)", on,
             expect, size, cpus);
    MT_CHECK(cpus >= 1, "cx_node_cpus %lld", cpus);

    float in[4] = { 1, 2, 3, (float) rank }, out[4];
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        MPI_Allreduce(in, out, 4, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    double t = MPI_Wtime() - t0;
    MT_CHECK(out[0] == size && out[3] == (float) size * (size - 1) / 2, "allreduce result %g %g",
             out[0], out[3]);
    if (limit > 0)
        MT_CHECK(t <= limit, "%d allreduces and barriers took %.3f s, more than %.1f s "
                 "(%.0f us per pair)", iters, t, limit, 1e6 * t / iters);
    long long yields = mt_pvar_read("cx_rank_yields");
    long long total;
    MPI_Allreduce(&yields, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (expect)
        MT_CHECK(total > 0, "no rank yielded");
    else
        MT_CHECK(yields == 0, "%lld yields though yielding is off", yields);
    if (rank == 0)
        printf("%d ranks, %lld CPUs: %s, %.1f us per allreduce+barrier, %lld yields\n", size,
               cpus, on ? "yield" : "no yield", 1e6 * t / iters, total);
    return mt_finish();
}
