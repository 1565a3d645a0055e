/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * MPICH-CX: the lock under a VCI critical section, chosen at MPI_Init. A mutex
 * whose `cx` is NULL is MPICH's; otherwise every first acquisition also runs the
 * VCI's queued operations (LockQ, CSync) before the caller's own critical
 * section, which keeps synchronized threads' operations in order.
 * Design: doc/design/vci-locks.md.
 */
#ifndef MPIDU_CX_LOCK_H_INCLUDED
#define MPIDU_CX_LOCK_H_INCLUDED

#include <pthread.h>
#include <stdbool.h>
#include "cx_sync_common.h"
#include "cx_ticket.h"
#include "cx_futex.h"
#include "cx_mcs.h"
#include "cx_clh.h"
#include "cx_clhub.h"
#include "cx_hclhub.h"
#include "cx_dsmsync.h"
#include "cx_lockq.h"
#include "cx_offload_q.h"

/* Lock kinds; the names are the values of MPIR_CVAR_CH4_CX_VCI_LOCK. */
enum {
    MPIDU_CX_LOCK_MUTEX,        /* pthread mutex (MPICH's own) */
    MPIDU_CX_LOCK_TICKET,
    MPIDU_CX_LOCK_MCS,
    MPIDU_CX_LOCK_CLH,
    MPIDU_CX_LOCK_CLHUB,        /* priority lock with unbounded bias */
    MPIDU_CX_LOCK_HCLHUB,       /* CLHub whose high-priority FIFO is a NUMA cohort lock */
    MPIDU_CX_LOCK_DSM,          /* CSync: DSM-Synch combining lock */
    MPIDU_CX_LOCK_FUTEX,        /* glibc's mutex algorithm, try-lock and release inline */
    MPIDU_CX_NUM_LOCKS
};

/* The largest number of VCIs CH4 can configure (6 bits of a request handle). */
#define MPIDU_CX_MAX_LOCKS 64

typedef struct MPIDU_cx_lock {
    union {
        pthread_mutex_t mutex;
        cx_ticket_lock_t ticket;
        cx_mcs_lock_t mcs;
        cx_clh_lock_t clh;
        cx_clhub_lock_t clhub;
        cx_hclhub_lock_t hclhub;
        cx_dsm_t dsm;
        cx_futex_lock_t futex;
    } u;
    int kind;
    int index;                  /* VCI number: selects the per-thread DSM state */
    /* LockQ: operations whose issuing thread failed the try-lock; the holder
     * runs them through `drain`.  NULL when the model queues nothing. */
    cx_lockq_t *queue;
    /* Offload: the executor's command queue, which the holder runs the same
     * way (an operation queued before a probe or a direct call of the same
     * thread is issued before it). */
    cx_offload_q_t *offload_q;
    void (*drain)(struct MPIDU_cx_lock * lock);
    /* counters behind the MPI_T pvars (updated by the lock holder, or relaxed) */
    unsigned long long trylock_failures;
} MPIDU_cx_lock_t;

/* Per-thread CSync state, one per VCI, allocated on first use. */
cx_dsm_thread_t *MPIDU_CX_dsm_thread_slow(MPIDU_cx_lock_t * lock);
extern _Thread_local cx_dsm_thread_t *MPIDU_CX_dsm_threads[MPIDU_CX_MAX_LOCKS];

static inline cx_dsm_thread_t *MPIDU_CX_dsm_thread(MPIDU_cx_lock_t * lock)
{
    cx_dsm_thread_t *t = MPIDU_CX_dsm_threads[lock->index];
    return t ? t : MPIDU_CX_dsm_thread_slow(lock);
}

static inline void MPIDU_CX_lock_acquire(MPIDU_cx_lock_t * l, bool low_priority)
{
    switch (l->kind) {
        case MPIDU_CX_LOCK_MUTEX:
            pthread_mutex_lock(&l->u.mutex);
            break;
        case MPIDU_CX_LOCK_TICKET:
            cx_ticket_acquire(&l->u.ticket);
            break;
        case MPIDU_CX_LOCK_MCS:
            cx_mcs_acquire(&l->u.mcs);
            break;
        case MPIDU_CX_LOCK_CLH:
            cx_clh_acquire(&l->u.clh);
            break;
        case MPIDU_CX_LOCK_CLHUB:
            if (low_priority)
                cx_clhub_acquire_low(&l->u.clhub);
            else
                cx_clhub_acquire(&l->u.clhub);
            break;
        case MPIDU_CX_LOCK_HCLHUB:
            if (low_priority)
                cx_hclhub_acquire_low(&l->u.hclhub);
            else
                cx_hclhub_acquire(&l->u.hclhub);
            break;
        case MPIDU_CX_LOCK_DSM:
            cx_dsm_acquire(&l->u.dsm, MPIDU_CX_dsm_thread(l));
            break;
        case MPIDU_CX_LOCK_FUTEX:
            cx_futex_acquire(&l->u.futex);
            break;
    }
}

