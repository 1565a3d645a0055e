/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 */
/* The offload model (MECOM, Endo's thesis ch. 4; doc/design/offload.md):
 * application threads (requesters) hand their point-to-point and one-sided
 * operations to the VCI's executor thread through a multi-producer queue
 * (cx_offload_q.h) and get a proxy request at once; the executor issues
 * them in batches under the VCI lock and drives the VCI's progress, and
 * requesters blocked in a wait sleep until it completed something.
 * Dynamic mode: the requester whose reservation finds no executor alive
 * (bit 0 of the queue's tail) starts one; an executor whose polls found
 * nothing for MPIR_CVAR_CH4_CX_OFFLOAD_IDLE_US retires with a CAS on the
 * same word. Static mode: the executor, once started, never retires. */
#include "mpidimpl.h"
#include "cx_mt_impl.h"
#include "cx_cvar.h"
#include "cx_offload_q.h"
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>

/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

cvars:
    - name        : MPIR_CVAR_CH4_CX_OFFLOAD
      category    : CH4_CX
      type        : string
      default     : "dynamic"
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        The offload model's executors (MPIR_CVAR_CH4_MT_MODEL=offload):
        dynamic (an executor starts when a thread hands over an operation
        and none is running, and retires after
        MPIR_CVAR_CH4_CX_OFFLOAD_IDLE_US without work), static (one
        executor per VCI, started at the first operation, runs until
        MPI_Finalize).

    - name        : MPIR_CVAR_CH4_CX_OFFLOAD_IDLE_US
      category    : CH4_CX
      type        : int
      default     : 200
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        Dynamic offload: how many microseconds an executor polls without
        issuing or completing anything before it retires (0 to 1000000).

    - name        : MPIR_CVAR_CH4_CX_OFFLOAD_CPUS
      category    : CH4_CX
      type        : string
      default     : ""
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        Offload: CPUs the executors are pinned to, a list such as 3 or
        2,3 or 4-7; the executor of VCI i runs on the (i mod n)-th. Empty:
        not pinned.

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

/* Command slots per VCI: a requester that finds them all taken yields
 * until one frees. */
#define OFFLOAD_Q_SLOTS 4096
/* Polls in a row that found nothing before an executor yields its core
 * after each further one (it polls on while nobody else wants the core). */
#define IDLE_POLLS_BEFORE_YIELD 64
#define IDLE_POLLS_PER_CLOCK 16
/* A sleeping waiter's longest nap: the wake-up protocol is exact, this
 * bounds the cost of an error in it. */
#define WAITER_NAP_NS 10000000
#define MAX_CPUS 256
/* The longest MPI_Test waits for the executor's next round, in spins (the
 * spin yields the core after every CX_SPIN_YIELD_AFTER). */
#define TEST_SPINS_MAX (4 * CX_SPIN_YIELD_AFTER)

typedef struct {
    cx_offload_q_t q;
    int vci;
    /* futex word: bumped to wake the retired executor */
    CX_CACHE_ALIGNED atomic_uint wake;
    /* under the VCI lock: what the last poll's end saw */
    int last_progress_count;
    unsigned long long last_issued;
    /* operations taken from the queue: written under the VCI lock, read by
     * the executor outside it */
    atomic_ullong issued;
    bool thread_created;        /* touched by starters only (the alive bit orders them) */
    pthread_t thread;
    atomic_bool stop;
    /* the executor's rounds, which MPI_Test and its kind wait for */
    CX_CACHE_ALIGNED atomic_ulong rounds;
    /* pvars */
    atomic_ullong offloaded, direct, starts, retires, batches, start_ns;
} offload_vci_t;

static struct {
    /* futex word: bumped by the end of a poll (or of a thread's own issue)
     * that issued or completed something; blocked waiters sleep on it */
    CX_CACHE_ALIGNED atomic_uint events;
    atomic_int sleepers;
    /* executors may run: the model's VCIs are set up, not stopped */
    CX_CACHE_ALIGNED atomic_bool on;
    bool is_static;
    long long idle_ns;
    int ncpus;
    int cpus[MAX_CPUS];
    offload_vci_t *vcis[MPIDI_CH4_MAX_VCIS];
    atomic_bool create_failed;
} off;

