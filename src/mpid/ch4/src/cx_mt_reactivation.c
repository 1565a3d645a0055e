/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 */
/* Selective reactivation in MPI_Wait/MPI_Waitall (the hclhub-usc and
 * hclhub-ksc models, and MPIR_CVAR_CH4_CX_WAIT): one blocked thread, the
 * server, polls progress and signals the others' synchronization counters;
 * they spin (usc) or sleep (ksc) until their requests completed.  Waits
 * nested inside progress poll instead; an idle server parks or runs at
 * SCHED_IDLE.  Design, rules and the paper: doc/design/reactivation.md;
 * the counters and the election are src/util/threadsafety/cx_reactivation.h. */
#include "mpidimpl.h"
#include "cx_mt.h"
#include "cx_reactivation.h"
#include "cx_park.h"
#include <sched.h>
#include <unistd.h>

/* One per thread; the counter comes first so that a list entry is the waiter. */
typedef struct {
    cx_scount_t c;
    MPIR_Request **reqs;        /* what MPI_Wait/MPI_Waitall registered */
    int n;
    int first;                  /* reqs[0 .. first) completed (NULL counts as complete) */
    int kind;                   /* CX_SCOUNT_* the counter was initialized with, -1: not yet */
} waiter_t;

static cx_reactivation_t react;
static atomic_ulong wait_yields;        /* yields of threads polling in auto */
static pthread_mutex_t react_mutex = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local waiter_t thread_waiter = {.kind = -1 };

/* this thread's registered waits under way, and whether it serves: a
 * wait nested in a poll of an outer one polls, never sleeps */
static _Thread_local cx_reactivation_self_t thread_self;
static atomic_ulong idle_tenures;       /* server tenures polled at SCHED_IDLE */

/* The longest a server stays at SCHED_IDLE before the watchdog moves it
 * back (plus the time the watchdog takes to get a core). */
#define CX_SERVER_IDLE_MAX_NS 1000000L
static cx_idle_watchdog_t watchdog = CX_IDLE_WATCHDOG_INITIALIZER(CX_SERVER_IDLE_MAX_NS);
static _Thread_local int thread_tid;

/* MPIR_CVAR_CH4_CX_SERVER_PARK: the longest park (a vacant server role
 * waits as long for a KSC waiter's time-out), and how long the server
 * yields instead after a park that timed out (no core went idle). */
#define CX_SERVER_PARK_MAX_NS 1000000L
#define CX_SERVER_PARK_BACKOFF_NS 10000000L
static cx_park_t park = CX_PARK_INITIALIZER(CX_SERVER_PARK_MAX_NS, CX_SERVER_PARK_BACKOFF_NS);

static waiter_t *this_thread_waiter(void)
{
    waiter_t *w = &thread_waiter;
    int kind = MPIDI_CX_global.wait_kind == MPIDI_CX_WAIT_USC ? CX_SCOUNT_USC : CX_SCOUNT_KSC;
    if (w->kind != kind) {      /* first wait of this thread, or the model changed */
        if (w->kind >= 0)
            cx_scount_destroy(&w->c);
        cx_scount_init(&w->c, kind);
        w->kind = kind;
    }
    return w;
}

/* Requests of reqs[0 .. n) still pending; reqs[0 .. *first) completed
 * before (the completed prefix is skipped once). */
static int pending_of(MPIR_Request ** reqs, int n, int *first)
{
    while (*first < n && (reqs[*first] == NULL || MPIR_Request_is_complete(reqs[*first])))
        (*first)++;
    return n - *first;
}

static int pending(waiter_t * w)
{
    return pending_of(w->reqs, w->n, &w->first);
}

/* Under react_mutex: one counted signal per completed request (the
 * server after each poll, and any thread whose poll completed requests). */
static void signal_completions(void)
{
    cx_scount_t *c = react.head;
    while (c != NULL) {
        cx_scount_t *next = c->next;    /* the last signal unlinks c */
        int left = pending((waiter_t *) c);
        while (c->count > left)
            cx_reactivation_signal(&react, c);
        c = next;
    }
}

/* Under react_mutex, after the waiter list changed: whether polls must
 * look for completions to signal (MPIDI_CX_progress_exit). */
static void note_sleepers(void)
{
    atomic_store_explicit(&MPIDI_CX_global.sleepers, react.head != NULL, memory_order_relaxed);
}

