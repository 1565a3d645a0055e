/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * MPICH-CX thread synchronization library: common definitions. Cache-line
 * alignment, CPU relax, bounded spinning that falls back to sched_yield, backoff,
 * the per-thread try-lock budget of MPI_Test, when a polling waiter yields, and
 * a test-and-test-and-set spin lock. Design: doc/design/vci-locks.md.
 */
#ifndef CX_SYNC_COMMON_H_INCLUDED
#define CX_SYNC_COMMON_H_INCLUDED

#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Lock and node types carry this alignment: allocate them statically, as
 * thread-locals, or with aligned_alloc(CX_CACHELINE_SIZE, ...), not with a
 * plain malloc. */
#define CX_CACHELINE_SIZE 64
#define CX_CACHE_ALIGNED _Alignas(CX_CACHELINE_SIZE)

/* Relax iterations a waiter spins before it calls sched_yield (then again
 * every as many). A waiter that spins this long
 * is probably waiting for a descheduled thread (oversubscription): yielding
 * lets that thread run, so FIFO locks do not stall for whole time slices.
 * Long enough not to add syscalls to hand-offs between running threads.
 * Override at build time. */
#ifndef CX_SPIN_YIELD_AFTER
#define CX_SPIN_YIELD_AFTER 1024
#endif

static inline void cx_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __asm__ __volatile__("pause":::"memory");
#elif defined(__aarch64__)
    __asm__ __volatile__("yield":::"memory");
#else
    __asm__ __volatile__("":::"memory");
#endif
}

/* Gives the core to another runnable thread, if one waits for it.  Not
 * MPICH's MPL_thread_yield, which does nothing on Linux (MPL's configure
 * picks "nothing" there, judging sched_yield broken since Linux 2.6.23): a
 * thread that polls in a wait and "yields" that way keeps its core for its
 * whole time slice while a thread beside it that could progress waits. */
static inline void cx_yield(void)
{
    sched_yield();
}

/* When a thread polling in a wait yields (MPIR_CVAR_CH4_CX_WAIT_YIELD_AFTER):
 * once its polls have found nothing for after_ns, and then after every
 * poll that finds nothing, until one progresses; after_ns 0: after every
 * poll in vain; negative: never.  A ping-pong whose replies come within
 * after_ns never yields (a yield there is a context switch to a sibling
 * that usually has nothing to do either), while a thread that waits for a
 * peer that is not running leaves its core after after_ns instead of
 * keeping it for the rest of its time slice.  One per wait; `now` is read
 * only after polls in vain, and only with a positive after_ns. */
typedef struct {
    long long futile_since;     /* clock at the first poll in vain in a row; 0: none */
} cx_wait_yield_t;

#define CX_WAIT_YIELD_INITIALIZER { 0 }

static inline bool cx_wait_yield_due(cx_wait_yield_t * y, bool progressed, long long after_ns,
                                     long long (*now)(void))
{
    if (progressed || after_ns < 0) {
        y->futile_since = 0;
        return false;
    }
    if (after_ns == 0)
        return true;
    long long t = now();
    if (y->futile_since == 0) {
        y->futile_since = t;
        return false;
    }
    return t - y->futile_since >= after_ns;
}

static inline void cx_spin_wait(unsigned iterations)
{
    for (unsigned i = 0; i < iterations; i++)
        cx_cpu_relax();
}

/* One step of a blocking spin loop. *spins counts the steps of the current
 * wait (start it at 0). Spins with cx_cpu_relax at first, then yields the CPU
 * every CX_SPIN_YIELD_AFTER steps. */
static inline void cx_spin_pause(unsigned *spins)
{
    if (++*spins < CX_SPIN_YIELD_AFTER) {
        cx_cpu_relax();
    } else {
        *spins = 0;
        sched_yield();
    }
}

/* Like cx_spin_pause, for a wait step of n relax iterations (backoff): the
 * iterations count towards the yield threshold. */
static inline void cx_spin_pause_n(unsigned *spins, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        cx_cpu_relax();
    *spins += n;
    if (*spins >= CX_SPIN_YIELD_AFTER) {
        *spins = 0;
        sched_yield();
    }
}

/* ---- per-thread trylock budget for nonblocking progress (csync-lockq §3.5) ----
 *
 * Kept by the caller across successive MPI_Test calls. Between two trylock
 * attempts the caller skips `countdown` calls; the gap doubles on every failed
 * attempt up to max_delay, and after max_failures consecutive failures the
 * caller must take the lock blocking so that a repeated MPI_Test eventually
 * progresses. Zero-initialised = ready to try. */
typedef struct {
    uint32_t delay, countdown, failures;
} cx_test_backoff_t;

/* true when a trylock should be attempted now; otherwise consumes one call */
static inline bool cx_test_backoff_ready(cx_test_backoff_t * b)
{
    if (b->countdown == 0)
        return true;
    b->countdown--;
    return false;
}

static inline void cx_test_backoff_failed(cx_test_backoff_t * b, uint32_t max_delay)
{
    if (b->delay == 0)
        b->delay = 1;
    else
        b->delay = (b->delay > max_delay / 2) ? max_delay : 2 * b->delay;
    if (b->delay == 0)  /* max_delay 0: still wait one call */
        b->delay = 1;
    b->countdown = b->delay;
    if (b->failures != UINT32_MAX)
        b->failures++;
}

static inline void cx_test_backoff_succeeded(cx_test_backoff_t * b)
{
    b->delay = 0;
    b->countdown = 0;
    b->failures = 0;
}

static inline bool cx_test_backoff_must_block(const cx_test_backoff_t * b, uint32_t max_failures)
{
    return b->failures >= max_failures;
}

/* ---- test-and-test-and-set spin lock on an atomic_int (0 = free) ----
 * No backoff: CLHub's bias and HCLHub's global lock are plain TAS locks by
 * design (the spinner that holds the line wins, which is the point). */

static inline bool cx_tas_tryacquire(atomic_int * f)
{
    /* read first so that a failing try does not steal the line from the owner */
    return atomic_load_explicit(f, memory_order_relaxed) == 0 &&
        atomic_exchange_explicit(f, 1, memory_order_acquire) == 0;
}

static inline void cx_tas_acquire(atomic_int * f)
{
    unsigned spins = 0;
    while (!cx_tas_tryacquire(f)) {
        while (atomic_load_explicit(f, memory_order_relaxed) != 0)
            cx_spin_pause(&spins);
    }
}

static inline void cx_tas_release(atomic_int * f)
{
    atomic_store_explicit(f, 0, memory_order_release);
}

#endif /* CX_SYNC_COMMON_H_INCLUDED */
