/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * Unit tests of Daps's guard and steal protocol (src/include/mpichcx_daps.h,
 * src/mpid/ch4/shm/ipc/pip/pip_daps.h), no MPI: an owner thread that enters
 * and leaves "MPI" and workers that run its "progress" through
 * MPIDI_PIPI_daps_try. Usage: test_daps TEST
 *   exclusion  owner and workers never inside the owner's state at once
 *   nested     the owner's code run by a worker enters the owner's guard
 *              without waiting for itself and without touching depth
 *   disable    after MPIDI_PIPI_daps_disable no worker runs the progress
 *   pick       victim choice: own NUMA node first, another after
 *              MPIDI_PIPI_DAPS_LOCAL_TRIES failures; backoff after empty steps
 *   threads    an owner with MPI threads (more than the guard has own
 *              slots): no worker runs its progress while any of its threads
 *              is inside, so the lock its progress takes is always free
 *   slots      each thread counts in a slot of its own, found again at every
 *              entry; threads beyond the slots share a locked counter
 */
#define _GNU_SOURCE
#include "pip_daps.h"

#include <assert.h>
#include <linux/membarrier.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

MPIR_CX_daps_guard_t MPIR_CX_daps_guard;
__thread int *MPIR_CX_daps_my_depth;
__thread int MPIR_CX_daps_shared_depth;
void (*MPIR_CX_daps_start)(void);
void (*MPIR_CX_daps_stop)(void);

#define CHECK(c_) \
    do { if (!(c_)) { fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #c_); exit(1); } } while (0)

static MPIR_CX_daps_guard_t guard;
static MPIDI_PIPI_daps_rank_t victim;
static int occupants;           /* atomically: who is inside the owner's state */
static long state;              /* plain: ThreadSanitizer sees any overlap */
static long progressed;         /* steps run by workers (plain, under the guard) */
static int stop;

static void membarrier_fence(void)
{
    if (syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0))
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

static void inside(void)
{
    CHECK(__atomic_add_fetch(&occupants, 1, __ATOMIC_SEQ_CST) == 1);
    long s = state;
    for (int i = 0; i < 20; i++)
        state = s + i;
    state = s + 1;
    CHECK(__atomic_sub_fetch(&occupants, 1, __ATOMIC_SEQ_CST) == 0);
}

static int nested_calls;
static int progress(bool net, bool shm)
{
    (void) net;
    (void) shm;
    inside();
    if (nested_calls) {
        /* like the victim's progress freeing a handle: must not wait for
         * this thread itself */
        MPIR_CX_daps_enter(&guard);
        MPIR_CX_daps_enter(&guard);
        inside();
        MPIR_CX_daps_exit(&guard);
        MPIR_CX_daps_exit(&guard);
    }
    __atomic_fetch_add(&progressed, 1, __ATOMIC_RELAXED);
    return MPIDI_PIPI_DAPS_NET;
}

static void *worker_main(void *arg)
{
    long *ran = arg;
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
        if (MPIDI_PIPI_daps_try(&victim, membarrier_fence) > 0)
            (*ran)++;
        /* each try interrupts every CPU (membarrier): leave the owner,
         * which may share a CPU with us, room to run */
        sched_yield();
    }
    return NULL;
}

static void setup(void)
{
    memset(&guard, 0, sizeof(guard));
    MPIR_CX_daps_my_depth = NULL;       /* this thread's slot was in the old guard */
    memset(&victim, 0, sizeof(victim));
    guard.on = 1;
    victim.guard = &guard;
    victim.progress = progress;
    victim.net_avail = 1;
    victim.enabled = 1;
    state = progressed = 0;
    stop = 0;
}

/* The owner alternates between its MPI calls (nested entries, like a
 * binding calling the handle allocator) and computing; workers steal. */
static long run_owner_and_workers(int nworkers, int rounds, long *worker_ran)
{
    pthread_t th[8];
    for (int i = 0; i < nworkers; i++)
        CHECK(pthread_create(&th[i], NULL, worker_main, &worker_ran[i]) == 0);
    long own = 0;
    for (int r = 0; r < rounds; r++) {
        MPIR_CX_daps_enter(&guard);
        inside();
        MPIR_CX_daps_enter(&guard);
        inside();
        MPIR_CX_daps_exit(&guard);
        own += 2;
        MPIR_CX_daps_exit(&guard);
        if (r % 64 == 0)
            usleep(50); /* computing: workers get in */
    }
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < nworkers; i++)
        pthread_join(th[i], NULL);
    return own;
}

