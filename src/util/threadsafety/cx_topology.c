/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * MPICH-CX thread synchronization library: NUMA topology (see cx_topology.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE     /* sched_getcpu */
#endif

#include "cx_topology.h"
#include <hwloc.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

static pthread_once_t cx_topo_once = PTHREAD_ONCE_INIT;
static int cx_topo_num_nodes = 1;
static int cx_topo_fake;        /* MPICH_CX_FAKE_NUMA_NODES was given */
static int *cx_topo_cpu_to_node;        /* OS CPU index -> NUMA node index */
static int cx_topo_num_cpus;
static atomic_uint cx_topo_thread_seq;
static _Thread_local int cx_topo_self = -1;

/* n >= 1 from the environment, or 0 when unset or malformed */
static int cx_topo_fake_count(void)
{
    const char *s = getenv("MPICH_CX_FAKE_NUMA_NODES");
    char *end;
    long n;

    if (s == NULL || *s == '\0')
        return 0;
    n = strtol(s, &end, 10);
    if (*end != '\0' || n < 1 || n > INT_MAX)
        return 0;
    return (int) n;
}

static void cx_topo_discover(void)
{
    hwloc_topology_t topo;
    int n, last, i;

    cx_topo_num_nodes = 1;
    if (hwloc_topology_init(&topo) != 0)
        return;
    if (hwloc_topology_load(topo) != 0)
        goto out;
    n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
    last = hwloc_bitmap_last(hwloc_topology_get_complete_cpuset(topo));
    if (n < 1 || last < 0)
        goto out;
    cx_topo_cpu_to_node = calloc((size_t) last + 1, sizeof(int));
    if (cx_topo_cpu_to_node == NULL)
        goto out;
    cx_topo_num_cpus = last + 1;
    /* CPUs outside every NUMA cpuset (should not happen) map to node 0 */
    for (i = 0; i < n; i++) {
        hwloc_obj_t node = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, (unsigned) i);
        unsigned cpu;
        if (node == NULL || node->cpuset == NULL)
            continue;
        hwloc_bitmap_foreach_begin(cpu, node->cpuset) {
            if ((int) cpu < cx_topo_num_cpus)
                cx_topo_cpu_to_node[cpu] = i;
        }
        hwloc_bitmap_foreach_end();
    }
    cx_topo_num_nodes = n;
  out:
    hwloc_topology_destroy(topo);
}

static void cx_topo_init_once(void)
{
    int fake = cx_topo_fake_count();
    if (fake > 0) {
        cx_topo_fake = 1;
        cx_topo_num_nodes = fake;
        return;
    }
    cx_topo_discover();
}

int MPIR_CX_topology_init(void)
{
    pthread_once(&cx_topo_once, cx_topo_init_once);
    return cx_topo_num_nodes;
}

int MPIR_CX_topology_num_numa_nodes(void)
{
    return MPIR_CX_topology_init();
}

int MPIR_CX_numa_node_self(void)
{
    int node = cx_topo_self;
    if (node >= 0)
        return node;
    MPIR_CX_topology_init();
    if (cx_topo_fake) {
        node = (int) (atomic_fetch_add_explicit(&cx_topo_thread_seq, 1, memory_order_relaxed)
                      % (unsigned) cx_topo_num_nodes);
    } else {
        int cpu = sched_getcpu();
        node = (cpu >= 0 && cpu < cx_topo_num_cpus) ? cx_topo_cpu_to_node[cpu] : 0;
    }
    cx_topo_self = node;
    return node;
}
