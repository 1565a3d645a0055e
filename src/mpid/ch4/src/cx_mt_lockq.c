/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 */
/* LockQ: operations queued after a failed try-lock and run by the lock
 * holder, their proxy requests, and the try-lock backoff of progress that
 * LockQ and CSync share (doc/design/lockq.md). */
#include "mpidimpl.h"
#include "cx_mt_impl.h"

static void lockq_apply(void *descr, void *ctx)
{
    MPIDI_CX_queued_run(descr);
}

/* A queued operation must hand the user a request at once, but taking one
 * from the VCI's pool needs the VCI lock the issuer just failed to get.  So
 * each thread keeps a few requests per VCI, refilled while it holds the lock.
 * Requests the thread frees come back to it. Descriptors too: the thread
 * that frees one (the holder that ran it) is another than the one that
 * allocates it, and malloc's per-thread caches then miss on every
 * allocation; a VCI's spent descriptors go to a lock-free stack, from
 * which a thread refills without the lock. */
#define REQ_CACHE_SIZE 32
/* Freed proxies come back to the freeing thread's cache without a lock
 * (MPIDI_CX_proxy_cache_put), and a refill takes all spent descriptors:
 * room for a few windows of them. */
#define REQ_CACHE_CAP 256

typedef struct req_cache {
    struct req_cache *next_cache;
    int vci;
    int n, nd;
    MPIR_Request *reqs[REQ_CACHE_CAP];
    MPIDI_CX_descr_t *descrs[REQ_CACHE_CAP];
} req_cache_t;

/* each VCI's spent descriptors (linked by next_spent): pushed by its lock
 * holders, taken whole by a thread refilling its cache, without the lock
 * (one exchange takes all: no ABA) */
static _Atomic(MPIDI_CX_descr_t *) spent_descrs[MPIDI_CH4_MAX_VCIS];
/* pvars: completions the free hook found, and the scan (under the VCI lock) */
static unsigned long long done_by_hook[MPIDI_CH4_MAX_VCIS], done_by_scan[MPIDI_CH4_MAX_VCIS];

/* Under the VCI lock of d->vci: d has run. */
static void spent_push(int vci, MPIDI_CX_descr_t * first, MPIDI_CX_descr_t * last)
{
    MPIDI_CX_descr_t *top = atomic_load_explicit(&spent_descrs[vci], memory_order_relaxed);
    do
        last->next_spent = top;
    while (!atomic_compare_exchange_weak_explicit(&spent_descrs[vci], &top, first,
                                                  memory_order_release, memory_order_relaxed));
}

static void descr_spent(MPIDI_CX_descr_t * d)
{
    spent_push(d->vci, d, d);
}

static _Thread_local req_cache_t *req_caches[MPIDI_CH4_MAX_VCIS];
static req_cache_t *all_caches;
static pthread_mutex_t all_caches_mutex = PTHREAD_MUTEX_INITIALIZER;
/* Finalize frees every thread's cache; a thread notices by the epoch (MPI
 * sessions may initialize the library again). */
static int cache_epoch = 1;
static _Thread_local int req_caches_epoch;

static req_cache_t *thread_cache(int vci)
{
    if (unlikely(req_caches_epoch != cache_epoch)) {
        memset(req_caches, 0, sizeof(req_caches));
        req_caches_epoch = cache_epoch;
    }
    return req_caches[vci];
}

/* Fill c's descriptors, without a lock: all the VCI's spent ones (up to
 * REQ_CACHE_CAP; the rest goes back), else REQ_CACHE_SIZE fresh ones. */
static void refill_descrs(req_cache_t * c, int vci)
{
    MPIDI_CX_descr_t *d = atomic_exchange_explicit(&spent_descrs[vci], NULL,
                                                   memory_order_acquire);
    while (d && c->nd < REQ_CACHE_CAP) {
        c->descrs[c->nd++] = d;
        d = d->next_spent;
    }
    if (d) {
        MPIDI_CX_descr_t *last = d;
        while (last->next_spent)
            last = last->next_spent;
        spent_push(vci, d, last);
    }
    while (c->nd < REQ_CACHE_SIZE && (d = MPL_malloc(sizeof(*d), MPL_MEM_OTHER)))
        c->descrs[c->nd++] = d;
}

