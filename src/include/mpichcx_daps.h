/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * MPICH-CX Daps: the owner's side of the guard that keeps a worker out of a
 * rank's MPI library while any thread of the rank itself is inside it. Every
 * MPI function's GLOBAL critical section and the handle allocator call it
 * (patch cx-daps), before they take any lock; the sections MPICH leaves
 * around user callbacks and PMI calls inside a call (GLOBAL_CALLBACK) do
 * not, so the guard stays closed for the whole call. A worker enters only
 * when no thread of the rank is inside, so every lock the rank's progress
 * takes is free then, and nothing the worker runs can wait for a thread of
 * the rank (try-lock entry into the whole rank, not into each lock).
 *
 * The owner pays a plain store and a load per entry: the worker, which sets
 * `worker` first, forces the ordering with membarrier(2) before it reads the
 * depths (an asymmetric Dekker protocol; all PiP tasks are threads of one
 * process). With MPI threads each thread counts its nesting in a cache line
 * of its own (a shared counter would move between the threads' cores on
 * every call); threads beyond the last own slot share it with locked
 * instructions. Code of this rank that the worker itself runs (the victim's
 * progress freeing a handle) must not wait for itself: it recognizes the
 * worker's thread and leaves the depths alone. Design: doc/user/daps.md.
 */
#ifndef MPICHCX_DAPS_H_INCLUDED
#define MPICHCX_DAPS_H_INCLUDED

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>

/* Hidden: libmpi's code reads the guard PC-relative, not through the GOT
 * (two instructions fewer per MPI call); peers reach it through the
 * descriptor. */
#define MPIR_CX_DAPS_HIDDEN __attribute__((visibility("hidden")))

/* on: whether peers may run this rank's progress, and how its threads count */
#define MPIR_CX_DAPS_OFF 0
#define MPIR_CX_DAPS_SINGLE 1   /* below MPI_THREAD_MULTIPLE: depth */
#define MPIR_CX_DAPS_THREADS 2  /* MPI_THREAD_MULTIPLE: slots */

/* Per-thread nesting slots; the last one is shared by later threads. */
#define MPIR_CX_DAPS_SLOTS 16

typedef struct {
    int depth;
} __attribute__((aligned(64))) MPIR_CX_daps_slot_t;

typedef struct MPIR_CX_daps_guard {
    int on;                     /* MPIR_CX_DAPS_* */
    int depth;                  /* SINGLE: the owner's nesting in MPI calls; the owner writes it */
    int n_slots;                /* THREADS: slots handed out so far (may exceed the array) */
    int worker __attribute__((aligned(64)));    /* 1 while a worker runs this rank's progress */
    pthread_t worker_thread;    /* that worker, set while worker is 1 */
    MPIR_CX_daps_slot_t slots[MPIR_CX_DAPS_SLOTS];      /* THREADS: each thread's nesting */
} __attribute__((aligned(64))) MPIR_CX_daps_guard_t;

/* This thread's slot + 1 (0: none yet), in this rank's guard. */
extern __thread int MPIR_CX_daps_slot MPIR_CX_DAPS_HIDDEN;

extern MPIR_CX_daps_guard_t MPIR_CX_daps_guard MPIR_CX_DAPS_HIDDEN;

/* Set by CH4's PiP module when this rank takes part: called at the very end
 * of MPI_Init (MPI threads are known, the world is up) and at the very start
 * of MPI_Finalize (before anything is torn down). */
extern void (*MPIR_CX_daps_start)(void);
extern void (*MPIR_CX_daps_stop)(void);

/* The owner saw a worker inside: wait until it leaves (the worker ends its
 * progress step and releases the flag). */
static inline void MPIR_CX_daps_wait_worker(MPIR_CX_daps_guard_t * g)
{
    unsigned spins = 0;
    while (__atomic_load_n(&g->worker, __ATOMIC_ACQUIRE)) {
        if (++spins < 1024) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
        } else {
            spins = 0;
            sched_yield();
        }
    }
}

/* Whether this thread is the worker running this rank's progress now. */
static inline int MPIR_CX_daps_in_worker(MPIR_CX_daps_guard_t * g)
{
    return __builtin_expect(__atomic_load_n(&g->worker, __ATOMIC_RELAXED), 0) &&
        pthread_equal(__atomic_load_n(&g->worker_thread, __ATOMIC_RELAXED), pthread_self());
}

/* Whether any thread of the owner is inside its MPI library (a worker's
 * view: read after its fence). */