/* A thread whose poll completed requests while waiters sleep wakes those
 * whose requests are all done: not only the server, which may be parked,
 * or get a core rarely beside threads that poll in MPI_Test loops. */
void MPIDI_CX_signal_sleepers(void)
{
    /* the holder is the server, which signals after its poll, or a thread
     * changing the list; our completions stay unsignaled (signaled_count)
     * until the next poll of anyone */
    if (pthread_mutex_trylock(&react_mutex) != 0)
        return;
    for (int i = 0; i < MPIDI_global.n_vcis; i++)
        MPIDI_CX_global.signaled_count[i] =
            MPL_atomic_relaxed_load_int(&MPIDI_VCI(i).progress_count);
    signal_completions();
    note_sleepers();
    pthread_mutex_unlock(&react_mutex);
}

static void react_lock(void *m)
{
    pthread_mutex_lock(m);
}

static void react_unlock(void *m)
{
    pthread_mutex_unlock(m);
}

/* One poll of every VCI, as a blocking wait does it (low priority entry). */
static int poll_all_vcis(bool *made_progress)
{
    MPID_Progress_state ps;
    MPIDI_progress_state_init(&ps);
    MPIDI_progress_state_init_count(&ps);
    int mpi_errno = MPIDI_progress_test(&ps, 1);
    *made_progress = ps.progress_made;
    return mpi_errno;
}

/* The server after a poll that found nothing: it leaves the CPU to any
 * thread that wants it.  With MPIR_CVAR_CH4_CX_SERVER_IDLE it does so at
 * SCHED_IDLE, and so runs again only once no other thread wants the core
 * (or the watchdog moved it back); it polls at its own priority, so it never
 * holds a VCI lock at idle priority (a thread blocked on that lock would
 * wait for every other thread first).  Otherwise, with
 * MPIR_CVAR_CH4_CX_SERVER_PARK, it parks until a core has nothing else to
 * run (cx_park.h), and yields while parks time out.  True when it went to
 * SCHED_IDLE. */
static bool pause_as_server(cx_server_sched_t * sched, bool *checked)
{
    if (MPIDI_CX_global.server_idle && !*checked) {
        /* the policy is read once per wait; the watchdog started once */
        if (cx_server_sched_check(sched, MPIDI_CX_global.server_idle_nice) &&
            !cx_idle_watchdog_start(&watchdog))
            MPIDI_CX_global.server_idle = false;        /* no thread: idle never */
        if (!thread_tid)
            thread_tid = cx_idle_watchdog_gettid();
        *checked = true;
    }
    if (!MPIDI_CX_global.server_idle || !sched->eligible) {
        if (MPIDI_CX_global.server_park && cx_park_due(&park)) {
            if (cx_park_start(&park)) {
                cx_park(&park);
                return false;
            }
            MPIDI_CX_global.server_park = false;        /* no sentinel: yield always */
        }
        cx_yield();
        return false;
    }
    cx_idle_watchdog_arm(&watchdog, thread_tid);
    bool idle = cx_server_sched_idle(sched);
    cx_yield(); /* the move alone need not reschedule */
    if (!cx_server_sched_restore(sched)) {
        /* the probe at MPI_Init said this move back is allowed */
        MPIDI_CX_global.server_idle = false;
        MPL_internal_error_printf("MPICH-CX: a polling server could not return from "
                                  "SCHED_IDLE; set MPIR_CVAR_CH4_CX_SERVER_IDLE=no\n");
    }
    cx_idle_watchdog_disarm(&watchdog);
    return idle;
}

/* MPIR_CVAR_CH4_CX_SERVER_PARK=yes: the sentinel now, or an error. */
bool MPIDI_CX_server_park_start(void)
{
    return cx_park_start(&park);
}

void MPIDI_CX_reactivation_finalize(void)
{
    cx_idle_watchdog_stop(&watchdog);
    cx_park_stop(&park);
}

/* MPIR_CVAR_CH4_CX_WAIT=auto: the threads now past their first poll in a
 * registered wait, and how many may poll before the others sleep
 * (cx_crowd_limit; doc/performance.md has the measurements behind it). */
static atomic_int crowd, crowd_limit;

