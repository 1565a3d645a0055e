/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 */
/* MPICH-CX's thread-safety models under CH4's per-VCI critical sections
 * (direct, lockq, csync, hclhub-usc, hclhub-ksc, offload;
 * doc/design/thread-safety.md, doc/design/offload.md):
 * their state, the inline parts of their issue and progress paths, and the
 * out-of-line entry points (cx_mt_issue.c, generated from cx_mt_ops.h). */
#ifndef CX_MT_H_INCLUDED
#define CX_MT_H_INCLUDED

#include "cx_mt_ops.h"
#include "cx_issued.h"
#include "../shm/ipc/pip/pip_steal_hooks.h"
#include "../shm/ipc/pip/pip_daps_hooks.h"

enum {
    MPIDI_CX_MT_DIRECT,
    MPIDI_CX_MT_LOCKQ,
    MPIDI_CX_MT_CSYNC,
    MPIDI_CX_MT_OFFLOAD,
    MPIDI_CX_NUM_MT
};

/* The operations another thread may issue: point-to-point first, then
 * one-sided ones (cx_mt_ops.h). */
/* *INDENT-OFF* */
enum {
#define OP_CODE(OP_, name_, vci_, params_, args_, descr_, dargs_, req_) MPIDI_CX_OP_##OP_,
    MPIDI_CX_OPS(OP_CODE)
#undef OP_CODE
};
/* *INDENT-ON* */

/* The arguments of a one-sided operation. */
typedef struct {
    const void *origin_addr;
    int origin_count;
    MPI_Datatype origin_datatype;
    const void *compare_addr;
    void *result_addr;
    int result_count;
    MPI_Datatype result_datatype;
    int target_rank;
    MPI_Aint target_disp;
    int target_count;
    MPI_Datatype target_datatype;
    MPI_Op op;
    MPIR_Win *win;
} MPIDI_CX_rma_args_t;

/* One operation handed to another thread: queued (LockQ, heap) or announced
 * (CSync, the issuer's stack). */
typedef struct MPIDI_CX_descr {
    /* LockQ and offload: in the VCI's issued operations (cx_issued.h) */
    cx_issued_node_t issued;
    struct MPIDI_CX_descr *next_spent;  /* LockQ: the VCI's spent descriptors */
    int op;
    int vci;
    const void *send_buf;
    void *recv_buf;
    MPI_Aint count;
    MPI_Datatype datatype;
    int rank;
    int tag;
    MPIR_Comm *comm;
    int context_offset;
    MPIDI_av_entry_t *av;
    MPIDI_CX_rma_args_t rma;    /* one-sided operations */
    /* LockQ: the request the user holds (a proxy) and the one the transport made */
    MPIR_Request *proxy;
    MPIR_Request *real;
    int cancelled;              /* cancelled before it was issued */
    /* CSync: where the issuer wants its request and error code */
    MPIR_Request **reqp;
    int mpi_errno;
} MPIDI_CX_descr_t;

/* How a thread blocked in MPI_Wait/MPI_Waitall waits. */
enum {
    MPIDI_CX_WAIT_POLL,         /* MPICH's: every waiting thread polls progress */
    MPIDI_CX_WAIT_USC,          /* selective reactivation, waiters spin */
    MPIDI_CX_WAIT_KSC,          /* selective reactivation, waiters sleep */
    MPIDI_CX_WAIT_AUTO,         /* poll while few threads wait, else KSC */
    MPIDI_CX_WAIT_OFFLOAD       /* offload's: sleep until the executor completed them */
};

typedef struct {
    int model;                  /* MPIDI_CX_MT_* */
    const char *model_name;     /* as MPIR_CVAR_CH4_MT_MODEL names it */
    int wait_kind;              /* MPIDI_CX_WAIT_* */
    int lock_kind;              /* MPIDU_CX_LOCK_* */
    bool server_idle;           /* the polling server moves to SCHED_IDLE */
    bool server_park;           /* ... or parks until a core goes idle */
    int server_idle_nice;       /* ... from this nice value up (the probe's) */
    int force_trylock_fail;     /* percent of issue try-locks failed on purpose (tests) */
    long long wait_yield_after_ns;      /* auto waits yield after polls in vain this long; -1 never */
    unsigned max_combine;
    unsigned test_max_failures;
    MPIDU_cx_lock_t *locks[MPIDI_CH4_MAX_VCIS];
    cx_lockq_t *queues[MPIDI_CH4_MAX_VCIS];
    cx_issued_t issued[MPIDI_CH4_MAX_VCIS];     /* under the VCI lock but its done stack */
    /* selective reactivation: waiters asleep, and each VCI's progress_count
     * when their completions were last signaled (cx_mt_reactivation.c) */
    atomic_int sleepers;
    int signaled_count[MPIDI_CH4_MAX_VCIS];
} MPIDI_CX_global_t;