static int test_exclusion(int nested)
{
    setup();
    nested_calls = nested;
    long ran[3] = { 0, 0, 0 };
    long own = run_owner_and_workers(3, 4000, ran);
    long total = ran[0] + ran[1] + ran[2];
    CHECK(total == progressed);
    /* no step lost to an overlap */
    CHECK(state == own + progressed * (nested ? 2 : 1));
    CHECK(!MPIR_CX_daps_owner_inside(&guard) && guard.worker == 0);
    CHECK(progressed > 0);      /* workers did get in while the owner computed */
    printf("owner sections %ld, worker steps %ld\n", own, progressed);
    return 0;
}

/* The sum of every thread's nesting. */
static int depth_sum(void)
{
    int sum = guard.shared;
    for (int i = 0; i < MPIR_CX_DAPS_SLOTS; i++)
        sum += guard.slots[i].depth;
    return sum;
}

/* A worker's thread (another rank's: no slot in this guard), in code of
 * this rank it runs, entering and leaving more often than it entered. */
static void *worker_entries_main(void *arg)
{
    (void) arg;
    guard.worker_thread = pthread_self();
    guard.worker = 1;
    MPIR_CX_daps_set_busy(&guard);
    MPIR_CX_daps_enter(&guard);
    MPIR_CX_daps_exit(&guard);
    MPIR_CX_daps_exit(&guard);
    CHECK(MPIR_CX_daps_my_depth == NULL && guard.claimed == 1);
    MPIR_CX_daps_clear_busy(&guard);
    guard.worker = 0;
    return NULL;
}

/* The worker's own entries leave the depths alone, even when the owner is
 * inside (they belong to the owner's threads). The owner's thread counts in
 * the first slot, claimed at its first entry. */
static void check_worker_entries(void)
{
    setup();
    MPIR_CX_daps_enter(&guard);
    int *mine = MPIR_CX_daps_my_depth;
    CHECK(mine == &guard.slots[0].depth && guard.claimed == 1 &&
          guard.slots[0].owner == (uintptr_t) pthread_self());
    MPIR_CX_daps_enter(&guard);
    MPIR_CX_daps_enter(&guard);
    CHECK(*mine == 3 && depth_sum() == 3 && MPIR_CX_daps_owner_inside(&guard));
    pthread_t w;
    CHECK(pthread_create(&w, NULL, worker_entries_main, NULL) == 0);
    pthread_join(w, NULL);
    CHECK(*mine == 3 && depth_sum() == 3);
    CHECK(guard.on == MPIR_CX_DAPS_ON);
    MPIR_CX_daps_enter(&guard);
    CHECK(*mine == 4);
    MPIR_CX_daps_exit(&guard);
    MPIR_CX_daps_exit(&guard);
    CHECK(*mine == 2 && depth_sum() == 2);
    /* an exit while a worker holds the busy bit (about to see the owner
     * inside and back off) counts as the owner's */
    MPIR_CX_daps_set_busy(&guard);
    MPIR_CX_daps_exit(&guard);
    MPIR_CX_daps_clear_busy(&guard);
    CHECK(*mine == 1 && depth_sum() == 1);
    /* a thread with a slot here that is this rank's worker (never in MPI,
     * but it must not wait for itself): its entries count, balanced */
    guard.worker_thread = pthread_self();
    guard.worker = 1;
    MPIR_CX_daps_set_busy(&guard);
    MPIR_CX_daps_enter(&guard);
    CHECK(*mine == 2);
    MPIR_CX_daps_exit(&guard);
    MPIR_CX_daps_clear_busy(&guard);
    guard.worker = 0;
    CHECK(*mine == 1 && depth_sum() == 1);
    guard.on = 0;       /* off: nothing counted */
    MPIR_CX_daps_enter(&guard);
    CHECK(depth_sum() == 1);
    MPIR_CX_daps_reset(&guard);
    CHECK(depth_sum() == 0 && guard.on == 0);
    /* the thread keeps its slot (it holds a pointer to it) */
    CHECK(guard.slots[0].owner == (uintptr_t) pthread_self() && MPIR_CX_daps_my_depth == mine);
}