/* A thread blocked in MPI_Wait or MPI_Waitall (its requests registered):
 * asleep on its own word until a poll completed all of them. */
typedef struct waiter {
    atomic_uint word;           /* 1: woken */
    MPIR_Request **reqs;
    int n, first;               /* reqs[0, first) completed */
    struct waiter *prev, *next;
} waiter_t;

static pthread_mutex_t waiters_mutex = PTHREAD_MUTEX_INITIALIZER;
static waiter_t *waiters;       /* under waiters_mutex */
static atomic_int nwaiters;
/* pvar: naps that lasted their whole WAITER_NAP_NS */
static atomic_ullong nap_timeouts;

/* Under waiters_mutex: whether all of a waiter's requests completed (in
 * order mostly: the scan resumes at the first one not yet seen complete). */
static bool waiter_done(waiter_t * w)
{
    while (w->first < w->n && (!w->reqs[w->first] || MPIR_Request_is_complete(w->reqs[w->first])))
        w->first++;
    return w->first == w->n;
}

static _Thread_local bool am_executor;
_Thread_local int MPIDI_CX_offload_hooks_depth;
/* a waiter's view of the events when it last looked */
static _Thread_local unsigned seen_events;

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void futex_wait(atomic_uint * word, unsigned value, long long timeout_ns)
{
    struct timespec ts = { timeout_ns / 1000000000LL, timeout_ns % 1000000000LL };
    syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, value, timeout_ns >= 0 ? &ts : NULL, NULL, 0);
}

static void futex_wake_all(atomic_uint * word)
{
    syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* Whether this thread holds the VCI's lock (it runs code inside a VCI
 * section: a callback, a queued operation, a nested wait). */
static bool vci_lock_mine(int vci)
{
    return MPIDI_VCI(vci).lock.count > 0 && MPIDI_VCI(vci).lock.owner == MPIDU_CX_thread_self();
}

/* ---- issuing: whoever holds the VCI lock ---------------------------------- */

/* Under the VCI lock: issue up to max_combine queued operations, oldest
 * first; *pending: one is reserved but not yet published (its requester
 * is between two instructions, or descheduled there). */
static unsigned issue_queued(offload_vci_t * o, bool *pending)
{
    unsigned n = 0;
    *pending = false;
    while (n < MPIDI_CX_global.max_combine) {
        MPIDI_CX_descr_t *d = cx_offload_q_take(&o->q, pending);
        if (!d)
            break;
        MPIDI_CX_queued_run(d);
        n++;
    }
    if (n) {
        atomic_store_explicit(&o->issued,
                              atomic_load_explicit(&o->issued, memory_order_relaxed) + n,
                              memory_order_relaxed);
        atomic_fetch_add_explicit(&o->batches, 1, memory_order_relaxed);
    }
    return n;
}

/* Under the VCI lock: issue everything reserved before the call (a thread
 * that issues itself keeps its own earlier operations ahead of it; later
 * reservations are concurrent with it and wait for the executor). A
 * reservation not yet published is waited for: its requester is between
 * two stores, or descheduled there (the spin yields). */
static void issue_all_queued(offload_vci_t * o)
{
    uint64_t end = atomic_load_explicit(&o->q.tail, memory_order_acquire) >> 1;
    unsigned spins = 0;
    bool pending;
    while ((int64_t) (end - atomic_load_explicit(&o->q.head, memory_order_relaxed)) > 0) {
        if (issue_queued(o, &pending) == 0)
            cx_spin_pause(&spins);
    }
}

/* The VCI lock's acquisition hook (MPIDU_CX_lock_acquired): whoever takes
 * the lock, for whatever call, issues what was queued before it. */
static void offload_lock_drain(MPIDU_cx_lock_t * l)
{
    issue_all_queued(off.vcis[l->index]);
}

static void note_events(offload_vci_t * o, int vci);

/* The requester issues itself, under the VCI lock, behind everything
 * queued: it holds the lock already, runs inside the progress hooks, is an
 * executor, no proxy request is to be had, or the operation is a one-sided
 * one with a request. */