extern MPIDI_CX_global_t MPIDI_CX_global;
extern _Thread_local cx_test_backoff_t MPIDI_CX_test_backoff;

#define MPIDI_CX_MT MPIDI_CX_global.model

int MPIDI_CX_init(bool *consumed);
int MPIDI_CX_init_vcis(void);
void MPIDI_CX_finalize(void);
int MPIDI_CX_wait_reactivated(MPID_Progress_state * state);
void MPIDI_CX_reactivation_register_pvars(void);
void MPIDI_CX_reactivation_finalize(void);
bool MPIDI_CX_server_park_start(void);
void MPIDI_CX_signal_sleepers(void);
bool MPIDI_CX_force_trylock_failure(void);
int MPIDI_CX_lockq_post(MPIDI_CX_descr_t * d, MPIR_Request ** req, bool locked);
void MPIDI_CX_drain_all(int vci);

/* Ranks that outnumber their CPUs yield in their waits (cx_rank_yield.c). */
extern bool MPIDI_CX_rank_yield_on;
int MPIDI_CX_rank_yield_init(void);
int MPIDI_CX_rank_yield_init_world(void);
void MPIDI_CX_rank_yield_now(void);
void MPIDI_CX_rank_yield_register_pvars(void);

/* The offload model (cx_mt_offload.c): a poll of a VCI (true: entered,
 * with the lock held) and its end; a blocking wait's sleep between polls
 * (true if it slept); MPI_Finalize's first step stops the executors; the
 * progress hooks' nesting of this thread. */
bool MPIDI_CX_offload_progress_enter(int vci, int wait);
void MPIDI_CX_offload_progress_exit(int vci);
bool MPIDI_CX_offload_wait(void);
int MPIDI_CX_offload_wait_requests(MPID_Progress_state * state);
void MPIDI_CX_offload_stop(void);
int MPIDI_CX_offload_win_drain(MPIR_Win * win);
extern _Thread_local int MPIDI_CX_offload_hooks_depth;

/* A blocking wait (MPID_Progress_wait, RMA synchronization, shared-memory
 * collectives, the selective-reactivation waits' polls) after a poll that
 * found nothing: an idle rank takes a chunk of a busy local rank's work
 * (CAB-MPI, pip_steal.c) or runs a computing one's progress (Daps,
 * pip_daps.c); true if it did. MPIDI_CX_progress_yield yields its core only
 * when there was none. */
MPL_STATIC_INLINE_PREFIX bool MPIDI_CX_idle_work(void)
{
#ifdef MPIDI_CX_STEAL
    if (unlikely(MPIDI_PIP_steal_on) && MPIDI_PIP_steal_idle())
        return true;
#endif
#ifdef MPIDI_CX_DAPS
    if (unlikely(MPIDI_PIP_daps_on) && MPIDI_PIP_daps_idle())
        return true;
#endif
    return false;
}

MPL_STATIC_INLINE_PREFIX void MPIDI_CX_progress_yield(void)
{
    /* offload: sleep until the executor issued or completed something */
    if (unlikely(MPIDI_CX_MT == MPIDI_CX_MT_OFFLOAD) && MPIDI_CX_offload_wait())
        return;
    if (MPIDI_CX_idle_work())
        return;
    if (unlikely(MPIDI_CX_rank_yield_on))
        MPIDI_CX_rank_yield_now();
}

/* MPI_Win_fence's barrier (mpidig_win.h): the window's fence-epoch
 * accumulates are tasks this thread's wait depends on. */
MPL_STATIC_INLINE_PREFIX void MPIDI_CX_fence_wait_begin(MPIR_Win * win)
{
#ifdef MPIDI_CX_STEAL
    if (unlikely(MPIDI_PIP_steal_on))
        MPIDI_PIP_steal_fence_begin(win);
#endif
}