static int test_disable(void)
{
    setup();
    nested_calls = 0;
    long ran[2] = { 0, 0 };
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        CHECK(pthread_create(&th[i], NULL, worker_main, &ran[i]) == 0);
    while (__atomic_load_n(&progressed, __ATOMIC_RELAXED) < 100)
        usleep(10);
    MPIDI_PIPI_daps_disable(&victim);
    long after = __atomic_load_n(&progressed, __ATOMIC_RELAXED);
    usleep(20000);
    CHECK(__atomic_load_n(&progressed, __ATOMIC_RELAXED) == after);
    CHECK(MPIDI_PIPI_daps_try(&victim, membarrier_fence) == -1);
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    /* nothing posted, or the owner inside: not eligible either */
    victim.enabled = 1;
    victim.net_avail = 0;
    CHECK(MPIDI_PIPI_daps_try(&victim, membarrier_fence) == -1);
    victim.net_avail = 1;
    guard.shared = 1;
    CHECK(MPIDI_PIPI_daps_try(&victim, membarrier_fence) == -1);
    guard.shared = 0;
    CHECK(MPIDI_PIPI_daps_try(&victim, membarrier_fence) == MPIDI_PIPI_DAPS_NET);
    printf("steps before disable %ld\n", after);
    return 0;
}

/* An owner with MPI threads: each thread enters (nested, like the handle
 * allocator inside a call), takes the rank's lock (a VCI lock) and changes
 * the rank's state; the workers' progress takes the same lock and must
 * always find it free, with no owner thread inside. */
#define OWNER_THREADS (MPIR_CX_DAPS_SLOTS + 4)  /* some share the locked counter */
static pthread_mutex_t rank_lock = PTHREAD_MUTEX_INITIALIZER;
static int owners_inside;

static int locking_progress(bool net, bool shm)
{
    (void) net;
    (void) shm;
    CHECK(__atomic_load_n(&owners_inside, __ATOMIC_SEQ_CST) == 0);
    CHECK(pthread_mutex_trylock(&rank_lock) == 0);
    state++;
    pthread_mutex_unlock(&rank_lock);
    __atomic_fetch_add(&progressed, 1, __ATOMIC_RELAXED);
    return MPIDI_PIPI_DAPS_NET;
}

static void *owner_thread_main(void *arg)
{
    long *own = arg;
    for (int r = 0; r < 2000; r++) {
        MPIR_CX_daps_enter(&guard);
        __atomic_fetch_add(&owners_inside, 1, __ATOMIC_SEQ_CST);
        MPIR_CX_daps_enter(&guard);
        pthread_mutex_lock(&rank_lock);
        state++;
        (*own)++;
        pthread_mutex_unlock(&rank_lock);
        MPIR_CX_daps_exit(&guard);
        __atomic_fetch_sub(&owners_inside, 1, __ATOMIC_SEQ_CST);
        MPIR_CX_daps_exit(&guard);
        if (r % 64 == 0)
            usleep(200);        /* computing: workers get in when all do */
    }
    return NULL;
}

