/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * lockbench: lock microbenchmark for the MPICH-CX synchronization library
 * (src/util/threadsafety), no MPI. Each thread acquires, writes a shared line,
 * releases and spins --delay D; prints throughput (Macq/s) and fairness per
 * thread count, exits 1 if mutual exclusion failed. Options and how to build it
 * alone: doc/user/benchmarks.md.
 */
#include "cx_sync_common.h"
#include "cx_ticket.h"
#include "cx_mcs.h"
#include "cx_clh.h"
#include "cx_clhub.h"
#include "cx_hclhub.h"
#include "cx_futex.h"
#include "cx_topology.h"
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_THREADS 256
#define MAX_LIST 32

typedef struct {
    const char *name;
    int (*init)(void);
    void (*acquire)(void);
    void (*release)(void);
    void (*destroy)(void);      /* NULL: nothing to free */
} lock_impl_t;

static struct {
    CX_CACHE_ALIGNED pthread_mutex_t mutex;
    cx_ticket_lock_t ticket;
    cx_futex_lock_t futex;
    cx_mcs_lock_t mcs;
    cx_clh_lock_t clh;
    cx_clhub_lock_t clhub;
    cx_hclhub_lock_t hclhub;
} locks;

static int mutex_init(void)
{
    return pthread_mutex_init(&locks.mutex, NULL);
}

static void mutex_acquire(void)
{
    pthread_mutex_lock(&locks.mutex);
}

static void mutex_release(void)
{
    pthread_mutex_unlock(&locks.mutex);
}

static int ticket_init(void)
{
    cx_ticket_init(&locks.ticket);
    return 0;
}

static void ticket_acquire(void)
{
    cx_ticket_acquire(&locks.ticket);
}

static void ticket_release(void)
{
    cx_ticket_release(&locks.ticket);
}

static int futex_init(void)
{
    cx_futex_init(&locks.futex);
    return 0;
}

static void futex_acquire(void)
{
    cx_futex_acquire(&locks.futex);
}

static void futex_release(void)
{
    cx_futex_release(&locks.futex);
}

static int mcs_init(void)
{
    cx_mcs_init(&locks.mcs);
    return 0;
}

static void mcs_acquire(void)
{
    cx_mcs_acquire(&locks.mcs);
}

static void mcs_release(void)
{
    cx_mcs_release(&locks.mcs);
}

static int clh_init(void)
{
    return cx_clh_init(&locks.clh);
}

static void clh_acquire(void)
{
    cx_clh_acquire(&locks.clh);
}

static void clh_release(void)
{
    cx_clh_release(&locks.clh);
}

static void clh_destroy(void)
{
    cx_clh_destroy(&locks.clh);
}

static int clhub_init(void)
{
    return cx_clhub_init(&locks.clhub);
}

static void clhub_acquire(void)
{
    cx_clhub_acquire(&locks.clhub);
}

static void clhub_release(void)
{
    cx_clhub_release(&locks.clhub);
}

static void clhub_destroy(void)
{
    cx_clhub_destroy(&locks.clhub);
}

static int hclhub_init(void)
{
    return cx_hclhub_init(&locks.hclhub, MPIR_CX_topology_init());
}

static void hclhub_acquire(void)
{
    cx_hclhub_acquire(&locks.hclhub);
}

static void hclhub_release(void)
{
    cx_hclhub_release(&locks.hclhub);
}

static void hclhub_destroy(void)
{
    cx_hclhub_destroy(&locks.hclhub);
}

static const lock_impl_t impls[] = {
    {"mutex", mutex_init, mutex_acquire, mutex_release, NULL},
    {"futex", futex_init, futex_acquire, futex_release, NULL},
    {"ticket", ticket_init, ticket_acquire, ticket_release, NULL},
    {"mcs", mcs_init, mcs_acquire, mcs_release, NULL},
    {"clh", clh_init, clh_acquire, clh_release, clh_destroy},
    {"clhub", clhub_init, clhub_acquire, clhub_release, clhub_destroy},
    {"hclhub", hclhub_init, hclhub_acquire, hclhub_release, hclhub_destroy},
};

/* data the critical section touches: a counter and one more shared line */
static struct {
    CX_CACHE_ALIGNED long counter;
    CX_CACHE_ALIGNED long line[CX_CACHELINE_SIZE / sizeof(long)];
} shared;

typedef struct {
    CX_CACHE_ALIGNED long acquisitions; /* own line: no false sharing */
} per_thread_t;

static per_thread_t per_thread[MAX_THREADS];
static const lock_impl_t *impl;
static atomic_int stop;
static unsigned delay = 20;
static pthread_barrier_t start_barrier;

