/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * memcpy_saturation: the N_saturate of CAB-MPI's throughput-aware stealing
 * (MPIR_CVAR_CH4_CX_STEAL_NSATURATE) for this machine.  No MPI.  Threads
 * pinned to cores copy 64 KiB pieces (1000 per thread, through 32 MiB
 * buffers first touched on NUMA node 0, so the copies stream from memory,
 * not a cache): L copiers on node 0 and R on node 1, aggregate GB/s.
 * N_saturate is the smallest L at which one more copier, remote where there
 * is a second node, adds less than 5%.  doc/user/cab-stealing.md.
 */
#define _GNU_SOURCE
#include <hwloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PIECE (64 * 1024)
#define PIECES 1000
#define BUF (32L << 20)

typedef struct {
    hwloc_topology_t topo;
    hwloc_obj_t core;
    char *src, *dst;
    pthread_barrier_t *start;
    double seconds;
} copier_t;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void *copier(void *arg)
{
    copier_t *c = arg;
    hwloc_set_cpubind(c->topo, c->core->cpuset, HWLOC_CPUBIND_THREAD);
    pthread_barrier_wait(c->start);
    double t = now();
    for (long i = 0, off = 0; i < PIECES; i++, off = (off + PIECE) % BUF)
        memcpy(c->dst + off, c->src + off, PIECE);
    c->seconds = now() - t;
    return NULL;
}

/* GB/s of nl copiers on node 0's cores and nr on node 1's. */
static double run(hwloc_topology_t topo, hwloc_obj_t * cores0, int nl, hwloc_obj_t * cores1,
                  int nr, char **bufs)
{
    int n = nl + nr;
    pthread_t th[256];
    copier_t c[256];
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, (unsigned) n);
    for (int i = 0; i < n; i++) {
        c[i] = (copier_t) {
        topo, i < nl ? cores0[i] : cores1[i - nl], bufs[2 * i], bufs[2 * i + 1], &start, 0};
        pthread_create(&th[i], NULL, copier, &c[i]);
    }
    double longest = 0;
    for (int i = 0; i < n; i++) {
        pthread_join(th[i], NULL);
        if (c[i].seconds > longest)
            longest = c[i].seconds;
    }
    pthread_barrier_destroy(&start);
    return (double) n *PIECES * PIECE / longest / 1e9;
}

int main(void)
{
    hwloc_topology_t topo;
    hwloc_topology_init(&topo);
    hwloc_topology_load(topo);
    int nnodes = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
    hwloc_obj_t cores0[128], cores1[128];
    int n0 = 0, n1 = 0;
    for (int i = 0; i < hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE); i++) {
        hwloc_obj_t core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, (unsigned) i);
        hwloc_obj_t node = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, 0);
        int on0 = nnodes < 2 || hwloc_bitmap_intersects(core->cpuset, node->cpuset);
        if (on0 && n0 < 128)
            cores0[n0++] = core;
        else if (!on0 && n1 < 128) {
            hwloc_obj_t node1 = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, 1);
            if (hwloc_bitmap_intersects(core->cpuset, node1->cpuset))
                cores1[n1++] = core;
        }
    }
    int total = n0 + (n1 ? 1 : 0);
    char **bufs = malloc(2 * (size_t) total * sizeof(char *));
    /* first touch from node 0: every copier reads and writes node 0's memory */
    hwloc_set_cpubind(topo, cores0[0]->cpuset, HWLOC_CPUBIND_THREAD);
    for (int i = 0; i < 2 * total; i++) {
        bufs[i] = malloc(BUF);
        memset(bufs[i], i, BUF);
    }
    printf("# memcpy_saturation: %d NUMA node(s), %d cores on node 0, %d on node 1\n",
           nnodes, n0, n1);
    printf("# %d pieces of %d bytes per copier; local,remote,GB/s\n", PIECES, PIECE);
    int nsat = n0;
    for (int l = 1; l <= n0; l++) {
        double bw = run(topo, cores0, l, cores1, 0, bufs);
        printf("%d,0,%.2f\n", l, bw);
        double more;
        if (n1) {
            more = run(topo, cores0, l, cores1, 1, bufs);
            printf("%d,1,%.2f\n", l, more);
        } else
            more = l < n0 ? run(topo, cores0, l + 1, cores1, 0, bufs) : 0;
        if (nsat == n0 && (n1 || l < n0) && more < bw * 1.05)
            nsat = l;
    }
    printf("N_saturate: %d (MPIR_CVAR_CH4_CX_STEAL_NSATURATE=%d)\n", nsat, nsat);
    if (nnodes < 2)
        printf("# one NUMA node: no remote copier to try; remote stealing never happens here\n");
    for (int i = 0; i < 2 * total; i++)
        free(bufs[i]);
    free(bufs);
    hwloc_topology_destroy(topo);
    return 0;
}
