/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * MPICH-CX: set-up of the locks under VCI critical sections (see mpidu_cx_lock.h).
 */
#include "mpiimpl.h"
#include "cx_topology.h"

const char *const MPIDU_CX_lock_names[MPIDU_CX_NUM_LOCKS] = {
    "mutex", "ticket", "mcs", "clh", "clhub", "hclhub", "dsm", "futex"
};

_Thread_local cx_dsm_thread_t *MPIDU_CX_dsm_threads[MPIDU_CX_MAX_LOCKS];

const char *MPIDU_CX_lock_name(int kind)
{
    return (kind >= 0 && kind < MPIDU_CX_NUM_LOCKS) ? MPIDU_CX_lock_names[kind] : "(invalid)";
}

int MPIDU_CX_lock_parse(const char *name)
{
    for (int i = 0; i < MPIDU_CX_NUM_LOCKS; i++)
        if (!strcasecmp(name, MPIDU_CX_lock_names[i]))
            return i;
    return -1;
}

/* Never freed: a combiner may still read a finished thread's qnodes. */
cx_dsm_thread_t *MPIDU_CX_dsm_thread_slow(MPIDU_cx_lock_t * lock)
{
    cx_dsm_thread_t *t = MPL_aligned_alloc(CX_CACHELINE_SIZE,
                                           sizeof(cx_dsm_thread_t) + CX_CACHELINE_SIZE,
                                           MPL_MEM_THREAD);
    MPIR_Assert(t != NULL);
    cx_dsm_thread_init(t);
    MPIDU_CX_dsm_threads[lock->index] = t;
    return t;
}

static void dsm_apply_unset(void *req, void *ctx)
{
    /* CH4 installs the real apply function before any operation is combined */
    MPIR_Assert(0);
}

int MPIDU_CX_lock_init(MPIDU_cx_lock_t * l, int kind, int index, int num_numa_nodes)
{
    MPL_thread_id_t self;
    MPL_thread_self(&self);
    /* a platform where the thread pointer is not pthread_self() needs the
     * call in MPIDU_CX_thread_self */
    MPIR_Assert(MPIDU_CX_thread_self() == self);
    memset(l, 0, sizeof(*l));
    l->kind = kind;
    l->index = index;
    switch (kind) {
        case MPIDU_CX_LOCK_MUTEX:
            return pthread_mutex_init(&l->u.mutex, NULL);
        case MPIDU_CX_LOCK_TICKET:
            cx_ticket_init(&l->u.ticket);
            break;
        case MPIDU_CX_LOCK_MCS:
            cx_mcs_init(&l->u.mcs);
            break;
        case MPIDU_CX_LOCK_CLH:
            return cx_clh_init(&l->u.clh);
        case MPIDU_CX_LOCK_CLHUB:
            return cx_clhub_init(&l->u.clhub);
        case MPIDU_CX_LOCK_HCLHUB:
            return cx_hclhub_init(&l->u.hclhub, num_numa_nodes);
        case MPIDU_CX_LOCK_DSM:
            cx_dsm_init(&l->u.dsm, 1024, dsm_apply_unset, NULL);
            break;
        case MPIDU_CX_LOCK_FUTEX:
            cx_futex_init(&l->u.futex);
            break;
        default:
            return EINVAL;
    }
    return 0;
}

void MPIDU_CX_lock_destroy(MPIDU_cx_lock_t * l)
{
    switch (l->kind) {
        case MPIDU_CX_LOCK_MUTEX:
            pthread_mutex_destroy(&l->u.mutex);
            break;
        case MPIDU_CX_LOCK_CLH:
            cx_clh_destroy(&l->u.clh);
            break;
        case MPIDU_CX_LOCK_CLHUB:
            cx_clhub_destroy(&l->u.clhub);
            break;
        case MPIDU_CX_LOCK_HCLHUB:
            cx_hclhub_destroy(&l->u.hclhub);
            break;
        default:
            break;
    }
}
