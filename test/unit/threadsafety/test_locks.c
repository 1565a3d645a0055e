/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * Ticket, MCS, CLH and futex locks: mutual exclusion (2, 4, 16 threads,
 * with and without tryacquire mixed in), two locks of the same type held at
 * once, FIFO service order (not futex: it is not FIFO), tryacquire
 * semantics, and for futex, sleepers woken.
 *
 *     test_locks ticket|mcs|clh|futex mutex|nested|fifo|try|sleepers
 */
#include "test_common.h"
#include "cx_ticket.h"
#include "cx_mcs.h"
#include "cx_clh.h"
#include "cx_futex.h"

static void ticket_acquire(void *l)
{
    cx_ticket_acquire(l);
}

static void ticket_release(void *l)
{
    cx_ticket_release(l);
}

static bool ticket_try(void *l)
{
    return cx_ticket_tryacquire(l);
}

static uintptr_t ticket_token(void *l)
{
    return atomic_load(&((cx_ticket_lock_t *) l)->next);
}

static void mcs_acquire(void *l)
{
    cx_mcs_acquire(l);
}

static void mcs_release(void *l)
{
    cx_mcs_release(l);
}

static bool mcs_try(void *l)
{
    return cx_mcs_tryacquire(l);
}

static uintptr_t mcs_token(void *l)
{
    return (uintptr_t) atomic_load(&((cx_mcs_lock_t *) l)->tail);
}

static void clh_acquire(void *l)
{
    cx_clh_acquire(l);
}

static void clh_release(void *l)
{
    cx_clh_release(l);
}

static bool clh_try(void *l)
{
    return cx_clh_tryacquire(l);
}

static uintptr_t clh_token(void *l)
{
    return (uintptr_t) atomic_load(&((cx_clh_lock_t *) l)->tail);
}

static void futex_acquire(void *l)
{
    cx_futex_acquire(l);
}

static void futex_release(void *l)
{
    cx_futex_release(l);
}

static bool futex_try(void *l)
{
    return cx_futex_tryacquire(l);
}

static const t_lock_ops_t ticket_ops = {
    "ticket", ticket_acquire, ticket_release, ticket_try, NULL, ticket_token
};
static const t_lock_ops_t mcs_ops = { "mcs", mcs_acquire, mcs_release, mcs_try, NULL, mcs_token };
static const t_lock_ops_t clh_ops = { "clh", clh_acquire, clh_release, clh_try, NULL, clh_token };

static const t_lock_ops_t futex_ops = {
    "futex", futex_acquire, futex_release, futex_try, NULL, NULL
};

typedef struct {
    CX_CACHE_ALIGNED cx_ticket_lock_t ticket[2];
    cx_mcs_lock_t mcs[2];
    cx_clh_lock_t clh[2];
    cx_futex_lock_t futex[2];
} locks_t;

static locks_t L;

/* MCS with caller-owned nodes (acquire) mixed with cache nodes (the
 * "low" slot of the mixed test) on the same lock */
static _Thread_local cx_mcs_node_t own_node;
static _Thread_local bool own_used;

static void mcs_own_acquire(void *l)
{
    cx_mcs_acquire_node(l, &own_node);
    own_used = true;
}

static void mcs_cache_acquire(void *l)
{
    cx_mcs_acquire(l);
    own_used = false;
}

static void mcs_own_release(void *l)
{
    if (own_used)
        cx_mcs_release_node(l, &own_node);
    else
        cx_mcs_release(l);
}

static const t_lock_ops_t mcs_own_ops = {
    "mcs-own-node", mcs_own_acquire, mcs_own_release, NULL, mcs_cache_acquire, NULL
};

/* Threads that found the lock held past their spinning sleep in the
 * kernel: the state says so (2), and every one of them is woken and gets
 * the lock once the holder lets go (a lost wake-up hangs here, and the
 * test command's timeout fails it). */
static atomic_int sleepers_done;

static void *futex_sleeper(void *p)
{
    t_thread_t *t = p;
    cx_futex_acquire(t->arg);
    atomic_fetch_add(&sleepers_done, 1);
    cx_futex_release(t->arg);
    return NULL;
}

