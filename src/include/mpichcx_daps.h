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
 * Each thread of the rank counts its nesting in a slot of its own (a
 * shared counter would move between the threads' cores on every call); an
 * initial-exec thread-local pointer finds it in two instructions (libmpi is
 * a dlmopen'ed -fPIC library, where the default TLS model costs a call to
 * __tls_get_addr). Initial-exec puts a library's whole TLS block in glibc's
 * small static TLS reserve, so the pointer lives in a 16-byte library of
 * its own (libmpichcx_tls). A thread claims its slot at its first entry
 * and keeps it (a slot belongs to the guard, so a dead thread's is never
 * freed memory); with all taken it counts in a shared counter with locked
 * instructions.
 * The owner pays one add and a load per entry: the worker sets a busy bit
 * in the guard's `on` word first and forces the ordering with membarrier(2)
 * before it reads the depths (an asymmetric Dekker protocol; all PiP tasks
 * are threads of one process), and the owner's entry reads that word after
 * its add. Code of this rank that the worker itself runs (the victim's
 * progress freeing a handle) must not wait for itself: the worker's thread
 * has no slot in this library (it never entered it outside a steal), so
 * its entries take the slow path, which recognizes it and counts nothing.
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

/* on: whether peers may run this rank's progress; the busy bit is set
 * while a worker is (about to be) inside */
#define MPIR_CX_DAPS_OFF 0
#define MPIR_CX_DAPS_ON 1
#define MPIR_CX_DAPS_BUSY 2

/* Per-thread nesting slots. */
#define MPIR_CX_DAPS_SLOTS 16

typedef struct {
    uintptr_t owner;            /* the thread counting here (pthread_self); 0: free */
    int depth;                  /* that thread's nesting in MPI calls; it alone writes it */
} __attribute__((aligned(64))) MPIR_CX_daps_slot_t;

typedef struct MPIR_CX_daps_guard {
    int on;                     /* MPIR_CX_DAPS_OFF or _ON, | BUSY */
    int worker __attribute__((aligned(64)));    /* 1: a worker holds this rank (workers' lock) */
    pthread_t worker_thread;    /* that worker, set while worker is 1 */
    int shared;                 /* nesting of threads without a slot (locked) */
    int claimed;                /* slots[0, claimed) have owners (claimed in order) */
    MPIR_CX_daps_slot_t slots[MPIR_CX_DAPS_SLOTS];      /* each thread's nesting */
} __attribute__((aligned(64))) MPIR_CX_daps_guard_t;

extern MPIR_CX_daps_guard_t MPIR_CX_daps_guard MPIR_CX_DAPS_HIDDEN;

/* The calling thread's slot depth in this library's guard (NULL: none
 * yet). One guard per library: a thread counts in the guard it first
 * entered. Initial-exec (two instructions), defined in libmpichcx_tls:
 * each PiP namespace loads its own copy of that library too. */
#define MPIR_CX_DAPS_TLS __attribute__((tls_model("initial-exec")))
extern __thread int *MPIR_CX_daps_my_depth MPIR_CX_DAPS_TLS;

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
 * view: read after its fence; a slot is claimed before it counts). */