MPL_STATIC_INLINE_PREFIX void MPIDI_CX_fence_wait_end(void)
{
#ifdef MPIDI_CX_STEAL
    if (unlikely(MPIDI_PIP_steal_on))
        MPIDI_PIP_steal_fence_end();
#endif
}

/* The blocking wait is over: the rank is possibly active again. */
MPL_STATIC_INLINE_PREFIX void MPIDI_CX_wait_done(void)
{
#ifdef MPIDI_CX_STEAL
    if (unlikely(MPIDI_PIP_steal_on))
        MPIDI_PIP_steal_wait_done();
#endif
}

/* Daps counts what a peer may wait on this rank's progress for (paper
 * §3.4.2), until the request's first reference is dropped (mpidpost.h): a
 * nonblocking send its issue left incomplete (queued, rendezvous,
 * pipelined, packed; ch4_send.h), and a nonblocking receive that needs a
 * handshake (ch4_recv.h): noncontiguous (unpacked here) or of at least
 * MPIDI_PIP_daps_track_bytes (rendezvous, PiP single copy, pipelined). A
 * small contiguous receive waits for its sender, but nobody waits for it,
 * and not counting it keeps the check to a few instructions. Not on self
 * communicators. Windows count for their whole life (ch4_win.c): other
 * ranks' RMA may need the target. */
#ifdef MPIDI_CX_DAPS
#define MPIDI_CX_DAPS_KIND(av_, rank_) \
    ((rank_) == MPI_ANY_SOURCE ? 3 : MPIDI_av_is_local(av_) ? 2 : 1)
#define MPIDI_CX_DAPS_SEND_POSTED(req_, av_, rank_) \
    do { \
        if (unlikely(MPIDI_PIP_daps_track_on) && (req_) && !MPIR_Request_is_complete(req_)) \
            MPIDI_PIP_daps_posted((req_), MPIDI_CX_DAPS_KIND(av_, rank_)); \
    } while (0)
#define MPIDI_CX_DAPS_RECV_POSTED(req_, av_, rank_, count_, datatype_) \
    do { \
        if (unlikely(MPIDI_PIP_daps_track_on) && (req_) && !MPIR_Request_is_complete(req_)) { \
            int dt_contig_; \
            size_t data_sz_; \
            MPIDI_Datatype_check_contig_size(datatype_, count_, dt_contig_, data_sz_); \
            if (!dt_contig_ || data_sz_ >= MPIDI_PIP_daps_track_bytes) \
                MPIDI_PIP_daps_posted((req_), MPIDI_CX_DAPS_KIND(av_, rank_)); \
        } \
    } while (0)
#define MPIDI_CX_daps_window(delta_) \
    do { \
        if (unlikely(MPIDI_PIP_daps_track_on)) \
            MPIDI_PIP_daps_window(delta_); \
    } while (0)
#else
#define MPIDI_CX_DAPS_SEND_POSTED(req_, av_, rank_) do { } while (0)
#define MPIDI_CX_DAPS_RECV_POSTED(req_, av_, rank_, count_, datatype_) do { } while (0)
#define MPIDI_CX_daps_window(delta_) do { } while (0)
#endif

void MPIDI_CX_resolve_issued(int vci);
int MPIDI_CX_cancel(MPIR_Request * req);
bool MPIDI_CX_progress_trylock_failed(int vci, int wait);

/* Around MPIR_Progress_hook_exec_all (ch4_progress.h): a hook may block
 * inside a collective, and meanwhile every other thread, the executor
 * included, skips MPICH's schedule progress; a thread inside the hooks
 * therefore issues and polls its operations itself (doc/design/offload.md). */
MPL_STATIC_INLINE_PREFIX void MPIDI_CX_hooks_enter(void)
{
    if (unlikely(MPIDI_CX_MT == MPIDI_CX_MT_OFFLOAD))
        MPIDI_CX_offload_hooks_depth++;
}

MPL_STATIC_INLINE_PREFIX void MPIDI_CX_hooks_exit(void)
{
    if (unlikely(MPIDI_CX_MT == MPIDI_CX_MT_OFFLOAD))
        MPIDI_CX_offload_hooks_depth--;
}

