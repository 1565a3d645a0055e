/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * MPICH-CX thread synchronization library: futex mutex, glibc's default mutex
 * algorithm (Drepper, "Futexes Are Tricky", mutex 3) with its try-lock (one
 * CAS) and release (one exchange) inline. Not FIFO. LockQ's default lock.
 * state: 0 free, 1 held, 2 held and a thread may be asleep on it.
 * Design: doc/design/vci-locks.md.
 */
#ifndef CX_FUTEX_H_INCLUDED
#define CX_FUTEX_H_INCLUDED

#include "cx_sync_common.h"
#ifdef __linux__
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

/* Polls of a held lock before a waiter goes to sleep.  0, as glibc's
 * default mutex, so that the lock behaves as the mutex when threads
 * outnumber cores (a spinning waiter burns the time slice the holder
 * needs); only the try-lock and release paths differ, being inline. */
#ifndef CX_FUTEX_SPINS
#define CX_FUTEX_SPINS 0
#endif

typedef struct {
    CX_CACHE_ALIGNED atomic_int state;
} cx_futex_lock_t;

static inline void cx_futex_init(cx_futex_lock_t * l)
{
    atomic_init(&l->state, 0);
}

/* Sleep while the state is still 2; wake one sleeper. Without futexes the
 * waiter yields instead, and nobody needs waking. */
static inline void cx_futex__wait(cx_futex_lock_t * l)
{
#ifdef __linux__
    syscall(SYS_futex, &l->state, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
#else
    sched_yield();
#endif
}

__attribute__((noinline, cold, unused))
static void cx_futex__wake(cx_futex_lock_t * l)
{
#ifdef __linux__
    syscall(SYS_futex, &l->state, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
#else
    (void) l;
#endif
}

static inline bool cx_futex_tryacquire(cx_futex_lock_t * l)
{
    int expected = 0;
    return atomic_compare_exchange_strong_explicit(&l->state, &expected, 1,
                                                   memory_order_acquire, memory_order_relaxed);
}

__attribute__((noinline, unused))
static void cx_futex__acquire_slow(cx_futex_lock_t * l)
{
    for (int i = 0; i < CX_FUTEX_SPINS; i++) {
        cx_cpu_relax();
        if (atomic_load_explicit(&l->state, memory_order_relaxed) == 0 && cx_futex_tryacquire(l))
            return;
    }
    /* from here on the state says "maybe sleepers", so our release wakes
     * one: a woken thread cannot tell whether others still sleep */
    while (atomic_exchange_explicit(&l->state, 2, memory_order_acquire) != 0)
        cx_futex__wait(l);
}

static inline void cx_futex_acquire(cx_futex_lock_t * l)
{
    if (!cx_futex_tryacquire(l))
        cx_futex__acquire_slow(l);
}

static inline void cx_futex_release(cx_futex_lock_t * l)
{
    if (atomic_exchange_explicit(&l->state, 0, memory_order_release) == 2)
        cx_futex__wake(l);
}

#endif /* CX_FUTEX_H_INCLUDED */