static int issue_direct(offload_vci_t * o, MPIDI_CX_descr_t * d, MPIR_Request ** req)
{
    int vci = d->vci;
    MPIDU_CX_cs_enter(&MPIDI_VCI(vci).lock);
    if (o)
        issue_all_queued(o);
    int mpi_errno = MPIDI_CX_descr_issue(d, req);
    if (o) {
        atomic_fetch_add_explicit(&o->direct, 1, memory_order_relaxed);
        note_events(o, vci);
    }
    MPIDU_CX_cs_exit(&MPIDI_VCI(vci).lock);
    return mpi_errno;
}

/* ---- executors ------------------------------------------------------------ */

static void pin_executor(offload_vci_t * o)
{
    if (!off.ncpus)
        return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(off.cpus[o->vci % off.ncpus], &set);
    pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* One round: the progress hooks and a poll of the executor's VCI, which
 * issues the queue first (MPIDI_CX_offload_progress_enter). True if it
 * issued or completed anything. Inside the rank for Daps: no peer runs
 * this rank's progress beside it. */
static bool executor_round(offload_vci_t * o)
{
    int before = MPL_atomic_relaxed_load_int(&MPIDI_VCI(o->vci).progress_count);
    unsigned long long issued = atomic_load_explicit(&o->issued, memory_order_relaxed);
    MPID_Progress_state state;
    MPIDI_progress_state_init(&state);
    state.vci[0] = o->vci;
    state.vci_count = 1;
    MPIR_CX_DAPS_OWNER_ENTER();
    int mpi_errno = MPIDI_progress_test(&state, 0);
    MPIR_CX_DAPS_OWNER_EXIT();
    atomic_fetch_add_explicit(&o->rounds, 1, memory_order_release);
    if (unlikely(mpi_errno != MPI_SUCCESS)) {
        /* no call to return it from: say so; the requests it concerns
         * carry their own errors */
        char msg[MPI_MAX_ERROR_STRING];
        MPIR_Err_get_string(mpi_errno, msg, sizeof(msg), NULL);
        fprintf(stderr, "MPICH-CX offload executor of VCI %d: progress failed: %s\n", o->vci, msg);
    }
    return issued != atomic_load_explicit(&o->issued, memory_order_relaxed) ||
        before != MPL_atomic_relaxed_load_int(&MPIDI_VCI(o->vci).progress_count);
}

static void *executor_main(void *arg)
{
    offload_vci_t *o = arg;
    am_executor = true;
    pin_executor(o);
    long long idle_since = -1;
    unsigned idle_polls = 0;
    while (!atomic_load_explicit(&o->stop, memory_order_acquire)) {
        if (executor_round(o)) {
            idle_since = -1;
            idle_polls = 0;
            continue;
        }
        if (++idle_polls > IDLE_POLLS_BEFORE_YIELD)
            cx_yield();
        /* the clock every few idle rounds (read at every one, it took 1.5%
         * of the time of 8 threads per rank) */
        if (off.is_static || idle_polls % IDLE_POLLS_PER_CLOCK)
            continue;
        long long t = now_ns();
        if (idle_since < 0) {
            idle_since = t;
            continue;
        }
        /* a thread blocked in a wait relies on us: stay */
        if (t - idle_since < off.idle_ns || atomic_load(&off.sleepers))
            continue;
        /* retire: the wake word is read before the CAS, so a requester
         * that starts us after it (its reservation follows the CAS) has
         * bumped it past this value */
        unsigned w = atomic_load_explicit(&o->wake, memory_order_acquire);
        if (!cx_offload_q_retire(&o->q))
            continue;   /* a command came in meanwhile */
        /* a waiter counts itself before it looks for an executor: if it
         * counted before our CAS, we see it here and take the bit back
         * (unless a starter set it first: then it wakes us) */
        if (atomic_load(&off.sleepers) && cx_offload_q_revive(&o->q)) {
            idle_since = -1;
            continue;
        }
        atomic_fetch_add_explicit(&o->retires, 1, memory_order_relaxed);
        while (atomic_load_explicit(&o->wake, memory_order_acquire) == w &&
               !atomic_load_explicit(&o->stop, memory_order_acquire))
            futex_wait(&o->wake, w, -1);
        idle_since = -1;
        idle_polls = 0;
    }
    return NULL;
}

/* The thread that set the alive bit (its reservation returned START, or
 * its poll found nobody progressing) starts the executor: the first time
 * a thread, later a wake-up of the retired one. */
static void start_executor(offload_vci_t * o)
{
    long long t0 = now_ns();
    if (!o->thread_created) {
        o->thread_created = true;
        int err = pthread_create(&o->thread, NULL, executor_main, o);
        if (err) {
            o->thread_created = false;
            /* every later call issues and polls itself; what is queued now
             * is issued by the next poll */
            if (!atomic_exchange(&off.create_failed, true))
                fprintf(stderr, "MPICH-CX offload: cannot start an executor thread (%s); "
                        "threads issue their operations themselves from now on\n", strerror(err));
            return;
        }
    } else {
        atomic_fetch_add_explicit(&o->wake, 1, memory_order_release);
        futex_wake_all(&o->wake);
    }
    atomic_fetch_add_explicit(&o->starts, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&o->start_ns, now_ns() - t0, memory_order_relaxed);
}

/* A thread that needs progress and finds no executor alive sets the bit
 * itself (the CAS of a reservation, without a command) and starts one. */
static void ensure_executor(offload_vci_t * o)
{
    if (!cx_offload_q_alive(&o->q) && cx_offload_q_revive(&o->q))
        start_executor(o);
}

/* Whether the calling thread issues and polls itself rather than hand
 * over or sleep, whatever the VCI: no executor can run, or it is one, or
 * it runs the progress hooks. */
static bool serves_itself(void)
{
    return !atomic_load_explicit(&off.on, memory_order_acquire) ||
        atomic_load_explicit(&off.create_failed, memory_order_relaxed) || am_executor ||
        MPIDI_CX_offload_hooks_depth > 0;
}

/* ... or for this VCI: also when it holds the VCI lock (it runs inside a
 * VCI section). */
static bool must_do_itself(offload_vci_t * o, int vci)
{
    return !o || serves_itself() || vci_lock_mine(vci);
}

/* ---- requesters ----------------------------------------------------------- */

/* Fill this thread's proxy cache from the VCI's request pool, whose lock
 * is the VCI lock (a thread's first operations: the proxies it frees come
 * back to its cache): the lock is taken without its acquisition hook, so
 * the requester issues nothing (its operation then goes to the queue
 * behind its earlier ones). */
static void refill_proxies(int vci)
{
    MPIDU_Thread_mutex_t *m = &MPIDI_VCI(vci).lock;
    MPL_thread_id_t self = MPIDU_CX_thread_self();
    MPIDU_CX_lock_acquire(m->cx, false);
    m->owner = self;
    m->count = 1;
    MPIDI_CX_proxy_refill(vci);
    MPIDU_CX_cs_exit(m);
}

int MPIDI_CX_offload_post(MPIDI_CX_descr_t * dd, MPIR_Request ** req)
{
    int vci = dd->vci;
    offload_vci_t *o = off.vcis[vci];

    if (must_do_itself(o, vci) || MPIDI_CX_descr_is_rma_request(dd))
        return issue_direct(o, dd, req);

    MPIDI_CX_descr_t *d;
    int mpi_errno = MPIDI_CX_queued_new(dd, req, &d);
    if (mpi_errno == MPI_SUCCESS && !d) {
        refill_proxies(vci);    /* no proxy at hand */
        mpi_errno = MPIDI_CX_queued_new(dd, req, &d);
    }
    if (mpi_errno)
        return mpi_errno;
    if (!d)
        return issue_direct(o, dd, req);        /* the pool is empty */

    cx_lockq_group_t *g = d->proxy ? NULL : &MPIDIG_WIN(d->rma.win, cx_queued);
    if (g)
        atomic_fetch_add_explicit(&g->posted, 1, memory_order_relaxed);
    uint64_t ticket;
    int r;
    /* full: the executor (alive: the bit is set while anything is queued)
     * or whoever holds the lock empties it; no lock is taken here, so a
     * window's synchronization that counted this operation never waits
     * for a thread that waits for it */
    while ((r = cx_offload_q_reserve(&o->q, &ticket)) == CX_OFFLOAD_Q_FULL)
        cx_yield();
    cx_offload_q_publish(&o->q, ticket, d);
    atomic_fetch_add_explicit(&o->offloaded, 1, memory_order_relaxed);
    if (r == CX_OFFLOAD_Q_START)
        start_executor(o);
    return MPI_SUCCESS;
}

/* A window synchronization call: every one-sided operation this window's
 * users queued before it is issued (as LockQ's group drain); the first
 * error one met. */
int MPIDI_CX_offload_win_drain(MPIR_Win * win)
{
    int vci = MPIDI_CX_win_vci(win);
    offload_vci_t *o = off.vcis[vci];
    if (!o)
        return MPI_SUCCESS;
    cx_lockq_group_t *g = &MPIDIG_WIN(win, cx_queued);
    MPIDU_CX_cs_enter(&MPIDI_VCI(vci).lock);
    unsigned long target = atomic_load_explicit(&g->posted, memory_order_acquire);
    unsigned spins = 0;
    bool pending;
    while (g->ran < target) {
        if (issue_queued(o, &pending) == 0)
            cx_spin_pause(&spins);
    }
    int err = g->error;
    g->error = 0;
    note_events(o, vci);
    MPIDU_CX_cs_exit(&MPIDI_VCI(vci).lock);
    return err;
}

/* ---- polls ---------------------------------------------------------------- */

/* A poll of a VCI (MPIDI_CX_progress_enter). The executor, and a thread
 * that must do its own work (must_do_itself), enter the VCI and issue the
 * queue first: whoever holds the lock is its one consumer, so an executor
 * blocked inside a callback's collective still has its queue issued by
 * the next poller. Other threads never poll: with no executor alive they
 * start one; a blocking wait then sleeps until a poll issued or completed
 * something (or for WAITER_NAP_NS), MPI_Test and its kind yield the core. */
bool MPIDI_CX_offload_progress_enter(int vci, int wait)
{
    offload_vci_t *o = off.vcis[vci];
    if (must_do_itself(o, vci)) {
        MPIDU_CX_cs_enter(&MPIDI_VCI(vci).lock);
        if (o) {
            bool pending;
            issue_queued(o, &pending);
        }
        return true;
    }
    ensure_executor(o);
    if (!wait) {
        /* MPI_Test, MPI_Iprobe and the loops of MPI_Probe: look again after
         * the executor's next round, spinning off every lock (yielding the
         * core after a while); a poll as often as the caller calls would
         * take the lock the probes need from the executor */
        unsigned long r = atomic_load_explicit(&o->rounds, memory_order_acquire);
        unsigned spins = 0;
        for (int n = 0; n < TEST_SPINS_MAX && cx_offload_q_alive(&o->q) &&
             atomic_load_explicit(&o->rounds, memory_order_acquire) == r; n++)
            cx_spin_pause(&spins);
    }
    return false;
}

/* Whether this thread holds any VCI's lock (then it must never sleep: the
 * executor would wait for it). */
static bool holds_a_vci_lock(void)
{
    for (int i = 0; i < MPIDI_global.n_vcis; i++)
        if (vci_lock_mine(i))
            return true;
    return false;
}

/* A blocking wait between its polls (MPIDI_CX_progress_yield): sleep until
 * a poll issued or completed something since this thread last looked,
 * which it did before it checked its requests. The thread counts as a
 * sleeper before it makes sure executors run and reads the counter; a
 * poll's end bumps the counter before it reads the sleepers, and an
 * executor about to retire reads them after its CAS; so either side sees
 * the other. False (not slept) for threads that poll themselves. */
/* A blocked thread that may sleep (it would otherwise poll itself):
 * counted a sleeper, with every VCI's executor made sure of. */
static bool start_sleeping(void)
{
    if (!MPIR_ThreadInfo.isThreaded || serves_itself() || holds_a_vci_lock())
        return false;
    atomic_fetch_add_explicit(&off.sleepers, 1, memory_order_seq_cst);
    for (int i = 0; i < MPIDI_global.n_vcis; i++)
        if (off.vcis[i])
            ensure_executor(off.vcis[i]);
    return true;
}

int MPIDI_CX_offload_wait_requests(MPID_Progress_state * state)
{
    if (!start_sleeping())
        return MPIDI_progress_test(state, 1);   /* it polls itself */
    waiter_t w = {.reqs = state->cx_waited,.n = state->cx_nwaited };
    atomic_init(&w.word, 0);
    /* counted, then executors made sure of (above), then listed, then
     * checked: a completion before the check is seen there, one after it
     * finds us listed (the poll that made it wakes the listed) */
    pthread_mutex_lock(&waiters_mutex);
    w.next = waiters;
    if (waiters)
        waiters->prev = &w;
    waiters = &w;
    atomic_fetch_add_explicit(&nwaiters, 1, memory_order_relaxed);
    bool done = waiter_done(&w);
    pthread_mutex_unlock(&waiters_mutex);
    if (!done) {
        futex_wait(&w.word, 0, WAITER_NAP_NS);
        if (!atomic_load_explicit(&w.word, memory_order_acquire))
            atomic_fetch_add_explicit(&nap_timeouts, 1, memory_order_relaxed);
    }
    pthread_mutex_lock(&waiters_mutex);
    if (w.prev)
        w.prev->next = w.next;
    else
        waiters = w.next;
    if (w.next)
        w.next->prev = w.prev;
    atomic_fetch_sub_explicit(&nwaiters, 1, memory_order_relaxed);
    pthread_mutex_unlock(&waiters_mutex);
    atomic_fetch_sub_explicit(&off.sleepers, 1, memory_order_relaxed);
    return MPI_SUCCESS;
}

bool MPIDI_CX_offload_wait(void)
{
    unsigned seen = seen_events;
    if (!start_sleeping())
        return false;
    unsigned now = atomic_load_explicit(&off.events, memory_order_seq_cst);
    if (now == seen)
        futex_wait(&off.events, now, WAITER_NAP_NS);
    atomic_fetch_sub_explicit(&off.sleepers, 1, memory_order_relaxed);
    seen_events = atomic_load_explicit(&off.events, memory_order_acquire);
    return true;
}

/* Under the VCI lock, at the end of a poll or of a thread's own issue:
 * count an event when anything was issued or completed since the last
 * one, and wake the waiters asleep. */
static void note_events(offload_vci_t * o, int vci)
{
    int count = MPL_atomic_relaxed_load_int(&MPIDI_VCI(vci).progress_count);
    unsigned long long issued = atomic_load_explicit(&o->issued, memory_order_relaxed);
    if (count == o->last_progress_count && issued == o->last_issued)
        return;
    o->last_progress_count = count;
    o->last_issued = issued;
    atomic_fetch_add_explicit(&off.events, 1, memory_order_seq_cst);
    if (!atomic_load_explicit(&off.sleepers, memory_order_seq_cst))
        return;
    /* registered waiters: only those whose requests all completed */
    if (atomic_load_explicit(&nwaiters, memory_order_relaxed)) {
        pthread_mutex_lock(&waiters_mutex);
        for (waiter_t * w = waiters; w; w = w->next)
            if (waiter_done(w) && !atomic_exchange_explicit(&w->word, 1, memory_order_release))
                syscall(SYS_futex, &w->word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
        pthread_mutex_unlock(&waiters_mutex);
    }
    /* the others (MPI_Waitany, internal waits) wake on any event */
    if (atomic_load_explicit(&off.sleepers, memory_order_relaxed) >
        atomic_load_explicit(&nwaiters, memory_order_relaxed))
        futex_wake_all(&off.events);
}

void MPIDI_CX_offload_progress_exit(int vci)
{
    offload_vci_t *o = off.vcis[vci];
    if (o)
        note_events(o, vci);
}

/* ---- setup and teardown --------------------------------------------------- */

/* "3", "2,3", "4-7,9": the CPU list of MPIR_CVAR_CH4_CX_OFFLOAD_CPUS. */
static bool parse_cpus(const char *s)
{
    off.ncpus = 0;
    while (*s) {
        char *end;
        long a = strtol(s, &end, 10), b;
        if (end == s || a < 0 || a >= CPU_SETSIZE)
            return false;
        b = a;
        s = end;
        if (*s == '-') {
            b = strtol(s + 1, &end, 10);
            if (end == s + 1 || b < a || b >= CPU_SETSIZE)
                return false;
            s = end;
        }
        for (long c = a; c <= b; c++) {
            if (off.ncpus == MAX_CPUS)
                return false;
            off.cpus[off.ncpus++] = (int) c;
        }
        if (*s == ',')
            s++;
        else if (*s)
            return false;
    }
    return true;
}

/* MPI_Init, model offload: the CVARs. */
int MPIDI_CX_offload_init(void)
{
    const char *mode = MPIR_CVAR_CH4_CX_OFFLOAD ? MPIR_CVAR_CH4_CX_OFFLOAD : "dynamic";
    if (!strcasecmp(mode, "static"))
        off.is_static = true;
    else if (!strcasecmp(mode, "dynamic"))
        off.is_static = false;
    else
        return MPIDI_CX_cvar_invalid("MPIR_CVAR_CH4_CX_OFFLOAD", mode, "dynamic, static");
    if (MPIR_CVAR_CH4_CX_OFFLOAD_IDLE_US < 0 || MPIR_CVAR_CH4_CX_OFFLOAD_IDLE_US > 1000000)
        return MPIDI_CX_cvar_invalid_int("MPIR_CVAR_CH4_CX_OFFLOAD_IDLE_US",
                                         MPIR_CVAR_CH4_CX_OFFLOAD_IDLE_US, "0 to 1000000");
    off.idle_ns = MPIR_CVAR_CH4_CX_OFFLOAD_IDLE_US * 1000LL;
    const char *cpus = MPIR_CVAR_CH4_CX_OFFLOAD_CPUS ? MPIR_CVAR_CH4_CX_OFFLOAD_CPUS : "";
    if (!parse_cpus(cpus))
        return MPIDI_CX_cvar_invalid("MPIR_CVAR_CH4_CX_OFFLOAD_CPUS", cpus,
                                     "CPU numbers and ranges, such as 3 or 2,3 or 4-7");
    atomic_store(&off.create_failed, false);
    return MPI_SUCCESS;
}

/* A VCI's queue (MPIDI_CX_init_vcis); executors may run once MPI_Init
 * has set up every VCI. */
int MPIDI_CX_offload_init_vci(MPIDU_cx_lock_t * l, int vci)
{
    offload_vci_t *o = MPL_aligned_alloc(CX_CACHELINE_SIZE,
                                         MPL_ROUND_UP_ALIGN(sizeof(*o), CX_CACHELINE_SIZE),
                                         MPL_MEM_THREAD);
    if (!o)
        return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                    MPI_ERR_OTHER, "**nomem", 0);
    memset(o, 0, sizeof(*o));
    if (cx_offload_q_init(&o->q, OFFLOAD_Q_SLOTS, false)) {
        MPL_free(o);
        return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                    MPI_ERR_OTHER, "**nomem", 0);
    }
    o->vci = vci;
    off.vcis[vci] = o;
    l->offload_q = &o->q;
    l->drain = offload_lock_drain;
    if (vci == MPIDI_global.n_vcis - 1)
        atomic_store_explicit(&off.on, true, memory_order_release);
    return MPI_SUCCESS;
}