static inline bool MPIR_CX_daps_owner_inside(MPIR_CX_daps_guard_t * g)
{
    if (__atomic_load_n(&g->shared, __ATOMIC_ACQUIRE))
        return true;
    int n = __atomic_load_n(&g->claimed, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++)
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

/* The entry saw a worker inside: back out, let it finish, enter for good.
 * The worker itself (a thread that has a slot here too) stays counted and
 * goes on. */
static MPIR_CX_DAPS_SLOW void MPIR_CX_daps_enter_slow(MPIR_CX_daps_guard_t * g, int *d, bool shared)
{
    if (MPIR_CX_daps_in_worker(g))
        return;
    for (;;) {
        MPIR_CX_daps_count(d, -1, shared);
        MPIR_CX_daps_wait_worker(g);
        MPIR_CX_daps_count(d, 1, shared);
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        if (!(__atomic_load_n(&g->on, __ATOMIC_ACQUIRE) & MPIR_CX_DAPS_BUSY))
            return;
    }
}

/* A thread without a slot claims the first free one (in order, so workers
 * read only slots[0, claimed)); NULL when all are taken. */
static inline int *MPIR_CX_daps_claim(MPIR_CX_daps_guard_t * g)
{
    uintptr_t self = (uintptr_t) pthread_self();
    for (int i = 0; i < MPIR_CX_DAPS_SLOTS; i++) {
        uintptr_t free_slot = 0;
        if (!__atomic_load_n(&g->slots[i].owner, __ATOMIC_RELAXED) &&
            __atomic_compare_exchange_n(&g->slots[i].owner, &free_slot, self, false,
                                        __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {
            int n = __atomic_load_n(&g->claimed, __ATOMIC_RELAXED);
            while (n < i + 1 && !__atomic_compare_exchange_n(&g->claimed, &n, i + 1, false,
                                                             __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
            return &g->slots[i].depth;
        }
    }
    return NULL;
}

/* Threads beyond the slots: their own nesting in the shared counter (the
 * worker cannot read this one; it only tells exits of theirs from those
 * of a thread that never counted). */
extern __thread int MPIR_CX_daps_shared_depth MPIR_CX_DAPS_TLS;

/* Entries and exits off the fast path: the busy bit is set (the worker's
 * own entries count nothing; the owner's wait for it), a thread without a
 * slot yet, or beyond the slots. */
static MPIR_CX_DAPS_SLOW void MPIR_CX_daps_enter_other(MPIR_CX_daps_guard_t * g)
{
    int on = __atomic_load_n(&g->on, __ATOMIC_ACQUIRE);
    if ((on & MPIR_CX_DAPS_BUSY) && MPIR_CX_daps_in_worker(g))
        return; /* the worker, in code of ours it runs */
    if (!(on & MPIR_CX_DAPS_ON))
        return; /* turned off meanwhile */
    int *d = MPIR_CX_daps_my_depth;
    bool shared = false;
    if (!d && !MPIR_CX_daps_shared_depth)
        d = MPIR_CX_daps_my_depth = MPIR_CX_daps_claim(g);
    if (!d) {
        shared = true;
        d = &g->shared;
        MPIR_CX_daps_shared_depth++;
    }
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
    if (!(on & MPIR_CX_DAPS_ON) || !MPIR_CX_daps_shared_depth)
        return; /* off, or leaving a call entered before the guard was on */
    MPIR_CX_daps_shared_depth--;
    MPIR_CX_daps_count(&g->shared, -1, true);
}

/* The fast paths, with the guard on: the thread's slot from its TLS
 * pointer, an add, and a load of on (which must be exactly ON: no worker
 * busy). */
static inline __attribute__((always_inline))
void MPIR_CX_daps_enter(MPIR_CX_daps_guard_t * g)
{
    if (__builtin_expect(__atomic_load_n(&g->on, __ATOMIC_RELAXED), 0)) {
        int *d = MPIR_CX_daps_my_depth;
        if (__builtin_expect(!d, 0)) {
            MPIR_CX_daps_enter_other(g);
            return;
        }
        MPIR_CX_DAPS_OWN_ADD(*d, 1);
        /* the compiler keeps the add before the load; the worker's
         * membarrier orders them in the processor */
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        if (__builtin_expect(__atomic_load_n(&g->on, __ATOMIC_RELAXED) != MPIR_CX_DAPS_ON, 0))
            MPIR_CX_daps_enter_slow(g, d, false);
    }
}

/* A thread with a slot that leaves while a worker holds the busy bit (about
 * to see it inside and back off) counts as an owner: the worker has none. */
static inline __attribute__((always_inline))
void MPIR_CX_daps_exit(MPIR_CX_daps_guard_t * g)
{
    if (__builtin_expect(__atomic_load_n(&g->on, __ATOMIC_RELAXED), 0)) {
        int *d = MPIR_CX_daps_my_depth;
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        if (__builtin_expect(!d, 0))
            MPIR_CX_daps_exit_other(g);
        else
            MPIR_CX_DAPS_OWN_ADD(*d, -1);
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

/* Turning the guard on (MPI_Init's end, nobody inside MPI) and off
 * (MPI_Finalize's start, no worker inside). Slots stay claimed: their
 * threads keep pointers to them. */
static inline void MPIR_CX_daps_turn_on(MPIR_CX_daps_guard_t * g)
{
    __atomic_store_n(&g->on, MPIR_CX_DAPS_ON, __ATOMIC_SEQ_CST);
}

static inline void MPIR_CX_daps_reset(MPIR_CX_daps_guard_t * g)
{
    __atomic_store_n(&g->on, MPIR_CX_DAPS_OFF, __ATOMIC_SEQ_CST);
    g->shared = 0;
    for (int i = 0; i < MPIR_CX_DAPS_SLOTS; i++)
        g->slots[i].depth = 0;
}

#define MPIR_CX_DAPS_OWNER_ENTER() MPIR_CX_daps_enter(&MPIR_CX_daps_guard)
#define MPIR_CX_DAPS_OWNER_EXIT()  MPIR_CX_daps_exit(&MPIR_CX_daps_guard)

#endif /* MPICHCX_DAPS_H_INCLUDED */
