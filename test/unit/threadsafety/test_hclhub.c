/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * HCLHub with MPICH_CX_FAKE_NUMA_NODES=2 (set here, so the cohort logic
 * runs on a one-node machine): mutual exclusion with acquire, acquire_low and
 * tryacquire mixed; two locks held at once; the cohort hand-off order and
 * counts in a scripted scenario; local vs global hand-offs under load.
 * Also the topology module, faked and real.
 *
 *     test_hclhub mutex|nested|cohort|handoff|topology_fake|topology_real
 */
#include "test_common.h"
#include "cx_hclhub.h"

static void hclhub_acquire(void *l)
{
    cx_hclhub_acquire(l);
}

static void hclhub_acquire_low(void *l)
{
    cx_hclhub_acquire_low(l);
}

static void hclhub_release(void *l)
{
    cx_hclhub_release(l);
}

static bool hclhub_try(void *l)
{
    return cx_hclhub_tryacquire(l);
}

static const t_lock_ops_t hclhub_ops = {
    "hclhub", hclhub_acquire, hclhub_release, hclhub_try, hclhub_acquire_low, NULL
};

static cx_hclhub_lock_t L[2];

static uintptr_t clh_tail(cx_clh_lock_t * c)
{
    return (uintptr_t) atomic_load(&c->tail);
}

/* ---- scripted cohort scenario ---- */

#define KMAX 5  /* threads per node in the scripted scenario */

typedef struct {
    atomic_int node;            /* -1 until the thread asked for its node */
    atomic_int go;
} cohort_thread_t;

static cohort_thread_t CT[2 * KMAX];
static atomic_int cohort_pos;
static int cohort_order[2 * KMAX];

static void *cohort_thread(void *p)
{
    t_thread_t *t = p;
    cohort_thread_t *c = &CT[t->id];
    atomic_store(&c->node, MPIR_CX_numa_node_self());
    WAIT_UNTIL(atomic_load(&c->go) != 0);
    cx_hclhub_acquire(&L[0]);
    cohort_order[atomic_fetch_add(&cohort_pos, 1)] = t->id;
    cx_hclhub_release(&L[0]);
    return NULL;
}

/* Both nodes contend, k threads each. Main holds bias. x0 (node 0) becomes
 * the candidate and takes global; y0 (node 1) takes local[1] and spins on
 * global; x1..x(k-1) queue on local[0], then y1..y(k-1) on local[1]. After
 * main releases, node 0 keeps global while it has local waiters: x0..x(k-1)
 * (k-1 local hand-offs); the last x releases global, y0 takes it and passes
 * it down: y0..y(k-1). So 2(k-1) local hand-offs against 2 global
 * acquisitions, in exactly that order. */
static void cohort_round(int k, int r)
{
    cx_hclhub_lock_t *l = &L[0];
    t_thread_t th[2 * KMAX];
    int x[2 * KMAX], y[2 * KMAX], nx = 0, ny = 0;
    unsigned long local0 = atomic_load(&l->local_handoffs);
    unsigned long global0 = atomic_load(&l->global_acquires);
    uintptr_t before;

    atomic_store(&cohort_pos, 0);
    /* threads get fake nodes 1, 0, 1, 0, ... in the order they ask */
    for (int i = 0; i < 2 * k; i++) {
        atomic_store(&CT[i].node, -1);
        atomic_store(&CT[i].go, 0);
        t_start(&th[i], i, cohort_thread, NULL);
        WAIT_UNTIL(atomic_load(&CT[i].node) >= 0);
        if (atomic_load(&CT[i].node) == 0)
            x[nx++] = i;
        else
            y[ny++] = i;
    }
    CHECK(nx == k && ny == k, "fake NUMA nodes not assigned alternately (%d/%d)", nx, ny);

    cx_hclhub_acquire(l);
    atomic_store(&CT[x[0]].go, 1);
    WAIT_UNTIL(atomic_load(&l->filter) == 1);
    before = clh_tail(&l->local[1]);
    atomic_store(&CT[y[0]].go, 1);
    WAIT_UNTIL(clh_tail(&l->local[1]) != before);
    for (int i = 1; i < k; i++) {
        before = clh_tail(&l->local[0]);
        atomic_store(&CT[x[i]].go, 1);
        WAIT_UNTIL(clh_tail(&l->local[0]) != before);
    }
    for (int i = 1; i < k; i++) {
        before = clh_tail(&l->local[1]);
        atomic_store(&CT[y[i]].go, 1);
        WAIT_UNTIL(clh_tail(&l->local[1]) != before);
    }
    cx_hclhub_release(l);
    for (int i = 0; i < 2 * k; i++)
        t_join(&th[i]);

    for (int i = 0; i < 2 * k; i++) {
        int expect = i < k ? x[i] : y[i - k];
        CHECK(cohort_order[i] == expect, "k=%d round %d: position %d served thread %d (node %d), "
              "expected %d", k, r, i, cohort_order[i], atomic_load(&CT[cohort_order[i]].node),
              expect);
    }
    unsigned long nlocal = atomic_load(&l->local_handoffs) - local0;
    unsigned long nglobal = atomic_load(&l->global_acquires) - global0;
    CHECK(nlocal == 2 * (unsigned long) (k - 1) && nglobal == 2, "k=%d round %d: %lu local "
          "hand-offs, %lu global acquires (expected %d and 2)", k, r, nlocal, nglobal, 2 * (k - 1));
}