static void futex_sleepers_test(cx_futex_lock_t * l)
{
    enum { N = 8 };
    t_thread_t th[N];
    cx_futex_acquire(l);
    CHECK(atomic_load(&l->state) == 1, "held without waiters: state %d", atomic_load(&l->state));
    for (int i = 0; i < N; i++)
        t_start(&th[i], i, futex_sleeper, l);
    t_sleep_ms(50);
    CHECK(atomic_load(&l->state) == 2, "waiters past their spins, but state %d",
          atomic_load(&l->state));
    CHECK(atomic_load(&sleepers_done) == 0, "a waiter got a held lock");
    cx_futex_release(l);
    for (int i = 0; i < N; i++)
        t_join(&th[i]);
    CHECK(atomic_load(&sleepers_done) == N, "%d of %d waiters got the lock",
          atomic_load(&sleepers_done), N);
    CHECK(atomic_load(&l->state) == 0, "free at the end, but state %d", atomic_load(&l->state));
    printf("futex sleepers: %d waiters slept and were woken: ok\n", N);
}

int main(int argc, char **argv)
{
    const t_lock_ops_t *ops;
    void *l0, *l1;

    if (argc != 3) {
        fprintf(stderr, "usage: %s ticket|mcs|clh|futex mutex|nested|fifo|try|sleepers\n", argv[0]);
        return 2;
    }
    cx_ticket_init(&L.ticket[0]);
    cx_ticket_init(&L.ticket[1]);
    cx_mcs_init(&L.mcs[0]);
    cx_mcs_init(&L.mcs[1]);
    CHECK(cx_clh_init(&L.clh[0]) == 0 && cx_clh_init(&L.clh[1]) == 0, "cx_clh_init");
    cx_futex_init(&L.futex[0]);
    cx_futex_init(&L.futex[1]);

    if (!strcmp(argv[1], "ticket")) {
        ops = &ticket_ops;
        l0 = &L.ticket[0];
        l1 = &L.ticket[1];
    } else if (!strcmp(argv[1], "mcs")) {
        ops = &mcs_ops;
        l0 = &L.mcs[0];
        l1 = &L.mcs[1];
    } else if (!strcmp(argv[1], "clh")) {
        ops = &clh_ops;
        l0 = &L.clh[0];
        l1 = &L.clh[1];
    } else if (!strcmp(argv[1], "futex")) {
        ops = &futex_ops;
        l0 = &L.futex[0];
        l1 = &L.futex[1];
    } else {
        fprintf(stderr, "unknown lock %s\n", argv[1]);
        return 2;
    }

    if (!strcmp(argv[2], "mutex")) {
        static const int nt[] = { 2, 4, 16 };
        for (int i = 0; i < 3; i++) {
            t_mutex_test(ops, l0, nt[i], 200000 / nt[i], false);
            t_mutex_test(ops, l0, nt[i], 200000 / nt[i], true);
        }
        if (ops == &mcs_ops)
            t_mutex_test(&mcs_own_ops, l0, 4, 50000, true);
    } else if (!strcmp(argv[2], "nested")) {
        t_nested_test(ops, l0, l1, 2, 100000, true);
        t_nested_test(ops, l0, l1, 4, 50000, true);
        t_nested_test(ops, l0, l1, 16, 10000, true);
    } else if (!strcmp(argv[2], "fifo")) {
        t_fifo_test(ops, l0, 4, 20 / (T_SCALE > 1 ? 2 : 1));
        t_fifo_test(ops, l0, 16, 5);
    } else if (!strcmp(argv[2], "try")) {
        t_try_test(ops, l0);
    } else if (!strcmp(argv[2], "sleepers") && ops == &futex_ops) {
        futex_sleepers_test(&L.futex[0]);
    } else {
        fprintf(stderr, "unknown test %s\n", argv[2]);
        return 2;
    }
    cx_clh_destroy(&L.clh[0]);
    cx_clh_destroy(&L.clh[1]);
    return 0;
}