/* The first step of MPID_Finalize, before any part of the device goes:
 * executors leave (what they had queued is issued by whoever polls next),
 * and threads issue and poll themselves from now on. */
void MPIDI_CX_offload_stop(void)
{
    if (!atomic_exchange_explicit(&off.on, false, memory_order_acq_rel))
        return;
    for (int i = 0; i < MPIDI_CH4_MAX_VCIS; i++) {
        offload_vci_t *o = off.vcis[i];
        if (!o || !o->thread_created)
            continue;
        atomic_store_explicit(&o->stop, true, memory_order_release);
        atomic_fetch_add_explicit(&o->wake, 1, memory_order_release);
        futex_wake_all(&o->wake);
        pthread_join(o->thread, NULL);
        o->thread_created = false;
        atomic_fetch_and_explicit(&o->q.tail, ~CX_OFFLOAD_Q_ALIVE, memory_order_acq_rel);
    }
    for (int i = 0; i < MPIDI_global.n_vcis; i++) {
        offload_vci_t *o = off.vcis[i];
        if (!o || cx_offload_q_is_empty(&o->q))
            continue;
        MPIDU_CX_cs_enter(&MPIDI_VCI(i).lock);
        issue_all_queued(o);
        MPIDU_CX_cs_exit(&MPIDI_VCI(i).lock);
    }
}