static void cohort_test(int rounds)
{
    for (int k = 1; k <= KMAX; k++)
        for (int r = 0; r < rounds; r++)
            cohort_round(k, r);
    printf("hclhub cohort: k = 1..%d threads per node x %d rounds: node 0 drained before node 1, "
           "2(k-1) local hand-offs, 2 global acquisitions: ok\n", KMAX, rounds);
}

/* ---- hand-offs under load ---- */

typedef struct {
    t_cs_t cs;
    atomic_int stop;
    atomic_long acq;
    int node_count[2];
    pthread_mutex_t m;
} handoff_t;

static handoff_t H;

/* Critical-section length (relax iterations, ~2us): long enough that the
 * other threads of the node are queued by the time the holder releases.
 * With an empty CS, two running threads on a 2-core machine ping-pong and
 * the descheduled ones are not queued, which is not "both nodes contend". */
#define CS_SPIN 200

static void *handoff_thread(void *p)
{
    (void) p;
    int node = MPIR_CX_numa_node_self();
    long n = 0;
    pthread_mutex_lock(&H.m);
    H.node_count[node]++;
    pthread_mutex_unlock(&H.m);
    /* The cohort lock alone (fifo_high of HCLHub): through the full lock,
     * bias monopolisation keeps most acquisitions off the cohort path. */
    while (!atomic_load_explicit(&H.stop, memory_order_relaxed)) {
        cx_hclhub__cohort_acquire(&L[1]);
        t_cs_enter(&H.cs);
        cx_spin_wait(CS_SPIN);
        t_cs_exit(&H.cs);
        cx_hclhub__cohort_release(&L[1]);
        n++;
    }
    atomic_fetch_add(&H.acq, n);
    return NULL;
}

/* Threads on both fake nodes hammer the cohort lock: mutual exclusion, and
 * every acquisition is counted once, as a local hand-off or a global
 * acquisition. The ratio is printed, not asserted: how often a node's queue
 * runs dry depends on scheduling (the scripted test above asserts the
 * hand-off rules exactly). */
static void handoff_test(int nthreads)
{
    t_thread_t th[32];
    cx_hclhub_lock_t *l = &L[1];
    memset(&H, 0, sizeof(H));
    pthread_mutex_init(&H.m, NULL);
    unsigned long local0 = atomic_load(&l->local_handoffs);
    unsigned long global0 = atomic_load(&l->global_acquires);
    for (int i = 0; i < nthreads; i++)
        t_start(&th[i], i, handoff_thread, NULL);
    t_sleep_ms(300);
    atomic_store(&H.stop, 1);
    for (int i = 0; i < nthreads; i++)
        t_join(&th[i]);
    unsigned long nlocal = atomic_load(&l->local_handoffs) - local0;
    unsigned long nglobal = atomic_load(&l->global_acquires) - global0;
    CHECK(H.cs.counter == atomic_load(&H.acq), "counter %ld, expected %ld", H.cs.counter,
          atomic_load(&H.acq));
    CHECK(H.node_count[0] > 0 && H.node_count[1] > 0, "threads not spread over both nodes");
    /* every cohort acquisition either inherited global or took it */
    CHECK(nlocal + nglobal == (unsigned long) atomic_load(&H.acq), "%lu local hand-offs + %lu "
          "global acquires != %ld acquisitions", nlocal, nglobal, atomic_load(&H.acq));
    printf("hclhub handoff: %d threads: %ld cohort acquisitions: %lu local hand-offs, %lu global "
           "acquires: ok\n", nthreads, atomic_load(&H.acq), nlocal, nglobal);
    pthread_mutex_destroy(&H.m);
}