__attribute__((always_inline))
static inline bool MPIDU_CX_lock_tryacquire(MPIDU_cx_lock_t * l)
{
    switch (l->kind) {
        case MPIDU_CX_LOCK_MUTEX:
            return pthread_mutex_trylock(&l->u.mutex) == 0;
        case MPIDU_CX_LOCK_TICKET:
            return cx_ticket_tryacquire(&l->u.ticket);
        case MPIDU_CX_LOCK_MCS:
            return cx_mcs_tryacquire(&l->u.mcs);
        case MPIDU_CX_LOCK_CLH:
            return cx_clh_tryacquire(&l->u.clh);
        case MPIDU_CX_LOCK_CLHUB:
            return cx_clhub_tryacquire(&l->u.clhub);
        case MPIDU_CX_LOCK_HCLHUB:
            return cx_hclhub_tryacquire(&l->u.hclhub);
        case MPIDU_CX_LOCK_FUTEX:
            return cx_futex_tryacquire(&l->u.futex);
        case MPIDU_CX_LOCK_DSM:
            /* CSync's progress; its issue path combines instead */
            return cx_dsm_tryacquire(&l->u.dsm, MPIDU_CX_dsm_thread(l));
    }
    return false;
}

__attribute__((always_inline))
static inline void MPIDU_CX_lock_release(MPIDU_cx_lock_t * l)
{
    switch (l->kind) {
        case MPIDU_CX_LOCK_MUTEX:
            pthread_mutex_unlock(&l->u.mutex);
            break;
        case MPIDU_CX_LOCK_TICKET:
            cx_ticket_release(&l->u.ticket);
            break;
        case MPIDU_CX_LOCK_MCS:
            cx_mcs_release(&l->u.mcs);
            break;
        case MPIDU_CX_LOCK_CLH:
            cx_clh_release(&l->u.clh);
            break;
        case MPIDU_CX_LOCK_CLHUB:
            cx_clhub_release(&l->u.clhub);
            break;
        case MPIDU_CX_LOCK_HCLHUB:
            cx_hclhub_release(&l->u.hclhub);
            break;
        case MPIDU_CX_LOCK_DSM:
            cx_dsm_release(&l->u.dsm, MPIDU_CX_dsm_thread(l));
            break;
        case MPIDU_CX_LOCK_FUTEX:
            cx_futex_release(&l->u.futex);
            break;
    }
}

/* After a first acquisition: run what other threads queued, oldest first. */
static inline void MPIDU_CX_lock_acquired(MPIDU_cx_lock_t * l)
{
    if (l->queue) {
        if (cx_lockq_pending(l->queue))
            l->drain(l);
    } else if (__builtin_expect(l->offload_q != NULL, 0) && !cx_offload_q_is_empty(l->offload_q)) {
        l->drain(l);
    }
}

/* pthread_self() without a call (whose register spills cost more than it
 * does): on x86-64 glibc a thread's pthread_t is the address of its thread
 * control block, which the thread pointer holds.  MPIDU_CX_lock_init
 * checks that the two agree.  Owners stored here are compared with
 * MPICH's MPL_thread_self() in its own critical-section macros. */
static inline MPL_thread_id_t MPIDU_CX_thread_self(void)
{
#if defined(__x86_64__) && defined(__GLIBC__) && __GNUC__ >= 11
    return (MPL_thread_id_t) __builtin_thread_pointer();
#else
    MPL_thread_id_t self;
    MPL_thread_self(&self);
    return self;
#endif
}

/* The critical-section operations behind MPID_THREAD_CS_{ENTER,EXIT,YIELD}(VCI, m)
 * when m.cx is set.  owner/count keep MPICH's bookkeeping, and recursion is
 * allowed: an operation run from the queue re-enters its VCI's section. */
/* A thread re-entering a section it holds counts the recursion; true then. */
/* always_inline: on LockQ's issue path, inlined at the call site */
__attribute__((always_inline))
static inline bool MPIDU_CX_cs_reenter(MPIDU_Thread_mutex_t * m, MPL_thread_id_t * self)
{
    int equal = 0;
    *self = MPIDU_CX_thread_self();
    MPL_thread_same(self, &m->owner, &equal);
    if (equal)
        m->count++;
    return equal;
}

/* After a first acquisition: owner bookkeeping, then the queue. */
static inline void MPIDU_CX_cs_taken(MPIDU_Thread_mutex_t * m, MPL_thread_id_t self)
{
    m->owner = self;
    m->count = 1;
    MPIDU_CX_lock_acquired(m->cx);
}