/* MPIDI_CX_finalize: the queues (the executors are gone). */
void MPIDI_CX_offload_finalize(void)
{
    MPIDI_CX_offload_stop();
    for (int i = 0; i < MPIDI_CH4_MAX_VCIS; i++) {
        offload_vci_t *o = off.vcis[i];
        if (!o)
            continue;
        if (MPIDI_CX_global.locks[i])
            MPIDI_CX_global.locks[i]->offload_q = NULL;
        cx_offload_q_destroy(&o->q);
        MPL_free(o);
        off.vcis[i] = NULL;
    }
}

/* ---- MPI_T ---------------------------------------------------------------- */

#define OFFLOAD_PVAR(name_, field_) \
    static void name_(void *addr, void *obj, int count, void *buf) \
    { \
        unsigned long long sum = 0; \
        for (int i = 0; i < MPIDI_CH4_MAX_VCIS; i++) \
            if (off.vcis[i]) \
                sum += atomic_load_explicit(&off.vcis[i]->field_, memory_order_relaxed); \
        *(unsigned long long *) buf = sum; \
    }
OFFLOAD_PVAR(get_offloaded, offloaded)
    OFFLOAD_PVAR(get_direct, direct)
    OFFLOAD_PVAR(get_starts, starts)
    OFFLOAD_PVAR(get_retires, retires)
    OFFLOAD_PVAR(get_batches, batches)
    OFFLOAD_PVAR(get_start_ns, start_ns)