static void *worker(void *arg)
{
    per_thread_t *me = arg;
    long n = 0;
    pthread_barrier_wait(&start_barrier);
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        impl->acquire();
        shared.counter++;
        shared.line[n & 7] = n;
        impl->release();
        n++;
        cx_spin_wait(delay);
    }
    me->acquisitions = n;
    return NULL;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void usage(const char *prog)
{
    fprintf(stderr,
            "usage: %s --lock mutex|futex|ticket|mcs|clh|clhub|hclhub [--threads N|N,N,...] "
            "[--seconds S] [--delay D]\n", prog);
    exit(2);
}

/* "1,2,4" -> list; exits on bad input */
static int parse_list(const char *s, int *list, const char *prog)
{
    int n = 0;
    while (*s) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || v < 1 || v > MAX_THREADS || n == MAX_LIST)
            usage(prog);
        list[n++] = (int) v;
        s = end;
        if (*s == ',')
            s++;
        else if (*s != '\0')
            usage(prog);
    }
    if (n == 0)
        usage(prog);
    return n;
}

int main(int argc, char **argv)
{
    const char *lock_name = NULL;
    int threads[MAX_LIST] = { 1 }, nthreads_list = 1;
    double seconds = 1.0;
    int status = 0;

    for (int i = 1; i < argc; i++) {
        if (i + 1 >= argc)
            usage(argv[0]);
        if (!strcmp(argv[i], "--lock")) {
            lock_name = argv[++i];
        } else if (!strcmp(argv[i], "--threads")) {
            nthreads_list = parse_list(argv[++i], threads, argv[0]);
        } else if (!strcmp(argv[i], "--seconds")) {
            char *end;
            seconds = strtod(argv[++i], &end);
            if (*end != '\0' || !(seconds > 0 && seconds <= 3600))
                usage(argv[0]);
        } else if (!strcmp(argv[i], "--delay")) {
            char *end;
            long d = strtol(argv[++i], &end, 10);
            if (*end != '\0' || d < 0 || d > 1000000)
                usage(argv[0]);
            delay = (unsigned) d;
        } else {
            usage(argv[0]);
        }
    }
    if (lock_name == NULL)
        usage(argv[0]);
    for (size_t i = 0; i < sizeof(impls) / sizeof(impls[0]); i++)
        if (!strcmp(impls[i].name, lock_name))
            impl = &impls[i];
    if (impl == NULL)
        usage(argv[0]);
    if (impl->init() != 0) {
        fprintf(stderr, "lockbench: cannot initialise the %s lock\n", lock_name);
        return 1;
    }

    printf("# bench: lockbench\n# params: lock=%s seconds=%g delay=%u numa_nodes=%d\n",
           lock_name, seconds, delay, MPIR_CX_topology_num_numa_nodes());
    printf("bench,case,x,metric,value,unit\n");
    fflush(stdout);

    for (int t = 0; t < nthreads_list; t++) {
        int n = threads[t];
        pthread_t tid[MAX_THREADS];
        long total = 0, min = -1, max = 0;
        double t0, elapsed;

        shared.counter = 0;
        atomic_store(&stop, 0);
        pthread_barrier_init(&start_barrier, NULL, (unsigned) n + 1);
        for (int i = 0; i < n; i++) {
            per_thread[i].acquisitions = 0;
            int err = pthread_create(&tid[i], NULL, worker, &per_thread[i]);
            if (err != 0) {
                fprintf(stderr, "lockbench: pthread_create: %s\n", strerror(err));
                return 1;
            }
        }
        pthread_barrier_wait(&start_barrier);
        t0 = now();
        struct timespec ts = { (time_t) seconds, (long) ((seconds - (time_t) seconds) * 1e9) };
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR);
        atomic_store(&stop, 1);
        for (int i = 0; i < n; i++)
            pthread_join(tid[i], NULL);
        elapsed = now() - t0;
        pthread_barrier_destroy(&start_barrier);

        for (int i = 0; i < n; i++) {
            long a = per_thread[i].acquisitions;
            total += a;
            if (min < 0 || a < min)
                min = a;
            if (a > max)
                max = a;
        }
        if (shared.counter != total) {
            fprintf(stderr, "lockbench: %s with %d threads: counter %ld but %ld acquisitions "
                    "(mutual exclusion broken)\n", lock_name, n, shared.counter, total);
            status = 1;
        }
        printf("lockbench,%s,%d,throughput,%.6g,Macq/s\n", lock_name, n, total / elapsed / 1e6);
        printf("lockbench,%s,%d,fairness,%.6g,min/max\n", lock_name, n,
               max > 0 ? (double) min / (double) max : 0.0);
        fflush(stdout);
    }
    if (impl->destroy)
        impl->destroy();
    return status;
}