/* Under the VCI lock (MPICH's request pool is under it). */
static req_cache_t *refill_request_cache(int vci)
{
    req_cache_t *c = thread_cache(vci);
    if (!c) {
        c = MPL_calloc(1, sizeof(*c), MPL_MEM_THREAD);
        if (!c)
            return NULL;
        c->vci = vci;
        pthread_mutex_lock(&all_caches_mutex);
        c->next_cache = all_caches;
        all_caches = c;
        pthread_mutex_unlock(&all_caches_mutex);
        req_caches[vci] = c;
    }
    while (c->n < REQ_CACHE_SIZE) {
        MPIR_Request *r = MPIR_Request_create_from_pool(MPIR_REQUEST_KIND__SEND, vci, 1);
        if (!r)
            break;
        c->reqs[c->n++] = r;
    }
    refill_descrs(c, vci);
    return c;
}

void MPIDI_CX_lockq_finalize(void)
{
    pthread_mutex_lock(&all_caches_mutex);
    while (all_caches) {
        req_cache_t *c = all_caches;
        all_caches = c->next_cache;
        while (c->n > 0) {
            MPIR_Request *r = c->reqs[--c->n];
            r->dev.cx_proxy = 0;        /* to its pool now */
            MPIR_Request_free_unsafe(r);
        }
        while (c->nd > 0)
            MPL_free(c->descrs[--c->nd]);
        MPL_free(c);
    }
    for (int i = 0; i < MPIDI_CH4_MAX_VCIS; i++) {
        MPIDI_CX_descr_t *d = atomic_exchange(&spent_descrs[i], NULL);
        while (d) {
            MPIDI_CX_descr_t *next = d->next_spent;
            MPL_free(d);
            d = next;
        }
    }
    cache_epoch++;      /* under the mutex: threads drop their stale pointers */
    pthread_mutex_unlock(&all_caches_mutex);
}

/* A fresh request as MPIR_Request_create_from_pool would return it: one
 * reference for the user, one for completion. */
static MPIR_Request *take_cached_request(req_cache_t * c, MPIR_Request_kind_t kind)
{
    MPIR_Request *r = c->reqs[--c->n];
    MPIR_Object_set_ref(r, 2);
    r->kind = kind;
    MPIR_cc_set(&r->cc, 1);
    r->cc_ptr = &r->cc;
    r->completion_notification = NULL;
    r->status.MPI_ERROR = MPI_SUCCESS;
    MPIR_STATUS_SET_CANCEL_BIT(r->status, FALSE);
    MPIR_STATUS_SET_COUNT(r->status, 0);
    r->comm = NULL;
    MPID_Request_create_hook(r);
    r->dev.cx_proxy = 1;
    return r;
}

/* MPIR_Request_free_with_safety, the last reference of a proxy gone: back
 * into this thread's cache, without the pool's lock (the VCI lock, which
 * an offload executor holds most of the time); false (the pool takes it)
 * if the cache is full or the request holds what a free releases. */
int MPIDI_CX_proxy_cache_put(MPIR_Request * req)
{
    req_cache_t *c = thread_cache(MPIR_REQUEST_POOL(req));
    if (!c || c->n == REQ_CACHE_CAP || req->comm || req->dev.cx_daps ||
        (req->kind != MPIR_REQUEST_KIND__SEND && req->kind != MPIR_REQUEST_KIND__RECV))
        return 0;
    c->reqs[c->n++] = req;
    return 1;
}

/* Under the VCI lock: run the queue to its end (a producer between its swap
 * and its link is waited for: it is a few instructions from done, unless
 * descheduled, hence the yield). */