static void get_nap_timeouts(void *addr, void *obj, int count, void *buf)
{
    *(unsigned long long *) buf = atomic_load_explicit(&nap_timeouts, memory_order_relaxed);
}

static void get_alive(void *addr, void *obj, int count, void *buf)
{
    unsigned long long n = 0;
    for (int i = 0; i < MPIDI_CH4_MAX_VCIS; i++)
        if (off.vcis[i] && cx_offload_q_alive(&off.vcis[i]->q))
            n++;
    *(unsigned long long *) buf = n;
}

void MPIDI_CX_offload_register_pvars(void)
{
    static const struct {
        const char *name;
        int class;
        void (*get)(void *, void *, int, void *);
        const char *desc;
    } pvars[] = {
        {"cx_offload_ops", MPI_T_PVAR_CLASS_COUNTER, get_offloaded,
         "offload: operations application threads handed to an executor"},
        {"cx_offload_direct", MPI_T_PVAR_CLASS_COUNTER, get_direct,
         "offload: operations threads issued themselves (inside a VCI section or the progress "
         "hooks, a full queue, a proxy-cache refill, one-sided operations with a request)"},
        {"cx_offload_starts", MPI_T_PVAR_CLASS_COUNTER, get_starts,
         "offload: executors started (a thread found none alive)"},
        {"cx_offload_retires", MPI_T_PVAR_CLASS_COUNTER, get_retires,
         "offload: executors that retired after MPIR_CVAR_CH4_CX_OFFLOAD_IDLE_US without work"},
        {"cx_offload_batches", MPI_T_PVAR_CLASS_COUNTER, get_batches,
         "offload: queue runs that issued at least one operation "
         "(cx_offload_ops / cx_offload_batches = mean batch size)"},
        {"cx_offload_start_ns", MPI_T_PVAR_CLASS_COUNTER, get_start_ns,
         "offload: nanoseconds threads spent starting executors (thread creation, wake-ups)"},
        {"cx_offload_nap_timeouts", MPI_T_PVAR_CLASS_COUNTER, get_nap_timeouts,
         "offload: naps of a thread blocked in MPI_Wait/MPI_Waitall that lasted their whole "
         "10 ms (its requests took that long, or a wake-up was missed)"},
        {"cx_offload_alive", MPI_T_PVAR_CLASS_LEVEL, get_alive,
         "offload: executors alive now"},
    };
    for (size_t i = 0; i < sizeof(pvars) / sizeof(pvars[0]); i++)
        MPIR_T_PVAR_REGISTER_impl(pvars[i].class, MPI_UNSIGNED_LONG_LONG, pvars[i].name, NULL, 1,
                                  MPI_T_ENUM_NULL, MPI_T_VERBOSITY_USER_BASIC,
                                  MPI_T_BIND_NO_OBJECT,
                                  MPIR_T_PVAR_FLAG_READONLY | MPIR_T_PVAR_FLAG_CONTINUOUS,
                                  pvars[i].get, NULL, "CH4_CX", pvars[i].desc);
}