static int crowd_limit_of_this_rank(void)
{
    int node = (int) sysconf(_SC_NPROCESSORS_ONLN), allowed = node;
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0)
        allowed = CPU_COUNT(&set);
    return cx_crowd_limit(node, allowed, MPIR_Process.local_size);
}

/* auto: poll as MPICH does while the rank is not crowded, but give the
 * core away for real once the polls have found nothing for a while
 * (MPIR_CVAR_CH4_CX_WAIT_YIELD_AFTER; cx_yield says why); true when w's
 * requests completed (or on an error) before it became crowded. */
static bool poll_while_uncrowded(MPID_Progress_state * state, waiter_t * w, int *mpi_errno)
{
    int limit = atomic_load_explicit(&crowd_limit, memory_order_relaxed);
    if (limit == 0) {
        limit = crowd_limit_of_this_rank();
        atomic_store_explicit(&crowd_limit, limit, memory_order_relaxed);
    }
    cx_wait_yield_t y = CX_WAIT_YIELD_INITIALIZER;
    while (pending(w) > 0) {
        if (atomic_load_explicit(&crowd, memory_order_relaxed) > limit)
            return false;
        state->progress_made = 0;
        *mpi_errno = MPIDI_progress_test(state, 1);
        if (*mpi_errno)
            return true;
        if (!state->progress_made && MPIDI_CX_idle_work())
            continue;   /* CAB-MPI or Daps: work of a busy local rank */
        if (cx_wait_yield_due(&y, state->progress_made, MPIDI_CX_global.wait_yield_after_ns,
                              cx_park_now_ns)) {
            atomic_fetch_add_explicit(&wait_yields, 1, memory_order_relaxed);
            cx_yield();
        }
    }
    return true;
}

/* A registered wait nested in a poll of its own thread: MPICH's schedule
 * callbacks and progress hooks make blocking calls (MPI_Comm_idup's
 * context-id MPI_Allreduce, MPIR_Comm_commit's broadcast) from inside the
 * poll of the thread's MPI_Wait, which may be the reactivation server's.
 * Such a wait never sleeps as a waiter (nobody else would poll while the
 * server sleeps, and its thread may hold the schedule list's lock, which a
 * server polling elsewhere needs): it polls, every VCI and signaling the
 * waiters when its thread serves (the role stays with the outer wait,
 * which resigns it), else as MPICH does; cx_reactivation.h, nested waits.
 * Returns after a poll that made progress, or once its requests completed
 * (or on an error). */
static int wait_nested(MPID_Progress_state * state, bool serving)
{
    int mpi_errno = MPI_SUCCESS, first = 0;
    cx_wait_yield_t y = CX_WAIT_YIELD_INITIALIZER;
    while (pending_of(state->cx_waited, state->cx_nwaited, &first) > 0) {
        bool progressed;
        if (serving) {
            mpi_errno = poll_all_vcis(&progressed);
            pthread_mutex_lock(&react_mutex);
            cx_reactivation_polled(&react);
            signal_completions();
            note_sleepers();
            pthread_mutex_unlock(&react_mutex);
        } else {
            state->progress_made = 0;
            mpi_errno = MPIDI_progress_test(state, 1);
            progressed = state->progress_made;
        }
        if (mpi_errno || progressed)
            break;
        /* no park and no SCHED_IDLE here: the thread may hold a lock
         * (the schedule list's) that others wait for */
        if (serving || cx_wait_yield_due(&y, false, MPIDI_CX_global.wait_yield_after_ns,
                                         cx_park_now_ns)) {
            if (!serving)
                atomic_fetch_add_explicit(&wait_yields, 1, memory_order_relaxed);
            cx_yield();
        }
    }
    return mpi_errno;
}

/* The thread's outermost registered wait: returns after a poll that made
 * progress, or once every registered request completed (or on an error). */