void MPIDI_CX_drain_all(int vci)
{
    MPIDU_cx_lock_t *l = MPIDI_CX_global.locks[vci];
    unsigned spins = 0;
    while (cx_lockq_pending(l->queue)) {
        l->drain(l);
        cx_spin_pause(&spins);
    }
}

/* A window synchronization call (LockQ): every one-sided operation queued
 * for the window before the call is issued before it returns, whatever
 * MAX_COMBINE is and however the producers are scheduled; returns the first
 * error one of them met. */
int MPIDI_CX_win_drain_queued(MPIR_Win * win)
{
    int vci = MPIDI_CX_win_vci(win);
    MPIDU_CX_cs_enter(&MPIDI_VCI(vci).lock);
    int err = cx_lockq_group_drain(MPIDI_CX_global.queues[vci], &MPIDIG_WIN(win, cx_queued),
                                   lockq_apply, NULL);
    MPIDU_CX_cs_exit(&MPIDI_VCI(vci).lock);
    return err;
}

/* A copy of an operation for another thread to issue (LockQ's lock
 * holder, an offload executor), from this thread's cache: the user gets a
 * proxy request at once; the datatype and communicator are referenced so
 * the user may free them at once.  *out NULL: no proxy for a
 * point-to-point operation at hand (the thread's first operations, or its
 * proxies were freed by others), or no memory: the caller takes the VCI
 * lock and refills with MPIDI_CX_proxy_refill, or issues itself. */
int MPIDI_CX_queued_new(MPIDI_CX_descr_t * dd, MPIR_Request ** req, MPIDI_CX_descr_t ** out)
{
    req_cache_t *c = thread_cache(dd->vci);
    *out = NULL;
    if (c && c->nd == 0)
        refill_descrs(c, dd->vci);
    if (!c || c->nd == 0 || (MPIDI_CX_descr_is_pt2pt(dd) && c->n == 0))
        return MPI_SUCCESS;
    MPIDI_CX_descr_t *d = c->descrs[--c->nd];
    *d = *dd;
    d->real = NULL;
    d->cancelled = 0;
    if (MPIDI_CX_descr_is_pt2pt(d)) {
        d->proxy = take_cached_request(c, d->op == MPIDI_CX_OP_IRECV ? MPIR_REQUEST_KIND__RECV
                                       : MPIR_REQUEST_KIND__SEND);
        d->proxy->dev.cx_descr = d;
        *req = d->proxy;
    } else {
        d->proxy = NULL;        /* completed by the window's synchronization */
    }
    MPIDI_CX_descr_add_refs(d);
    *out = d;
    return MPI_SUCCESS;
}

/* A descriptor of MPIDI_CX_queued_new that was never handed over (its
 * queue refused it): references go back, and proxy and descriptor to this
 * thread's cache they came from (no lock needed; take_cached_request
 * resets the proxy). */
void MPIDI_CX_queued_discard(MPIDI_CX_descr_t * d)
{
    MPIDI_CX_descr_release_refs(d);
    req_cache_t *c = thread_cache(d->vci);
    if (d->proxy) {
        d->proxy->dev.cx_descr = NULL;
        c->reqs[c->n++] = d->proxy;
    }
    c->descrs[c->nd++] = d;
}

/* Under the VCI lock: fill this thread's proxy cache. */
void MPIDI_CX_proxy_refill(int vci)
{
    refill_request_cache(vci);
}

/* Queue an operation: the issuer failed the try-lock (locked = false), or
 * holds the lock but found work left in the queue (locked = true). */
