/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * MPICH-CX Daps: the owner's side of the guard that keeps a worker out of a
 * rank's MPI library while the rank itself is inside it. Only for ranks
 * without MPI threads (below MPI_THREAD_MULTIPLE), whose MPI code takes no
 * locks. Every MPI function's GLOBAL critical section and the handle
 * allocator call it (patch cx-daps); the sections MPICH leaves around user
 * callbacks and PMI calls inside a call (GLOBAL_CALLBACK) do not, so the
 * guard stays closed for the whole call.
 *
 * The owner pays a plain store and a load per entry: the worker, which sets
 * `worker` first, forces the ordering with membarrier(2) before it reads
 * `depth` (an asymmetric Dekker protocol; all PiP tasks are threads of one
 * process). Code of this rank that the worker itself runs (the victim's
 * progress freeing a handle) must not wait for itself: it recognizes the
 * worker's thread and leaves `depth` alone. Design: doc/user/daps.md.
 */
#ifndef MPICHCX_DAPS_H_INCLUDED
#define MPICHCX_DAPS_H_INCLUDED

#include <pthread.h>
#include <sched.h>

typedef struct MPIR_CX_daps_guard {
    int on;                     /* set while peers may run this rank's progress */
    int depth;                  /* the owner's nesting in MPI calls; the owner writes it */
    int worker __attribute__((aligned(64)));    /* 1 while a worker runs this rank's progress */
    pthread_t worker_thread;    /* that worker, set while worker is 1 */
} __attribute__((aligned(64))) MPIR_CX_daps_guard_t;

/* Hidden: libmpi's code reads it PC-relative, not through the GOT (two
 * instructions fewer per MPI call); peers reach it through the descriptor. */
#define MPIR_CX_DAPS_HIDDEN __attribute__((visibility("hidden")))
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

static inline void MPIR_CX_daps_enter_slow(MPIR_CX_daps_guard_t * g, int d)
{
    /* back out, let the worker finish, then enter for good */
    __atomic_store_n(&g->depth, d, __ATOMIC_RELAXED);
    for (;;) {
        MPIR_CX_daps_wait_worker(g);
        __atomic_store_n(&g->depth, d + 1, __ATOMIC_RELAXED);
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        if (!__atomic_load_n(&g->worker, __ATOMIC_ACQUIRE))
            return;
        __atomic_store_n(&g->depth, d, __ATOMIC_RELAXED);
    }
}

static inline void MPIR_CX_daps_enter(MPIR_CX_daps_guard_t * g)
{
    if (__builtin_expect(g->on, 0)) {
        if (MPIR_CX_daps_in_worker(g))
            return;     /* the worker, in code of ours it runs */
        int d = __atomic_load_n(&g->depth, __ATOMIC_RELAXED);
        __atomic_store_n(&g->depth, d + 1, __ATOMIC_RELAXED);
        /* the compiler keeps the store before the load; the worker's
         * membarrier orders them in the processor */
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        if (__builtin_expect(__atomic_load_n(&g->worker, __ATOMIC_ACQUIRE), 0))
            MPIR_CX_daps_enter_slow(g, d);
    }
}

static inline void MPIR_CX_daps_exit(MPIR_CX_daps_guard_t * g)
{
    if (__builtin_expect(g->on, 0)) {
        if (MPIR_CX_daps_in_worker(g))
            return;     /* the worker, in code of ours it runs */
        int d = __atomic_load_n(&g->depth, __ATOMIC_RELAXED);
        if (d > 0)      /* else a call entered before the guard was turned on */
            __atomic_store_n(&g->depth, d - 1, __ATOMIC_RELEASE);
    }
}

#define MPIR_CX_DAPS_OWNER_ENTER() MPIR_CX_daps_enter(&MPIR_CX_daps_guard)
#define MPIR_CX_DAPS_OWNER_EXIT()  MPIR_CX_daps_exit(&MPIR_CX_daps_guard)

#endif /* MPICHCX_DAPS_H_INCLUDED */