static int wait_outer(MPID_Progress_state * state)
{
    int mpi_errno = MPI_SUCCESS;

    /* the paper's entry: poll first (the caller's VCIs, as MPICH does) */
    state->progress_made = 0;
    mpi_errno = MPIDI_progress_test(state, 1);
    if (mpi_errno != MPI_SUCCESS || state->progress_made)
        return mpi_errno;

    /* no progress: become the server, or wait for it */
    waiter_t *w = this_thread_waiter();
    bool server = false;

    w->reqs = state->cx_waited;
    w->n = state->cx_nwaited;
    w->first = 0;

    bool counted = (MPIDI_CX_global.wait_kind == MPIDI_CX_WAIT_AUTO);
    if (counted) {
        atomic_fetch_add_explicit(&crowd, 1, memory_order_relaxed);
        if (poll_while_uncrowded(state, w, &mpi_errno)) {
            atomic_fetch_sub_explicit(&crowd, 1, memory_order_relaxed);
            return mpi_errno;
        }
    }

    bool idled = false, sched_checked = false;
    cx_server_sched_t sched;
    cx_server_watch_t watch;
    pthread_mutex_lock(&react_mutex);
    cx_server_watch_start(&react, &watch);
    while (pending(w) > 0) {
        if (server || (server = cx_reactivation_try_elect_as(&react, &thread_self))) {
            bool progressed;
            pthread_mutex_unlock(&react_mutex);
            mpi_errno = poll_all_vcis(&progressed);
            /* idle: a busy local rank's work first (CAB-MPI, Daps) */
            if (!progressed && !MPIDI_CX_idle_work())
                idled |= pause_as_server(&sched, &sched_checked);
            /* its poll signaled what it completed (MPIDI_CX_progress_exit)
             * unless the list was busy; this also catches completions of
             * other paths (an issuer draining LockQ's queue) */
            pthread_mutex_lock(&react_mutex);
            cx_reactivation_polled(&react);
            signal_completions();
            note_sleepers();
            if (mpi_errno)
                break;
        } else {
            cx_scount_arm(&w->c, pending(w));
            cx_reactivation_add_waiter(&react, &w->c);
            note_sleepers();
            /* KSC waiters wake by themselves after a while: a leaving
             * server does not hand its role over (resign_lazy below); USC
             * waiters too, only to watch the server */
            bool woken = cx_scount_wait_timed(&w->c, react_unlock, react_lock, &react_mutex,
                                              CX_SCOUNT_KSC_HANDOVER_NS);
            /* a counted wake unlinked us, a forced one too; anything else is
             * a time-out or a stale flag from an earlier round: leave the
             * list either way */
            cx_reactivation_remove_waiter(&react, &w->c);
            note_sleepers();
            if (!woken) {
                if (w->kind == CX_SCOUNT_KSC)
                    react.handover_timeouts++;
                /* a server that stopped polling (blocked, perhaps on a lock
                 * a blocking call inside some thread's poll holds while it
                 * waits here): poll once in its place */
                if (cx_server_watch_stalled(&react, &watch)) {
                    pthread_mutex_unlock(&react_mutex);
                    state->progress_made = 0;
                    mpi_errno = MPIDI_progress_test(state, 1);
                    pthread_mutex_lock(&react_mutex);
                    if (mpi_errno)
                        break;
                }
            }
        }
    }
    if (server)
        /* USC waiters are woken to take over; KSC ones come by themselves */
        cx_reactivation_resign_as(&react, &thread_self, w->kind == CX_SCOUNT_KSC);
    else
        /* a forced wake we did not use; under ksc, a role the server left
         * vacant is taken up now rather than at the next time-out */
        cx_reactivation_wake_next(&react);
    note_sleepers();
    pthread_mutex_unlock(&react_mutex);
    if (idled)
        atomic_fetch_add_explicit(&idle_tenures, 1, memory_order_relaxed);
    if (counted)
        atomic_fetch_sub_explicit(&crowd, 1, memory_order_relaxed);
    return mpi_errno;
}

/* MPID_Progress_wait for a registered wait: returns after a poll that made
 * progress, or once every registered request completed (or on an error). */
int MPIDI_CX_wait_reactivated(MPID_Progress_state * state)
{
    int mpi_errno;
    if (MPIDI_CX_global.wait_kind == MPIDI_CX_WAIT_OFFLOAD)
        return MPIDI_CX_offload_wait_requests(state);   /* no server: the executor polls */
    cx_nest_t nest = cx_reactivation_enter(&thread_self);
    if (likely(nest == CX_NEST_OUTER))
        mpi_errno = wait_outer(state);
    else
        mpi_errno = wait_nested(state, nest == CX_NEST_SERVE);
    cx_reactivation_leave(&thread_self);
    return mpi_errno;
}

/* ---- MPI_T ----------------------------------------------------------------- */