int MPIDI_CX_lockq_post(MPIDI_CX_descr_t * dd, MPIR_Request ** req, bool locked)
{
    int mpi_errno = MPI_SUCCESS;
    int vci = dd->vci;
    MPIDI_CX_descr_t *d;

    mpi_errno = MPIDI_CX_queued_new(dd, req, &d);
    MPIR_ERR_CHECK(mpi_errno);
    if (!d) {
        /* no proxy at hand: take the lock, refill, and issue directly
         * behind the whole queue */
        if (!locked)
            MPIDU_CX_cs_enter(&MPIDI_VCI(vci).lock);
        refill_request_cache(vci);
        MPIDI_CX_drain_all(vci);
        mpi_errno = MPIDI_CX_descr_issue(dd, req);
        if (!locked)
            MPIDU_CX_cs_exit(&MPIDI_VCI(vci).lock);
        return mpi_errno;
    }
    int err = d->proxy ? cx_lockq_post(MPIDI_CX_global.queues[vci], d)
        : cx_lockq_group_post(MPIDI_CX_global.queues[vci], &MPIDIG_WIN(d->rma.win, cx_queued), d);
    if (err) {
        MPIDI_CX_queued_discard(d);
        MPIR_ERR_SETANDJUMP(mpi_errno, MPI_ERR_OTHER, "**nomem");
    }
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

static void copy_status(MPIR_Request * to, MPIR_Request * from)
{
    to->status = from->status;
}

/* Under the VCI lock: the proxy is done; its descriptor goes with it. */
static void complete_proxy(MPIDI_CX_descr_t * d)
{
    MPIR_Request *proxy = d->proxy;
    proxy->dev.cx_descr = NULL;
    descr_spent(d);
    MPID_Request_complete(proxy);
}

/* An issued operation whose request did not complete at once waits in its
 * VCI's issued list (cx_issued.h) until its proxy completes:
 *  - MPICH's request free hook, run when the transport lets go of the
 *    request's completion reference, claims the descriptor and pushes it
 *    on the done stack (MPIDI_CX_request_released); the end of the VCI's
 *    next poll completes its proxy;
 *  - each poll's end also checks RESOLVE_SCAN descriptors, round-robin,
 *    for completions the hook does not report: MPI_Cancel's (the hook is
 *    off while MPICH cancels), and any path that completes a request
 *    without dropping a reference (MPICH's messages to self set the
 *    receive's counter).
 * Checking the whole list at every poll's end, as before, took half an
 * offload executor's time with 512 receives outstanding. */
#define RESOLVE_SCAN 2

#define DESCR_OF(node_) ((MPIDI_CX_descr_t *) ((char *) (node_) - offsetof(MPIDI_CX_descr_t, issued)))

/* Under the VCI lock. */
static void issued_add(int vci, MPIDI_CX_descr_t * d)
{
    cx_issued_add(&MPIDI_CX_global.issued[vci], &d->issued);
    /* the hook may report it from now on */
    d->real->dev.cx_descr = d;
}

/* Under the VCI lock: the proxy of a claimed descriptor completes. */
static void resolve_one(int vci, MPIDI_CX_descr_t * d)
{
    cx_issued_remove(&MPIDI_CX_global.issued[vci], &d->issued);
    d->real->dev.cx_descr = NULL;       /* its last free must not report it */
    copy_status(d->proxy, d->real);
    MPIR_Request_free_unsafe(d->real);
    complete_proxy(d);
}

/* Under the VCI lock: check up to `budget' issued descriptors. */
static void scan_issued(int vci, int budget)
{
    cx_issued_t *l = &MPIDI_CX_global.issued[vci];
    int n = MPL_MIN(budget, l->n);
    for (int i = 0; i < n; i++) {
        MPIDI_CX_descr_t *d = DESCR_OF(cx_issued_scan_next(l));
        if (MPIR_Request_is_complete(d->real) && cx_issued_claim(&d->issued)) {
            done_by_scan[vci]++;
            resolve_one(vci, d);
        }
    }
}

/* Under the VCI lock: the proxies whose requests completed. */
void MPIDI_CX_resolve_issued(int vci)
{
    cx_issued_node_t *x = cx_issued_take_done(&MPIDI_CX_global.issued[vci]);
    while (x) {
        cx_issued_node_t *next = x->next_done;
        done_by_hook[vci]++;
        resolve_one(vci, DESCR_OF(x));
        x = next;
    }
    scan_issued(vci, RESOLVE_SCAN);
}

/* MPICH's request free hook, for a request whose dev.cx_descr is set (a
 * proxy not yet completed, or an issued operation's request): an issued
 * request that completed goes on its VCI's done stack. */
void MPIDI_CX_request_released(MPIR_Request * req)
{
    MPIDI_CX_descr_t *d = req->dev.cx_descr;
    if (d->real == req && MPIR_Request_is_complete(req) && cx_issued_claim(&d->issued))
        cx_issued_notify(&MPIDI_CX_global.issued[d->vci], &d->issued);
}

/* Under the VCI lock: run one queued operation (LockQ's holder, an
 * offload executor). */
void MPIDI_CX_queued_run(MPIDI_CX_descr_t * descr)
{
    MPIDI_CX_descr_t *d = descr;
    int vci = d->vci;

    if (!d->proxy) {
        /* one-sided: no request to carry an error; the window's next
         * synchronization call returns it (MPIDI_CX_win_drain) */
        MPIR_Win *win = d->rma.win;
        cx_lockq_group_ran(&MPIDIG_WIN(win, cx_queued), MPIDI_CX_descr_issue(d, NULL));
        MPIDI_CX_descr_release_refs(d);
        descr_spent(d);
        return;
    }
    if (d->cancelled) {
        MPIR_STATUS_SET_CANCEL_BIT(d->proxy->status, TRUE);
        MPIR_STATUS_SET_COUNT(d->proxy->status, 0);
    } else {
        int err = MPIDI_CX_descr_issue(d, &d->real);
        if (err != MPI_SUCCESS) {
            d->proxy->status.MPI_ERROR = err;
        } else if (!MPIR_Request_is_complete(d->real)) {
            issued_add(vci, d);
            d = NULL;   /* completes later, in MPIDI_CX_resolve_issued */
        } else {
            copy_status(d->proxy, d->real);
            MPIR_Request_free_unsafe(d->real);
        }
    }
    MPIDI_CX_descr_release_refs(descr);
    if (d)
        complete_proxy(d);
}

/* MPI_Cancel of a proxy: before issue it is simply not issued; after, the
 * real request is cancelled and the proxy picks up its status. */
int MPIDI_CX_cancel(MPIR_Request * req)
{
    int mpi_errno = MPI_SUCCESS;
    int vci = MPIDI_Request_get_vci(req);

    MPIDU_CX_cs_enter(&MPIDI_VCI(vci).lock);    /* runs the queue: d is issued or done */
    MPIDI_CX_descr_t *d = req->dev.cx_descr;
    if (d && d->real) {
        /* MPICH's cancel for the request (MPID_Cancel_* would come back
         * here); if that completes it, the scan below finds it */
        MPIR_Request *real = d->real;
        real->dev.cx_descr = NULL;
        if (real->kind == MPIR_REQUEST_KIND__RECV)
            mpi_errno = MPID_Cancel_recv(real);
        else
            mpi_errno = MPID_Cancel_send(real);
        real->dev.cx_descr = d;
        MPIDI_CX_resolve_issued(vci);
        scan_issued(vci, INT_MAX);      /* the whole list */
    } else if (d) {
        d->cancelled = 1;
    }
    MPIDU_CX_cs_exit(&MPIDI_VCI(vci).lock);
    return mpi_errno;
}

/* LockQ's and CSync's progress after its try-lock failed.  MPI_Test and
 * the other nonblocking polls back off (the delay is kept per thread across
 * calls) and, after TEST_MAX_FAILURES failures in a row, take the lock
 * blocking, so repeated MPI_Test calls always progress.  A blocking wait
 * takes the lock blocking at once, sleeping in the lock as MPICH's waiters
 * do: spinning through the backoff, it would keep the holder from running
 * whenever threads outnumber cores. */
#define TEST_MAX_DELAY 1024     /* MPI_Test calls skipped between try-locks, at most */

bool MPIDI_CX_progress_trylock_failed(int vci, int wait)
{
    cx_test_backoff_t *b = &MPIDI_CX_test_backoff;
    if (!wait) {
        cx_test_backoff_failed(b, TEST_MAX_DELAY);
        if (!cx_test_backoff_must_block(b, MPIDI_CX_global.test_max_failures))
            return false;
    }
    MPIDU_CX_cs_enter(&MPIDI_VCI(vci).lock);
    cx_test_backoff_succeeded(b);
    return true;
}


/* Debugging: MPIR_CVAR_CH4_CX_FORCE_TRYLOCK_FAIL percent of issue try-locks fail. */
bool MPIDI_CX_force_trylock_failure(void)
{
    static _Thread_local uint64_t x;
    if (!x)
        x = 0x9e3779b97f4a7c15ULL ^ (uint64_t) (uintptr_t) & x;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return (int) (x % 100) < MPIDI_CX_global.force_trylock_fail;
}

static void lockq_drain(MPIDU_cx_lock_t * lock)
{
    bool limit;
    cx_lockq_combine(lock->queue, lockq_apply, NULL, &limit);
    /* over MAX_COMBINE: the rest waits for the next holder (every
     * completion call takes the lock, so it is not stranded) */
}

/* The queue under VCI lock l. */
int MPIDI_CX_lockq_init_lock(MPIDU_cx_lock_t * l, int vci)
{
    cx_lockq_t *q = MPL_aligned_alloc(CX_CACHELINE_SIZE,
                                      MPL_ROUND_UP_ALIGN(sizeof(*q), CX_CACHELINE_SIZE),
                                      MPL_MEM_THREAD);
    if (!q || cx_lockq_init(q, MPIDI_CX_global.max_combine)) {
        MPL_free(q);
        return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                    MPI_ERR_OTHER, "**nomem", 0);
    }
    l->queue = q;
    l->drain = lockq_drain;
    MPIDI_CX_global.queues[vci] = q;
    return MPI_SUCCESS;
}

