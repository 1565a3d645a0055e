/*
 * Ticket, MCS and CLH locks: mutual exclusion (2, 4, 16 threads, with and
 * without tryacquire mixed in), two locks of the same type held at once,
 * FIFO service order, tryacquire semantics.
 *
 *     test_locks ticket|mcs|clh mutex|nested|fifo|try
 */
#include "test_common.h"
#include "cx_ticket.h"
#include "cx_mcs.h"
#include "cx_clh.h"

static void ticket_acquire(void *l) { cx_ticket_acquire(l); }
static void ticket_release(void *l) { cx_ticket_release(l); }
static bool ticket_try(void *l) { return cx_ticket_tryacquire(l); }
static uintptr_t ticket_token(void *l)
{
    return atomic_load(&((cx_ticket_lock_t *) l)->next);
}

static void mcs_acquire(void *l) { cx_mcs_acquire(l); }
static void mcs_release(void *l) { cx_mcs_release(l); }
static bool mcs_try(void *l) { return cx_mcs_tryacquire(l); }
static uintptr_t mcs_token(void *l)
{
    return (uintptr_t) atomic_load(&((cx_mcs_lock_t *) l)->tail);
}

static void clh_acquire(void *l) { cx_clh_acquire(l); }
static void clh_release(void *l) { cx_clh_release(l); }
static bool clh_try(void *l) { return cx_clh_tryacquire(l); }
static uintptr_t clh_token(void *l)
{
    return (uintptr_t) atomic_load(&((cx_clh_lock_t *) l)->tail);
}

static const t_lock_ops_t ticket_ops = {
    "ticket", ticket_acquire, ticket_release, ticket_try, NULL, ticket_token
};
static const t_lock_ops_t mcs_ops = { "mcs", mcs_acquire, mcs_release, mcs_try, NULL, mcs_token };
static const t_lock_ops_t clh_ops = { "clh", clh_acquire, clh_release, clh_try, NULL, clh_token };

typedef struct {
    CX_CACHE_ALIGNED cx_ticket_lock_t ticket[2];
    cx_mcs_lock_t mcs[2];
    cx_clh_lock_t clh[2];
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

int main(int argc, char **argv)
{
    const t_lock_ops_t *ops;
    void *l0, *l1;

    if (argc != 3) {
        fprintf(stderr, "usage: %s ticket|mcs|clh mutex|nested|fifo|try\n", argv[0]);
        return 2;
    }
    cx_ticket_init(&L.ticket[0]);
    cx_ticket_init(&L.ticket[1]);
    cx_mcs_init(&L.mcs[0]);
    cx_mcs_init(&L.mcs[1]);
    CHECK(cx_clh_init(&L.clh[0]) == 0 && cx_clh_init(&L.clh[1]) == 0, "cx_clh_init");

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
    } else {
        fprintf(stderr, "unknown test %s\n", argv[2]);
        return 2;
    }
    cx_clh_destroy(&L.clh[0]);
    cx_clh_destroy(&L.clh[1]);
    return 0;
}
