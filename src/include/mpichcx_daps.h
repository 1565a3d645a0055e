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
 * The owner pays one add to a nesting counter and a load per entry: the
 * worker sets a busy bit in the guard's `on` word first and forces the
 * ordering with membarrier(2) before it reads the depths (an asymmetric
 * Dekker protocol; all PiP tasks are threads of one process), and the
 * owner's entry reads that word after its add. Below MPI_THREAD_MULTIPLE
 * one thread at a time is in MPI, and it counts in `depth`. With MPI
 * threads each thread counts in a cache line of its own (a shared counter
 * would move between the threads' cores on every call), found by hashing
 * its thread pointer: libmpi is a dlmopen'ed -fPIC library, where a
 * __thread variable costs a call to __tls_get_addr on every entry and exit.
 * A thread claims that slot at its first entry; one whose slot another
 * thread holds takes a free one (found by a search on each entry) or, with
 * all taken, counts in a shared counter with locked instructions. Code of
 * this rank that the worker itself runs (the victim's progress freeing a
 * handle) must not wait for itself: its entries see the busy bit, take the
 * slow path, which recognizes the worker's thread, and count nothing.
 * Design: doc/user/daps.md.
 */
#ifndef MPICHCX_DAPS_H_INCLUDED
#define MPICHCX_DAPS_H_INCLUDED

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>

/* Hidden: libmpi's code reads the guard PC-relative, not through the GOT
 * (two instructions fewer per MPI call); peers reach it through the
 * descriptor. */
#define MPIR_CX_DAPS_HIDDEN __attribute__((visibility("hidden")))

/* on: whether peers may run this rank's progress, and how its threads count */
#define MPIR_CX_DAPS_OFF 0
#define MPIR_CX_DAPS_SINGLE 1   /* below MPI_THREAD_MULTIPLE: depth */
#define MPIR_CX_DAPS_THREADS 2  /* MPI_THREAD_MULTIPLE: slots */
#define MPIR_CX_DAPS_MODE 3     /* the bits of on that say which */
#define MPIR_CX_DAPS_BUSY 4     /* set in on while a worker is (about to be) inside */

/* Per-thread nesting slots (a power of two). */
#define MPIR_CX_DAPS_SLOTS 16

typedef struct {
    uintptr_t owner;            /* the thread pointer of the thread counting here; 0: free */
    int depth;                  /* that thread's nesting in MPI calls; it alone writes it */
} __attribute__((aligned(64))) MPIR_CX_daps_slot_t;

typedef struct MPIR_CX_daps_guard {
    int on;                     /* MPIR_CX_DAPS_* mode, | BUSY */
    int depth;                  /* SINGLE: the owner's nesting in MPI calls */
    int worker __attribute__((aligned(64)));    /* 1: a worker holds this rank (workers' lock) */
    pthread_t worker_thread;    /* that worker, set while worker is 1 */
    int shared;                 /* THREADS: nesting of threads without a slot (locked) */
    MPIR_CX_daps_slot_t slots[MPIR_CX_DAPS_SLOTS];      /* THREADS: each thread's nesting */
} __attribute__((aligned(64))) MPIR_CX_daps_guard_t;

extern MPIR_CX_daps_guard_t MPIR_CX_daps_guard MPIR_CX_DAPS_HIDDEN;

/* Set by CH4's PiP module when this rank takes part: called at the very end
 * of MPI_Init (MPI threads are known, the world is up) and at the very start
 * of MPI_Finalize (before anything is torn down). */
extern void (*MPIR_CX_daps_start)(void);
extern void (*MPIR_CX_daps_stop)(void);

/* The owner's own counters are changed with a plain add (one instruction;
 * only their owner writes them; aligned stores are atomic for the
 * worker's loads), behind compiler barriers. ThreadSanitizer gets atomics. */
#if defined(__SANITIZE_THREAD__)
#define MPIR_CX_DAPS_OWN_ADD(lv_, d_) \
    __atomic_store_n(&(lv_), __atomic_load_n(&(lv_), __ATOMIC_RELAXED) + (d_), __ATOMIC_RELAXED)
#else
#define MPIR_CX_DAPS_OWN_ADD(lv_, d_) ((lv_) += (d_))
#endif

/* The calling thread, as one instruction where the compiler can (glibc's
 * thread pointer is pthread_self()). Never 0. */
static inline uintptr_t MPIR_CX_daps_self(void)
{
#if defined(__x86_64__) && defined(__GNUC__) && (__GNUC__ >= 11 || defined(__clang__))
    return (uintptr_t) __builtin_thread_pointer();
#else
    return (uintptr_t) pthread_self();
#endif
}

/* The slot a thread tries first. Thread pointers lie at the top of each
 * thread's stack mapping: multiply to spread the high bits. */
static inline MPIR_CX_daps_slot_t *MPIR_CX_daps_home(MPIR_CX_daps_guard_t * g, uintptr_t self)
{
    return &g->slots[(uint64_t) self * 0x9e3779b97f4a7c15ull >> 60 & (MPIR_CX_DAPS_SLOTS - 1)];
}

/* The owner saw a worker inside: wait until it leaves (the worker ends its
 * progress step and clears the busy bit). */
static inline void MPIR_CX_daps_wait_worker(MPIR_CX_daps_guard_t * g)
{
    unsigned spins = 0;
    while (__atomic_load_n(&g->on, __ATOMIC_ACQUIRE) & MPIR_CX_DAPS_BUSY) {
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
    if ((__atomic_load_n(&g->on, __ATOMIC_RELAXED) & MPIR_CX_DAPS_MODE) != MPIR_CX_DAPS_THREADS)
        return false;
    if (__atomic_load_n(&g->shared, __ATOMIC_ACQUIRE))
        return true;
    for (int i = 0; i < MPIR_CX_DAPS_SLOTS; i++)
        if (__atomic_load_n(&g->slots[i].depth, __ATOMIC_ACQUIRE))
            return true;
    return false;
}

/* The slow paths are never inlined: the inline entry and exit stay a few
 * instructions, with no call (GCC would otherwise outline them whole). */
#define MPIR_CX_DAPS_SLOW __attribute__((noinline, cold, unused))

/* Add delta to a nesting counter: plain in the owner's own, locked in the
 * shared counter. */
static inline void MPIR_CX_daps_count(int *d, int delta, bool shared)
{
    if (shared)
        __atomic_add_fetch(d, delta, __ATOMIC_SEQ_CST);
    else
        MPIR_CX_DAPS_OWN_ADD(*d, delta);
}

/* The entry saw a worker inside: back out, let it finish, enter for good. */
static MPIR_CX_DAPS_SLOW void MPIR_CX_daps_enter_slow(MPIR_CX_daps_guard_t * g, int *d, bool shared)
{
    for (;;) {
        MPIR_CX_daps_count(d, -1, shared);
        MPIR_CX_daps_wait_worker(g);
        MPIR_CX_daps_count(d, 1, shared);
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        if (!(__atomic_load_n(&g->on, __ATOMIC_ACQUIRE) & MPIR_CX_DAPS_BUSY))
            return;
    }
}

/* THREADS: the calling thread's counter other than its home slot: a slot
 * it owns elsewhere, one it claims now (when take), or the shared counter
 * (*shared; NULL when !take and it never counted: it entered before the
 * guard was turned on). */
static inline int *MPIR_CX_daps_other_counter(MPIR_CX_daps_guard_t * g, uintptr_t self, bool take,
                                              bool *shared)
{
    *shared = false;
    for (int i = 0; i < MPIR_CX_DAPS_SLOTS; i++)
        if (__atomic_load_n(&g->slots[i].owner, __ATOMIC_RELAXED) == self)
            return &g->slots[i].depth;
    if (!take)
        return __atomic_load_n(&g->shared, __ATOMIC_RELAXED) > 0 ? (*shared = true, &g->shared) :
            NULL;
    MPIR_CX_daps_slot_t *home = MPIR_CX_daps_home(g, self);
    for (int i = 0; i < MPIR_CX_DAPS_SLOTS; i++) {
        MPIR_CX_daps_slot_t *s = &g->slots[(home - g->slots + i) & (MPIR_CX_DAPS_SLOTS - 1)];
        uintptr_t free_slot = 0;
        if (!__atomic_load_n(&s->owner, __ATOMIC_RELAXED) &&
            __atomic_compare_exchange_n(&s->owner, &free_slot, self, false, __ATOMIC_SEQ_CST,
                                        __ATOMIC_RELAXED))
            return &s->depth;
    }
    *shared = true;
    return &g->shared;
}

/* The counter of the calling thread (*shared: with locked instructions);
 * NULL if it has none and !take. */
static inline int *MPIR_CX_daps_counter(MPIR_CX_daps_guard_t * g, int mode, bool take, bool *shared)
{
    *shared = false;
    if (mode == MPIR_CX_DAPS_SINGLE)
        return &g->depth;
    uintptr_t self = MPIR_CX_daps_self();
    MPIR_CX_daps_slot_t *s = MPIR_CX_daps_home(g, self);
    if (__atomic_load_n(&s->owner, __ATOMIC_RELAXED) == self)
        return &s->depth;
    return MPIR_CX_daps_other_counter(g, self, take, shared);
}

/* Entries and exits off the fast path: the busy bit is set (the worker's
 * own entries count nothing; the owner's wait for it), a thread not
 * counting in its home slot. */
static MPIR_CX_DAPS_SLOW void MPIR_CX_daps_enter_other(MPIR_CX_daps_guard_t * g)
{
    int on = __atomic_load_n(&g->on, __ATOMIC_ACQUIRE);
    if ((on & MPIR_CX_DAPS_BUSY) && MPIR_CX_daps_in_worker(g))
        return; /* the worker, in code of ours it runs */
    if (!(on & MPIR_CX_DAPS_MODE))
        return; /* turned off meanwhile */
    bool shared;
    int *d = MPIR_CX_daps_counter(g, on & MPIR_CX_DAPS_MODE, true, &shared);
    MPIR_CX_daps_count(d, 1, shared);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (__atomic_load_n(&g->on, __ATOMIC_ACQUIRE) & MPIR_CX_DAPS_BUSY)
        MPIR_CX_daps_enter_slow(g, d, shared);
}

static MPIR_CX_DAPS_SLOW void MPIR_CX_daps_exit_other(MPIR_CX_daps_guard_t * g)
{
    int on = __atomic_load_n(&g->on, __ATOMIC_ACQUIRE);
    if ((on & MPIR_CX_DAPS_BUSY) && MPIR_CX_daps_in_worker(g))
        return;
    if (!(on & MPIR_CX_DAPS_MODE))
        return;
    bool shared;
    int *d = MPIR_CX_daps_counter(g, on & MPIR_CX_DAPS_MODE, false, &shared);
    if (d && __atomic_load_n(d, __ATOMIC_RELAXED) > 0)
        MPIR_CX_daps_count(d, -1, shared);
}

/* The fast paths: on is exactly the mode (no worker busy). Below
 * MPI_THREAD_MULTIPLE: an add to depth and a load of on. */
static inline __attribute__((always_inline))
void MPIR_CX_daps_enter(MPIR_CX_daps_guard_t * g)
{
    int on = __atomic_load_n(&g->on, __ATOMIC_RELAXED);
    if (__builtin_expect(on, 0)) {
        int *d;
        if (__builtin_expect(on == MPIR_CX_DAPS_SINGLE, 1)) {
            d = &g->depth;
        } else {
            uintptr_t self = MPIR_CX_daps_self();
            MPIR_CX_daps_slot_t *s = MPIR_CX_daps_home(g, self);
            if (__builtin_expect(on != MPIR_CX_DAPS_THREADS ||
                                 __atomic_load_n(&s->owner, __ATOMIC_RELAXED) != self, 0)) {
                MPIR_CX_daps_enter_other(g);
                return;
            }
            d = &s->depth;
        }
        MPIR_CX_DAPS_OWN_ADD(*d, 1);
        /* the compiler keeps the add before the load; the worker's
         * membarrier orders them in the processor */
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        if (__builtin_expect(__atomic_load_n(&g->on, __ATOMIC_RELAXED) != on, 0))
            MPIR_CX_daps_enter_slow(g, d, false);
    }
}

/* An owner never leaves more often than it entered: a thread inside when
 * the guard was turned on has no slot yet, and below MPI_THREAD_MULTIPLE
 * the guard is turned on outside every guarded section (MPI_Init takes
 * none). */
static inline __attribute__((always_inline))
void MPIR_CX_daps_exit(MPIR_CX_daps_guard_t * g)
{
    int on = __atomic_load_n(&g->on, __ATOMIC_RELAXED);
    if (__builtin_expect(on, 0)) {
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        if (__builtin_expect(on == MPIR_CX_DAPS_SINGLE, 1)) {
            MPIR_CX_DAPS_OWN_ADD(g->depth, -1);
            return;
        }
        uintptr_t self = MPIR_CX_daps_self();
        MPIR_CX_daps_slot_t *s = MPIR_CX_daps_home(g, self);
        if (__builtin_expect(on != MPIR_CX_DAPS_THREADS ||
                             __atomic_load_n(&s->owner, __ATOMIC_RELAXED) != self, 0))
            MPIR_CX_daps_exit_other(g);
        else
            MPIR_CX_DAPS_OWN_ADD(s->depth, -1);
    }
}

/* A worker's entry into this rank (after it took `worker`), and its exit. */
static inline void MPIR_CX_daps_set_busy(MPIR_CX_daps_guard_t * g)
{
    __atomic_fetch_or(&g->on, MPIR_CX_DAPS_BUSY, __ATOMIC_SEQ_CST);
}

static inline void MPIR_CX_daps_clear_busy(MPIR_CX_daps_guard_t * g)
{
    __atomic_fetch_and(&g->on, ~MPIR_CX_DAPS_BUSY, __ATOMIC_SEQ_CST);
}

/* Turning the guard on (MPI_Init's end) and off (MPI_Finalize's start, no
 * worker inside): nobody is counted. */
static inline void MPIR_CX_daps_turn_on(MPIR_CX_daps_guard_t * g, int mode)
{
    __atomic_store_n(&g->on, mode, __ATOMIC_SEQ_CST);
}

static inline void MPIR_CX_daps_reset(MPIR_CX_daps_guard_t * g)
{
    __atomic_store_n(&g->on, MPIR_CX_DAPS_OFF, __ATOMIC_SEQ_CST);
    g->depth = 0;
    g->shared = 0;
    for (int i = 0; i < MPIR_CX_DAPS_SLOTS; i++)
        g->slots[i].owner = 0, g->slots[i].depth = 0;
}

#define MPIR_CX_DAPS_OWNER_ENTER() MPIR_CX_daps_enter(&MPIR_CX_daps_guard)
#define MPIR_CX_DAPS_OWNER_EXIT()  MPIR_CX_daps_exit(&MPIR_CX_daps_guard)

#endif /* MPICHCX_DAPS_H_INCLUDED */
