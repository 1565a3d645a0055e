/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * MPICH-CX: whether ranks waiting in MPI give their core away (sched_yield)
 * because the node's ranks outnumber the cores they may run on.
 * Design: doc/design/rank-yield.md.
 */
#ifndef CX_OVERSUB_H_INCLUDED
#define CX_OVERSUB_H_INCLUDED

#include <sched.h>
#include <stdbool.h>
#include <strings.h>
#include <unistd.h>

enum { CX_OVERSUB_AUTO, CX_OVERSUB_ALWAYS, CX_OVERSUB_NEVER };
#define CX_OVERSUB_MODES "auto, always, never"

/* A mode's name (case-insensitive), or -1. */
static inline int cx_oversub_parse(const char *name)
{
    static const char *const names[] = { "auto", "always", "never" };
    for (int i = 0; i < 3; i++)
        if (!strcasecmp(name, names[i]))
            return i;
    return -1;
}

/* The CPUs the calling thread may run on (its affinity mask), at least 1. */
static inline int cx_affinity_cpus(void)
{
    cpu_set_t set;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    int n = online > 0 ? (int) online : 1;
    if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0 && CPU_COUNT(&set) < n)
        n = CPU_COUNT(&set);
    return n;
}

/* auto: yield when the node's ranks are more than the CPUs a rank may use
 * (ranks bound to disjoint cores each see one, and never yield). */
static inline bool cx_oversub_yields(int mode, int local_ranks, int cpus)
{
    if (mode == CX_OVERSUB_ALWAYS)
        return true;
    if (mode == CX_OVERSUB_NEVER)
        return false;
    return local_ranks > (cpus > 0 ? cpus : 1);
}

#endif /* CX_OVERSUB_H_INCLUDED */