/* Issue-path try-lock of LockQ; the debug CVAR can fail it on purpose. */
MPL_STATIC_INLINE_PREFIX bool MPIDI_CX_issue_tryenter(int vci)
{
    if (unlikely(MPIDI_CX_global.force_trylock_fail) && MPIDI_CX_force_trylock_failure())
        return false;
    return MPIDU_CX_cs_tryenter(&MPIDI_VCI(vci).lock);
}

/* LockQ's issue fast path, inline at the call site: true when the try-lock
 * succeeded and the queue is empty, so the caller issues directly and then
 * calls MPIDI_CX_lockq_fast_exit.  Otherwise the out-of-line path decides
 * (run the queue first, queue behind it, or behind the holder). */
MPL_STATIC_INLINE_PREFIX bool MPIDI_CX_lockq_fast_enter(int vci)
{
    if (unlikely(MPIDI_CX_global.force_trylock_fail))
        return false;   /* the slow path applies the debug CVAR */
    if (!MPIDU_CX_cs_tryenter_first(&MPIDI_VCI(vci).lock))
        return false;
    if (likely(!cx_lockq_pending(MPIDI_CX_global.queues[vci])))
        return true;
    MPIDU_CX_cs_exit_inline(&MPIDI_VCI(vci).lock);
    return false;
}

MPL_STATIC_INLINE_PREFIX void MPIDI_CX_lockq_fast_exit(int vci)
{
    MPIDU_CX_cs_exit_inline(&MPIDI_VCI(vci).lock);
}

/* Around an operation run under CSync's combining lock: the transport
 * re-enters the VCI's section, which must count as a recursion. */
MPL_STATIC_INLINE_PREFIX void MPIDI_CX_csync_hold(int vci)
{
    MPIDI_VCI(vci).lock.owner = MPIDU_CX_thread_self();
    MPIDI_VCI(vci).lock.count = 1;
}

MPL_STATIC_INLINE_PREFIX void MPIDI_CX_csync_unhold(int vci)
{
    MPIDI_VCI(vci).lock.count = 0;
    MPIDI_VCI(vci).lock.owner = 0;
}

/* CSync's issue fast path, inline at the call site: when the VCI's
 * combining queue is empty, head it (this thread's DSM state is returned)
 * and issue directly, then MPIDI_CX_csync_fast_exit; NULL: nothing
 * changed, the out-of-line path announces the operation. */
MPL_STATIC_INLINE_PREFIX cx_dsm_thread_t *MPIDI_CX_csync_fast_enter(int vci)
{
    MPIDU_cx_lock_t *l = MPIDI_CX_global.locks[vci];
    cx_dsm_thread_t *t = MPIDU_CX_dsm_thread(l);
    if (!cx_dsm_try_first(&l->u.dsm, t))
        return NULL;
    MPIDI_CX_csync_hold(vci);
    return t;
}

/* Serves whatever queued behind us meanwhile, and lets go. */
MPL_STATIC_INLINE_PREFIX void MPIDI_CX_csync_fast_exit(int vci, cx_dsm_thread_t * t)
{
    MPIDI_CX_csync_unhold(vci);
    cx_dsm_finish_first(&MPIDI_CX_global.locks[vci]->u.dsm, t);
}

/* Progress entry for a VCI with a CX lock.  Returns false when this progress
 * call should skip the VCI (LockQ's or CSync's try-lock failed and the
 * backoff says come back later: the holder progresses meanwhile); true with
 * the VCI lock held otherwise. */
MPL_STATIC_INLINE_PREFIX bool MPIDI_CX_progress_enter(int vci, int wait)
{
    if (unlikely(MPIDI_CX_MT == MPIDI_CX_MT_OFFLOAD))
        return MPIDI_CX_offload_progress_enter(vci, wait);
    if (MPIDI_CX_MT != MPIDI_CX_MT_DIRECT) {
        /* backing off after failed try-locks of MPI_Test and its kind; a
         * blocking wait does not (its polls may be a millisecond apart,
         * as an idle server's are) */
        if (!wait && !cx_test_backoff_ready(&MPIDI_CX_test_backoff))
            return false;
        if (MPIDU_CX_cs_tryenter(&MPIDI_VCI(vci).lock)) {
            cx_test_backoff_succeeded(&MPIDI_CX_test_backoff);
            return true;
        }
        return MPIDI_CX_progress_trylock_failed(vci, wait);
    }
    /* a blocking wait's poll re-enters at low priority (priority locks) */
    MPIDU_CX_cs_enter_prio(&MPIDI_VCI(vci).lock, wait);
    return true;
}