static inline void MPIDU_CX_cs_enter_prio(MPIDU_Thread_mutex_t * m, bool low_priority)
{
    MPL_thread_id_t self;
    if (MPIDU_CX_cs_reenter(m, &self))
        return;
    MPIDU_CX_lock_acquire(m->cx, low_priority);
    MPIDU_CX_cs_taken(m, self);
}

static inline void MPIDU_CX_cs_enter(MPIDU_Thread_mutex_t * m)
{
    MPIDU_CX_cs_enter_prio(m, false);
}

/* LockQ's issue path: true when the lock was taken (queue drained). */
__attribute__((always_inline))
static inline bool MPIDU_CX_cs_tryenter(MPIDU_Thread_mutex_t * m)
{
    MPL_thread_id_t self;
    if (MPIDU_CX_cs_reenter(m, &self))
        return true;
    if (!MPIDU_CX_lock_tryacquire(m->cx)) {
        m->cx->trylock_failures++;      /* racy on purpose: a statistic */
        return false;
    }
    MPIDU_CX_cs_taken(m, self);
    return true;
}

/* LockQ's uncontended issue (MPIDI_CX_lockq_fast_enter): the lock alone,
 * no recursion check and no queue run.  A thread issuing from user code
 * holds no VCI section; one that does fails here, and the slow path, which
 * checks, takes over. */
__attribute__((always_inline))
static inline bool MPIDU_CX_cs_tryenter_first(MPIDU_Thread_mutex_t * m)
{
    if (!MPIDU_CX_lock_tryacquire(m->cx))
        return false;
    m->owner = MPIDU_CX_thread_self();
    m->count = 1;
    return true;
}

/* Leaving a section: always inline on LockQ's issue path (the compiler may
 * move MPIDU_CX_cs_exit's release out of line elsewhere). */
__attribute__((always_inline))
static inline void MPIDU_CX_cs_exit_inline(MPIDU_Thread_mutex_t * m)
{
    if (--m->count == 0) {
        m->owner = 0;
        MPIDU_CX_lock_release(m->cx);
    }
}

static inline void MPIDU_CX_cs_exit(MPIDU_Thread_mutex_t * m)
{
    MPIDU_CX_cs_exit_inline(m);
}

/* The progress loop's yield: re-enter at low priority (priority locks). */
static inline void MPIDU_CX_cs_yield(MPIDU_Thread_mutex_t * m)
{
    int saved = m->count;
    m->count = 0;
    m->owner = 0;
    MPIDU_CX_lock_release(m->cx);
    MPL_thread_yield();
    MPIDU_CX_lock_acquire(m->cx, true);
    m->owner = MPIDU_CX_thread_self();
    m->count = saved;
    MPIDU_CX_lock_acquired(m->cx);
}

/* MPIDUI_THREAD_CS_{ENTER,EXIT,YIELD}_VCI (mpidu_thread_fallback.h, under
 * MPICH_THREAD_GRANULARITY__VCI): a VCI lock without a CX kind (cx == NULL)
 * is MPICH's recursive mutex; one with a CX kind takes the CX path, only
 * when threads are on. */
#define MPIDU_CX_THREAD_CS_ENTER_VCI(mutex)                             \
    do {                                                                \
        if ((mutex).cx == NULL) {                                       \
            MPIDUI_THREAD_CS_ENTER(mutex);                              \
        } else if (MPIR_ThreadInfo.isThreaded) {                        \
            MPIDU_CX_cs_enter(&(mutex));                                \
        }                                                               \
    } while (0)
#define MPIDU_CX_THREAD_CS_EXIT_VCI(mutex)                              \
    do {                                                                \
        if ((mutex).cx == NULL) {                                       \
            MPIDUI_THREAD_CS_EXIT(mutex);                               \
        } else if (MPIR_ThreadInfo.isThreaded) {                        \
            MPIDU_CX_cs_exit(&(mutex));                                 \
        }                                                               \
    } while (0)
#define MPIDU_CX_THREAD_CS_YIELD_VCI(mutex)                             \
    do {                                                                \
        if ((mutex).cx == NULL) {                                       \
            MPIDUI_THREAD_CS_YIELD(mutex);                              \
        } else if (MPIR_ThreadInfo.isThreaded) {                        \
            MPIDU_CX_cs_yield(&(mutex));                                \
        }                                                               \
    } while (0)

int MPIDU_CX_lock_init(MPIDU_cx_lock_t * l, int kind, int index, int num_numa_nodes);
void MPIDU_CX_lock_destroy(MPIDU_cx_lock_t * l);
const char *MPIDU_CX_lock_name(int kind);
int MPIDU_CX_lock_parse(const char *name);      /* -1 when unknown */
extern const char *const MPIDU_CX_lock_names[MPIDU_CX_NUM_LOCKS];

#endif /* MPIDU_CX_LOCK_H_INCLUDED */