static void get_done_by_hook(void *addr, void *obj, int count, void *buf)
{
    unsigned long long sum = 0;
    for (int i = 0; i < MPIDI_CH4_MAX_VCIS; i++)
        sum += done_by_hook[i];
    *(unsigned long long *) buf = sum;
}

static void get_done_by_scan(void *addr, void *obj, int count, void *buf)
{
    unsigned long long sum = 0;
    for (int i = 0; i < MPIDI_CH4_MAX_VCIS; i++)
        sum += done_by_scan[i];
    *(unsigned long long *) buf = sum;
}

void MPIDI_CX_lockq_register_pvars(void)
{
    MPIR_T_PVAR_REGISTER_impl(MPI_T_PVAR_CLASS_COUNTER, MPI_UNSIGNED_LONG_LONG,
                              "cx_issued_done_hook", NULL, 1, MPI_T_ENUM_NULL,
                              MPI_T_VERBOSITY_USER_BASIC, MPI_T_BIND_NO_OBJECT,
                              MPIR_T_PVAR_FLAG_READONLY | MPIR_T_PVAR_FLAG_CONTINUOUS,
                              get_done_by_hook, NULL, "CH4_CX",
                              "lockq/offload: operations issued for another thread whose "
                              "completion the request's free hook reported");
    MPIR_T_PVAR_REGISTER_impl(MPI_T_PVAR_CLASS_COUNTER, MPI_UNSIGNED_LONG_LONG,
                              "cx_issued_done_scan", NULL, 1, MPI_T_ENUM_NULL,
                              MPI_T_VERBOSITY_USER_BASIC, MPI_T_BIND_NO_OBJECT,
                              MPIR_T_PVAR_FLAG_READONLY | MPIR_T_PVAR_FLAG_CONTINUOUS,
                              get_done_by_scan, NULL, "CH4_CX",
                              "lockq/offload: operations issued for another thread whose "
                              "completion a scan of the issued list found (completed without "
                              "that hook: cancelled ones)");
}