static inline bool MPIR_CX_daps_owner_inside(MPIR_CX_daps_guard_t * g)
{
    if (__atomic_load_n(&g->depth, __ATOMIC_ACQUIRE))
        return true;
    if (__atomic_load_n(&g->on, __ATOMIC_RELAXED) == MPIR_CX_DAPS_THREADS) {
        int n = __atomic_load_n(&g->n_slots, __ATOMIC_ACQUIRE);
        if (n > MPIR_CX_DAPS_SLOTS)
            n = MPIR_CX_DAPS_SLOTS;
        for (int i = 0; i < n; i++)
            if (__atomic_load_n(&g->slots[i].depth, __ATOMIC_ACQUIRE))
                return true;
    }
    return false;
}

/* The nesting counter of the calling thread: depth for a single owner,
 * else its slot (handed out at its first entry when `take`; NULL if it has
 * none). *shared: other threads count in it too (locked instructions). */
static inline int *MPIR_CX_daps_counter(MPIR_CX_daps_guard_t * g, bool take, bool *shared)
{
    *shared = false;
    if (g->on == MPIR_CX_DAPS_SINGLE)
        return &g->depth;
    int s = MPIR_CX_daps_slot;
    if (__builtin_expect(!s, 0)) {
        if (!take)
            return NULL;        /* it entered before the guard was turned on */
        int n = __atomic_fetch_add(&g->n_slots, 1, __ATOMIC_SEQ_CST);
        s = MPIR_CX_daps_slot = (n < MPIR_CX_DAPS_SLOTS ? n : MPIR_CX_DAPS_SLOTS - 1) + 1;
    }
    *shared = s == MPIR_CX_DAPS_SLOTS;
    return &g->slots[s - 1].depth;
}

static inline void MPIR_CX_daps_count(int *d, int delta, bool shared)
{
    if (shared)
        __atomic_add_fetch(d, delta, __ATOMIC_SEQ_CST);
    else
        __atomic_store_n(d, __atomic_load_n(d, __ATOMIC_RELAXED) + delta, __ATOMIC_RELEASE);
}

static inline void MPIR_CX_daps_enter_slow(MPIR_CX_daps_guard_t * g, int *d, bool shared)
{
    /* back out, let the worker finish, then enter for good */
    for (;;) {
        MPIR_CX_daps_count(d, -1, shared);
        MPIR_CX_daps_wait_worker(g);
        MPIR_CX_daps_count(d, 1, shared);
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        if (!__atomic_load_n(&g->worker, __ATOMIC_ACQUIRE))
            return;
    }
}

static inline void MPIR_CX_daps_enter(MPIR_CX_daps_guard_t * g)
{
    if (__builtin_expect(g->on, 0)) {
        if (MPIR_CX_daps_in_worker(g))
            return;     /* the worker, in code of ours it runs */
        bool shared;
        int *d = MPIR_CX_daps_counter(g, true, &shared);
        if (__builtin_expect(shared, 0)) {
            __atomic_add_fetch(d, 1, __ATOMIC_SEQ_CST);
        } else {
            __atomic_store_n(d, __atomic_load_n(d, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
            /* the compiler keeps the store before the load; the worker's
             * membarrier orders them in the processor */
            __atomic_signal_fence(__ATOMIC_SEQ_CST);
        }
        if (__builtin_expect(__atomic_load_n(&g->worker, __ATOMIC_ACQUIRE), 0))
            MPIR_CX_daps_enter_slow(g, d, shared);
    }
}

static inline void MPIR_CX_daps_exit(MPIR_CX_daps_guard_t * g)
{
    if (__builtin_expect(g->on, 0)) {
        if (MPIR_CX_daps_in_worker(g))
            return;     /* the worker, in code of ours it runs */
        bool shared;
        int *d = MPIR_CX_daps_counter(g, false, &shared);
        /* none, or 0: a call entered before the guard was turned on */
        if (d && __atomic_load_n(d, __ATOMIC_RELAXED) > 0)
            MPIR_CX_daps_count(d, -1, shared);
    }
}

#define MPIR_CX_DAPS_OWNER_ENTER() MPIR_CX_daps_enter(&MPIR_CX_daps_guard)
#define MPIR_CX_DAPS_OWNER_EXIT()  MPIR_CX_daps_exit(&MPIR_CX_daps_guard)

#endif /* MPICHCX_DAPS_H_INCLUDED */