static int test_threads(void)
{
    setup();
    victim.progress = locking_progress;
    long ran[3] = { 0, 0, 0 }, own[OWNER_THREADS] = { 0 };
    pthread_t w[3], o[OWNER_THREADS];
    for (int i = 0; i < 3; i++)
        CHECK(pthread_create(&w[i], NULL, worker_main, &ran[i]) == 0);
    for (int i = 0; i < OWNER_THREADS; i++)
        CHECK(pthread_create(&o[i], NULL, owner_thread_main, &own[i]) == 0);
    long owned = 0;
    for (int i = 0; i < OWNER_THREADS; i++) {
        pthread_join(o[i], NULL);
        owned += own[i];
    }
    /* all owner threads computing at once: workers get in */
    while (__atomic_load_n(&progressed, __ATOMIC_RELAXED) == 0)
        usleep(100);
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < 3; i++)
        pthread_join(w[i], NULL);
    CHECK(ran[0] + ran[1] + ran[2] == progressed);
    CHECK(state == owned + progressed);
    /* every slot taken (the threads were alive together at their first
     * entries), the others counted in the shared counter, all left */
    for (int i = 0; i < MPIR_CX_DAPS_SLOTS; i++)
        CHECK(guard.slots[i].owner != 0 && guard.slots[i].depth == 0);
    CHECK(guard.shared == 0 && !MPIR_CX_daps_owner_inside(&guard));
    /* a thread inside, in its own slot or in the shared counter: no step */
    CHECK(guard.claimed == MPIR_CX_DAPS_SLOTS);
    guard.slots[3].depth = 1;
    CHECK(MPIDI_PIPI_daps_try(&victim, membarrier_fence) == -1);
    guard.slots[3].depth = 0;
    guard.shared = 2;
    CHECK(MPIDI_PIPI_daps_try(&victim, membarrier_fence) == -1);
    guard.shared = 0;
    CHECK(MPIDI_PIPI_daps_try(&victim, membarrier_fence) == MPIDI_PIPI_DAPS_NET);
    printf("owner threads %d, their sections %ld, worker steps %ld\n", OWNER_THREADS, owned,
           progressed);
    return 0;
}

/* Threads find their own slot again at each entry; with the slots taken
 * they count in the shared counter. */
static int slot_counts[MPIR_CX_DAPS_SLOTS + 8];
static pthread_barrier_t all_in, checked;

static void *slot_thread_main(void *arg)
{
    int *count = arg;
    MPIR_CX_daps_enter(&guard);
    MPIR_CX_daps_enter(&guard);
    pthread_barrier_wait(&all_in);
    *count = 2;
    pthread_barrier_wait(&checked);
    MPIR_CX_daps_exit(&guard);
    MPIR_CX_daps_exit(&guard);
    *count = 0;
    return NULL;
}

static int test_slots(void)
{
    enum { N = MPIR_CX_DAPS_SLOTS + 8 };
    setup();
    pthread_t th[N];
    CHECK(pthread_barrier_init(&all_in, NULL, N + 1) == 0);
    CHECK(pthread_barrier_init(&checked, NULL, N + 1) == 0);
    for (int i = 0; i < N; i++)
        CHECK(pthread_create(&th[i], NULL, slot_thread_main, &slot_counts[i]) == 0);
    pthread_barrier_wait(&all_in);
    /* all inside twice: every slot owned by one thread with depth 2, the
     * other 8 threads in the shared counter */
    for (int i = 0; i < MPIR_CX_DAPS_SLOTS; i++) {
        CHECK(guard.slots[i].owner != 0 && guard.slots[i].depth == 2);
        for (int j = 0; j < i; j++)
            CHECK(guard.slots[j].owner != guard.slots[i].owner);
    }
    CHECK(guard.shared == 2 * (N - MPIR_CX_DAPS_SLOTS));
    CHECK(MPIDI_PIPI_daps_try(&victim, membarrier_fence) == -1);
    pthread_barrier_wait(&checked);
    for (int i = 0; i < N; i++)
        pthread_join(th[i], NULL);
    CHECK(depth_sum() == 0);
    CHECK(MPIDI_PIPI_daps_try(&victim, membarrier_fence) == MPIDI_PIPI_DAPS_NET);
    /* a thread leaving a call it entered before the guard was on counts
     * nothing */
    MPIR_CX_daps_exit(&guard);
    CHECK(depth_sum() == 0);
    printf("%d threads: %d slots, %d in the shared counter\n", N, MPIR_CX_DAPS_SLOTS,
           N - MPIR_CX_DAPS_SLOTS);
    return 0;
}