/* ---- topology ---- */

static atomic_int topo_node;

static void *topo_thread(void *p)
{
    (void) p;
    int n = MPIR_CX_numa_node_self();
    CHECK(n == MPIR_CX_numa_node_self(), "node of a thread changed");
    atomic_store(&topo_node, n);
    return NULL;
}

static void topology_fake_test(void)
{
    setenv("MPICH_CX_FAKE_NUMA_NODES", "3", 1);
    CHECK(MPIR_CX_topology_init() == 3, "fake: init returned %d", MPIR_CX_topology_init());
    CHECK(MPIR_CX_topology_num_numa_nodes() == 3, "fake: count");
    CHECK(MPIR_CX_numa_node_self() == 0, "fake: first thread on node %d", MPIR_CX_numa_node_self());
    for (int i = 1; i <= 7; i++) {
        t_thread_t th;
        t_start(&th, i, topo_thread, NULL);
        t_join(&th);
        CHECK(atomic_load(&topo_node) == i % 3, "fake: thread %d on node %d", i,
              atomic_load(&topo_node));
    }
    printf("topology fake: 3 nodes, threads round-robin: ok\n");
}

static void topology_real_test(void)
{
    unsetenv("MPICH_CX_FAKE_NUMA_NODES");
    int n = MPIR_CX_topology_init();
    CHECK(n >= 1, "init returned %d", n);
    CHECK(MPIR_CX_topology_init() == n &&
          MPIR_CX_topology_num_numa_nodes() == n, "count not stable");
    for (int i = 0; i < 4; i++) {
        t_thread_t th;
        t_start(&th, i, topo_thread, NULL);
        t_join(&th);
        CHECK(atomic_load(&topo_node) >= 0 && atomic_load(&topo_node) < n, "node %d out of range",
              atomic_load(&topo_node));
    }
    printf("topology real: %d NUMA node(s): ok\n", n);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s mutex|nested|cohort|handoff|topology_fake|topology_real\n",
                argv[0]);
        return 2;
    }
    if (!strcmp(argv[1], "topology_fake")) {
        topology_fake_test();
        return 0;
    }
    if (!strcmp(argv[1], "topology_real")) {
        topology_real_test();
        return 0;
    }

    setenv("MPICH_CX_FAKE_NUMA_NODES", "2", 1);
    CHECK(MPIR_CX_topology_init() == 2, "fake NUMA count not honoured");
    CHECK(MPIR_CX_numa_node_self() == 0, "main thread not on fake node 0");
    CHECK(cx_hclhub_init(&L[0], 2) == 0 && cx_hclhub_init(&L[1], 0) == 0, "cx_hclhub_init");
    CHECK(L[1].num_nodes == 2, "init with 0 nodes did not use the topology");
    if (!strcmp(argv[1], "mutex")) {
        static const int nt[] = { 2, 4, 16 };
        for (int i = 0; i < 3; i++) {
            t_mutex_test(&hclhub_ops, &L[0], nt[i], 200000 / nt[i], false);
            t_mutex_test(&hclhub_ops, &L[0], nt[i], 200000 / nt[i], true);
        }
    } else if (!strcmp(argv[1], "nested")) {
        t_nested_test(&hclhub_ops, &L[0], &L[1], 2, 100000, true);
        t_nested_test(&hclhub_ops, &L[0], &L[1], 4, 50000, true);
        t_nested_test(&hclhub_ops, &L[0], &L[1], 16, 10000, true);
    } else if (!strcmp(argv[1], "cohort")) {
        cohort_test(T_SCALE > 1 ? 3 : 10);
    } else if (!strcmp(argv[1], "handoff")) {
        handoff_test(4);
        handoff_test(8);
    } else {
        fprintf(stderr, "unknown test %s\n", argv[1]);
        return 2;
    }
    cx_hclhub_destroy(&L[0]);
    cx_hclhub_destroy(&L[1]);
    return 0;
}
