/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * Helpers for MPICH-CX's MPI test programs. A test prints "No Errors" on rank
 * 0 and exits 0 when every check held (MPICH's test-suite convention).
 */
#ifndef MPITEST_H_INCLUDED
#define MPITEST_H_INCLUDED

#ifndef _GNU_SOURCE
#define _GNU_SOURCE     /* sched_getaffinity, CPU_COUNT; this header comes first */
#endif
#include <mpi.h>
#include <sched.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Atomic int mt_errors;   /* threads report errors too */

#define MT_CHECK(cond, ...) \
    do { \
        if (!(cond)) { \
            int r_; \
            MPI_Comm_rank(MPI_COMM_WORLD, &r_); \
            fprintf(stderr, "[rank %d] %s:%d: check failed: %s: ", r_, __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__); \
            fprintf(stderr, "\n"); \
            mt_errors++; \
        } \
    } while (0)

/* Current value of an unsigned long long MPI_T pvar of class `klass`, or -1
 * when the library has no such pvar.  MPI_T stays initialized: MPICH drops
 * the pvars registered at MPI_Init when the last MPI_T_finalize runs. */
static inline long long mt_pvar_read_class(const char *name, int klass)
{
    static int t_initialized;
    int provided, idx;
    long long result = -1;
    if (!t_initialized++)
        MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided);
    if (MPI_T_pvar_get_index(name, klass, &idx) == MPI_SUCCESS) {
        MPI_T_pvar_session session;
        MPI_T_pvar_handle handle;
        int count;
        unsigned long long value = 0;
        MPI_T_pvar_session_create(&session);
        MPI_T_pvar_handle_alloc(session, idx, NULL, &handle, &count);
        if (MPI_T_pvar_read(session, handle, &value) == MPI_SUCCESS)
            result = (long long) value;
        MPI_T_pvar_handle_free(session, &handle);
        MPI_T_pvar_session_free(&session);
    }
    return result;
}

static inline long long mt_pvar_read(const char *name)
{
    return mt_pvar_read_class(name, MPI_T_PVAR_CLASS_COUNTER);
}

static inline long long mt_pvar_level(const char *name)
{
    return mt_pvar_read_class(name, MPI_T_PVAR_CLASS_LEVEL);
}

/* The model this run selected (MPIR_CVAR_CH4_MT_MODEL), "direct" when unset. */
static inline const char *mt_model(void)
{
    const char *m = getenv("MPIR_CVAR_CH4_MT_MODEL");
    return m && *m ? m : "direct";
}

/* Under lockq with try-locks failed on purpose, the queue must have been
 * used: the cx_ops_enqueued pvar shows it (and that the pvar works). */
static inline void mt_check_lockq_queued(void)
{
    const char *force = getenv("MPIR_CVAR_CH4_CX_FORCE_TRYLOCK_FAIL");
    if (!strcmp(mt_model(), "lockq") && force && atoi(force) > 0) {
        long long n = mt_pvar_read("cx_ops_enqueued");
        MT_CHECK(n > 0, "lockq with forced try-lock failures queued %lld operations", n);
    }
}

/* The CPUs this process may run on. */
static inline int mt_cpus(void)
{
    cpu_set_t set;
    int n = (int) sysconf(_SC_NPROCESSORS_ONLN);
    if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) < n)
        n = CPU_COUNT(&set);
    return n > 0 ? n : 1;
}

/* How many blocked threads MPIR_CVAR_CH4_CX_WAIT=auto lets poll before the
 * others sleep: two per core of the rank, its share of the node's at most
 * (cx_crowd_limit). */
static inline int mt_auto_limit(void)
{
    int size, node = (int) sysconf(_SC_NPROCESSORS_ONLN), cores = mt_cpus();
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (node / size < cores)
        cores = node / size;
    return 2 * (cores > 0 ? cores : 1);
}

/* Sum the errors of all ranks; rank 0 reports. Returns the exit status. */
static inline int mt_finish(void)
{
    int total = 0, rank, mine = mt_errors;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Reduce(&mine, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        if (total)
            printf("Found %d errors\n", total);
        else
            printf("No Errors\n");
    }
    MPI_Finalize();
    return total ? 1 : 0;
}

#endif /* MPITEST_H_INCLUDED */