static int empty_progress(bool net, bool shm)
{
    (void) net;
    (void) shm;
    return 0;
}

static unsigned long long fake_ns;
static unsigned long long fake_clock(void)
{
    return fake_ns;
}

static int test_pick(void)
{
    static MPIR_CX_daps_guard_t g[3];
    static MPIDI_PIPI_daps_rank_t r[3];
    MPIDI_PIPI_daps_rank_t *local[1] = { &r[0] }, *remote[2] = { &r[1], &r[2] };
    for (int i = 0; i < 3; i++) {
        r[i].guard = &g[i];
        r[i].progress = empty_progress;
        r[i].enabled = 1;
    }
    MPIDI_PIPI_daps_worker_t w = {.local = local,.n_local = 1,.remote = remote,.n_remote = 2,
        .rng = 12345,.fence = membarrier_fence
    };
    bool rem;
    for (int i = 0; i < MPIDI_PIPI_DAPS_LOCAL_TRIES; i++) {
        CHECK(MPIDI_PIPI_daps_pick(&w, &rem) == &r[0] && !rem);
        CHECK(MPIDI_PIPI_daps_idle(&w, NULL, NULL) == -1);      /* nothing posted */
    }
    MPIDI_PIPI_daps_rank_t *v = MPIDI_PIPI_daps_pick(&w, &rem);
    CHECK(rem && (v == &r[1] || v == &r[2]) && w.local_fails == 0);
    /* empty steps back off: 0, 1, 3, 7 ... idle polls skipped */
    r[0].net_avail = 1;
    w.local_fails = 0;
    CHECK(MPIDI_PIPI_daps_idle(&w, NULL, NULL) == 0);
    CHECK(w.skip == 0 && w.skip_next == 1);
    CHECK(MPIDI_PIPI_daps_idle(&w, NULL, NULL) == 0);
    CHECK(w.skip == 1);
    CHECK(MPIDI_PIPI_daps_idle(&w, NULL, NULL) == -1 && w.skip == 0);
    for (int i = 0; i < 20; i++)
        (void) MPIDI_PIPI_daps_idle(&w, NULL, NULL);
    CHECK(w.skip_next <= MPIDI_PIPI_DAPS_MAX_SKIP);
    /* a victim must stay away from MPI for min_away_ns, watched at every
     * look (at most one per look_ns), before the first step; its being seen
     * inside MPI restarts that */
    MPIDI_PIPI_daps_worker_t a = {.local = local,.n_local = 1,.rng = 7,
        .fence = membarrier_fence,.min_away_ns = 1000,.look_ns = 200,.look_min_ns = 200,
        .look_max_ns = 200
    };
    unsigned long long ns;
    r[0].net_avail = 1;
    fake_ns = 5000;
    CHECK(MPIDI_PIPI_daps_idle(&a, fake_clock, &ns) == -1 && a.cand == &r[0]);
    fake_ns += 100;     /* no look due */
    g[0].shared = 1;
    CHECK(MPIDI_PIPI_daps_idle(&a, fake_clock, &ns) == -1 && a.cand == &r[0]);
    g[0].shared = 0;
    fake_ns += 899;
    CHECK(MPIDI_PIPI_daps_idle(&a, fake_clock, &ns) == -1 && a.local_fails == 0);
    fake_ns += 200;
    g[0].shared = 1;    /* the owner enters MPI: watching starts again */
    CHECK(MPIDI_PIPI_daps_idle(&a, fake_clock, &ns) == -1 && a.cand == NULL);
    g[0].shared = 0;
    fake_ns += 200;
    CHECK(MPIDI_PIPI_daps_idle(&a, fake_clock, &ns) == -1 && a.cand == &r[0]);
    fake_ns += 999;
    CHECK(MPIDI_PIPI_daps_idle(&a, fake_clock, &ns) == -1);
    fake_ns += 1;
    CHECK(MPIDI_PIPI_daps_idle(&a, fake_clock, &ns) == -1);     /* look not due */
    fake_ns += 200;
    CHECK(MPIDI_PIPI_daps_idle(&a, fake_clock, &ns) == 0);      /* away long enough: a step */
    /* a look every look_polls + 1 idle polls only */
    a.look_polls = 2;
    fake_ns += 10000;
    g[0].shared = 1;
    CHECK(MPIDI_PIPI_daps_idle(&a, fake_clock, &ns) == -1 && a.cand == NULL);
    g[0].shared = 0;
    fake_ns += 10000;
    CHECK(MPIDI_PIPI_daps_idle(&a, fake_clock, &ns) == -1 && a.cand == NULL);
    CHECK(MPIDI_PIPI_daps_idle(&a, fake_clock, &ns) == -1 && a.cand == NULL);
    CHECK(MPIDI_PIPI_daps_idle(&a, fake_clock, &ns) == -1 && a.cand == &r[0]);
    /* looks that find nobody to watch space out, up to look_max_ns; one
     * that finds a victim to watch brings them back */
    MPIDI_PIPI_daps_worker_t b = {.local = local,.n_local = 1,.rng = 7,
        .fence = membarrier_fence,.min_away_ns = 1000,.look_ns = 100,.look_min_ns = 100,
        .look_max_ns = 1000
    };
    g[0].shared = 1;
    for (unsigned long long want = 200; want <= 1000; want = want * 2 < 1000 ? want * 2 : 1000) {
        fake_ns += b.look_ns;
        CHECK(MPIDI_PIPI_daps_idle(&b, fake_clock, &ns) == -1 && b.look_ns == want);
        if (want == 1000)
            break;
    }
    fake_ns += 999;     /* no look due */
    g[0].shared = 0;
    CHECK(MPIDI_PIPI_daps_idle(&b, fake_clock, &ns) == -1 && b.cand == NULL);
    fake_ns += 1;
    CHECK(MPIDI_PIPI_daps_idle(&b, fake_clock, &ns) == -1 && b.cand == &r[0] && b.look_ns == 100);
    /* no peers at all */
    MPIDI_PIPI_daps_worker_t none = {.rng = 1,.fence = membarrier_fence };
    CHECK(MPIDI_PIPI_daps_pick(&none, &rem) == NULL);
    printf("pick ok\n");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s exclusion|nested|disable|pick|threads|slots\n", argv[0]);
        return 2;
    }
    (void) syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0);
    if (!strcmp(argv[1], "exclusion"))
        return test_exclusion(0);
    if (!strcmp(argv[1], "nested")) {
        check_worker_entries();
        check_worker_entries(); /* again in a fresh guard */
        return test_exclusion(1);
    }
    if (!strcmp(argv[1], "disable"))
        return test_disable();
    if (!strcmp(argv[1], "pick"))
        return test_pick();
    if (!strcmp(argv[1], "threads"))
        return test_threads();
    if (!strcmp(argv[1], "slots"))
        return test_slots();
    fprintf(stderr, "unknown test %s\n", argv[1]);
    return 2;
}