MPL_STATIC_INLINE_PREFIX void MPIDI_CX_progress_exit(int vci)
{
    if (MPIDI_CX_global.issued[vci].head)
        MPIDI_CX_resolve_issued(vci);
    /* requests completed (progress_count moved) while waiters sleep: this
     * poller signals them, not only the reactivation server */
    bool signal = unlikely(atomic_load_explicit(&MPIDI_CX_global.sleepers, memory_order_relaxed))
        && MPL_atomic_relaxed_load_int(&MPIDI_VCI(vci).progress_count) !=
        MPIDI_CX_global.signaled_count[vci];
    if (unlikely(MPIDI_CX_MT == MPIDI_CX_MT_OFFLOAD))
        MPIDI_CX_offload_progress_exit(vci);    /* wakes the waiters it completed */
    MPIDU_CX_cs_exit(&MPIDI_VCI(vci).lock);
    if (signal)
        MPIDI_CX_signal_sleepers();
}

/* MPI_Wait and MPI_Waitall: the requests a blocked thread waits for, so
 * that selective reactivation can wake it when they completed. */
MPL_STATIC_INLINE_PREFIX void MPIDI_CX_wait_register(MPID_Progress_state * state,
                                                     MPIR_Request ** reqs, int n)
{
    if (unlikely(MPIDI_CX_global.wait_kind != MPIDI_CX_WAIT_POLL) && MPIR_ThreadInfo.isThreaded) {
        state->cx_waited = reqs;
        state->cx_nwaited = n;
    }
}

/* The VCI an operation's transport will lock (same hash as the netmods). */
MPL_STATIC_INLINE_PREFIX int MPIDI_CX_send_vci(MPIR_Comm * comm, int rank, int tag)
{
    return MPIDI_get_vci(SRC_VCI_FROM_SENDER, comm, comm->rank, rank, tag) % MPIDI_global.n_vcis;
}

MPL_STATIC_INLINE_PREFIX int MPIDI_CX_recv_vci(MPIR_Comm * comm, int rank, int tag)
{
    return MPIDI_get_vci(DST_VCI_FROM_RECVER, comm, rank, comm->rank, tag) % MPIDI_global.n_vcis;
}

MPL_STATIC_INLINE_PREFIX int MPIDI_CX_win_vci(MPIR_Win * win)
{
    return MPIDI_WIN(win, am_vci) % MPIDI_global.n_vcis;
}

int MPIDI_CX_win_drain_queued(MPIR_Win * win);

/* A window synchronization call: one-sided operations still queued must be
 * issued before it counts what is outstanding; returns the error a queued
 * one has met, if any. */
MPL_STATIC_INLINE_PREFIX int MPIDI_CX_win_drain(MPIR_Win * win)
{
    if (MPIDI_CX_MT == MPIDI_CX_MT_LOCKQ && MPIR_ThreadInfo.isThreaded)
        return MPIDI_CX_win_drain_queued(win);
    if (MPIDI_CX_MT == MPIDI_CX_MT_OFFLOAD && MPIR_ThreadInfo.isThreaded)
        return MPIDI_CX_offload_win_drain(win);
    return MPI_SUCCESS;
}

/* MPICH's own model (or no threads yet): the inline direct path. */
#define MPIDI_CX_USE_DIRECT() \
    (likely(MPIDI_CX_MT == MPIDI_CX_MT_DIRECT) || !MPIR_ThreadInfo.isThreaded)

/* The other models' issue paths (out of line, cx_mt_issue.c). */
/* *INDENT-OFF* */
#define OP_PROTOTYPE(OP_, name_, vci_, params_, args_, descr_, dargs_, req_) \
    int MPIDI_CX_##name_ params_;
MPIDI_CX_OPS(OP_PROTOTYPE)
#undef OP_PROTOTYPE
/* *INDENT-ON* */

#endif /* CX_MT_H_INCLUDED */