#define REACT_PVAR_GETTER(name_, field_) \
    static void name_(void *addr, void *obj, int count, void *buf) \
    { \
        pthread_mutex_lock(&react_mutex); \
        *(unsigned long long *) buf = react.field_; \
        pthread_mutex_unlock(&react_mutex); \
    }
REACT_PVAR_GETTER(get_elections, elections)
    REACT_PVAR_GETTER(get_counted, counted_wakeups)
    REACT_PVAR_GETTER(get_forced, forced_wakeups)
    REACT_PVAR_GETTER(get_timeouts, handover_timeouts)
    REACT_PVAR_GETTER(get_stall_polls, stall_polls)
static void get_idle_tenures(void *addr, void *obj, int count, void *buf)
{
    *(unsigned long long *) buf = atomic_load_explicit(&idle_tenures, memory_order_relaxed);
}

static void get_idle_kicks(void *addr, void *obj, int count, void *buf)
{
    *(unsigned long long *) buf = atomic_load_explicit(&watchdog.kicks, memory_order_relaxed);
}

#define PARK_PVAR_GETTER(name_, field_) \
    static void name_(void *addr, void *obj, int count, void *buf) \
    { \
        *(unsigned long long *) buf = atomic_load_explicit(&park.field_, memory_order_relaxed); \
    }
PARK_PVAR_GETTER(get_parks, parks)
    PARK_PVAR_GETTER(get_park_rings, rings)
    PARK_PVAR_GETTER(get_park_timeouts, timeouts)
static void get_wait_yields(void *addr, void *obj, int count, void *buf)
{
    *(unsigned long long *) buf = atomic_load_explicit(&wait_yields, memory_order_relaxed);
}

void MPIDI_CX_reactivation_register_pvars(void)
{
    static const struct {
        const char *name;
        void (*get)(void *, void *, int, void *);
        const char *desc;
    } pvars[] = {
        {"cx_server_elections", get_elections,
         "selective reactivation (usc, ksc, auto when crowded): times a thread blocked in MPI_Wait(all) became the polling server"},
        {"cx_counted_wakeups", get_counted,
         "selective reactivation: waiters woken because all their requests completed"},
        {"cx_forced_wakeups", get_forced,
         "selective reactivation: waiters woken to take over polling from a leaving server (usc), or from a vacant role (ksc)"},
        {"cx_handover_timeouts", get_timeouts,
         "selective reactivation: sleeping waiters (ksc) that woke by their time limit to look for a vacant server role"},
        {"cx_stalled_server_polls", get_stall_polls,
         "selective reactivation: polls of a waiter in place of a server that polled nothing for two of its timed sleeps in a row"},
        {"cx_server_idle_tenures", get_idle_tenures,
         "selective reactivation: server tenures polled at SCHED_IDLE (MPIR_CVAR_CH4_CX_SERVER_IDLE)"},
        {"cx_server_idle_kicks", get_idle_kicks,
         "selective reactivation: servers the watchdog moved back from SCHED_IDLE after 1 ms"},
        {"cx_server_parks", get_parks,
         "selective reactivation: times the server parked after a poll that found nothing (MPIR_CVAR_CH4_CX_SERVER_PARK)"},
        {"cx_server_park_rings", get_park_rings,
         "selective reactivation: parks ended by the idle-priority sentinel, i.e. when a core had nothing else to run"},
        {"cx_server_park_timeouts", get_park_timeouts,
         "selective reactivation: parks that lasted 1 ms without a core going idle (the server then yields for 10 ms)"},
        {"cx_wait_yields", get_wait_yields,
         "auto waits: times a thread polling in MPI_Wait(all), its polls in vain for MPIR_CVAR_CH4_CX_WAIT_YIELD_AFTER, gave its core away (sched_yield)"},
    };
    for (size_t i = 0; i < sizeof(pvars) / sizeof(pvars[0]); i++)
        MPIR_T_PVAR_REGISTER_impl(MPI_T_PVAR_CLASS_COUNTER, MPI_UNSIGNED_LONG_LONG,
                                  pvars[i].name, NULL, 1, MPI_T_ENUM_NULL,
                                  MPI_T_VERBOSITY_USER_BASIC, MPI_T_BIND_NO_OBJECT,
                                  MPIR_T_PVAR_FLAG_READONLY | MPIR_T_PVAR_FLAG_CONTINUOUS,
                                  pvars[i].get, NULL, "CH4_CX", pvars[i].desc);
}
