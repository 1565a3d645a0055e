/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 */
/* The thread-safety models' CVARs (offload's: cx_mt_offload.c), the
 * choice of model, VCI lock and wait at MPI_Init, the VCI locks' setup and
 * teardown, and the models' pvars (doc/user/thread-safety.md). */
#include "mpidimpl.h"
#include "cx_mt_impl.h"
#include "cx_cvar.h"
#include "cx_topology.h"
#include "cx_nm_poll.h"
#include "cx_reactivation.h"

/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

categories :
    - name : CH4_CX
      description : MPICH-CX thread-safety models

cvars:
    - name        : MPIR_CVAR_CH4_CX_VCI_LOCK
      category    : CH4_CX
      alt-env     : MPIR_CVAR_CH4_VCI_LOCK
      type        : string
      default     : ""
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        The lock under each VCI critical section (requires
        --enable-thread-cs=per-vci): mutex (MPICH's pthread mutex), futex
        (the same algorithm, try-lock and release inline), ticket, mcs, clh,
        clhub (priority lock with unbounded bias), hclhub (clhub with a NUMA
        cohort lock). Empty: the model's own lock (hclhub for hclhub-usc and
        hclhub-ksc), else --with-ch4-vci-lock if configure was given one,
        else mutex (direct) or futex (lockq). The csync model always uses its
        combining lock.

    - name        : MPIR_CVAR_CH4_CX_MAX_COMBINE
      category    : CH4_CX
      type        : int
      default     : 1024
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        lockq and csync: the most queued operations one lock holder runs for
        other threads before it hands on (1 or more).

    - name        : MPIR_CVAR_CH4_CX_TEST_MAX_FAILURES
      category    : CH4_CX
      type        : int
      default     : 64
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        lockq, csync: consecutive failed progress try-locks a thread
        tolerates before it takes the VCI lock blocking, so a repeated
        MPI_Test always progresses (1 or more).

    - name        : MPIR_CVAR_CH4_CX_WAIT
      category    : CH4_CX
      type        : string
      default     : ""
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        How a thread blocked in MPI_Wait or MPI_Waitall waits: poll (every
        waiting thread polls progress, as MPICH), usc (selective
        reactivation: one waiting thread polls, the others spin, then
        yield, until their requests completed), ksc (the same, the others
        sleep on a condition variable), auto (poll while at most twice as
        many threads wait as the rank has cores, ksc beyond). Empty: the
        model's own (auto for lockq, usc for hclhub-usc, ksc for hclhub-ksc,
        poll for direct and csync). offload takes none: its waiters sleep
        until its executor completed their requests.

    - name        : MPIR_CVAR_CH4_CX_WAIT_YIELD_AFTER
      category    : CH4_CX
      type        : int
      default     : 100
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        Waits auto, while uncrowded: after how many microseconds of polls
        that found nothing a thread blocked in MPI_Wait or MPI_Waitall
        gives its core to another thread (sched_yield) after each further
        poll in vain, until one progresses. 0: after every poll in vain;
        -1: never (MPICH's polling, whose yield does nothing on Linux).
        -1 to 1000000.

    - name        : MPIR_CVAR_CH4_CX_SERVER_IDLE
      category    : CH4_CX
      type        : string
      default     : "no"
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        Whether the thread that polls for sleeping waiters (the selective
        reactivation server, waits ksc or auto) waits between its polls at
        Linux's SCHED_IDLE priority, so that threads with work run first
        when threads outnumber cores. no (default): never; auto: where the
        waits are ksc or auto, the VCI locks futex or mutex (their waiters
        sleep), and a thread may return from SCHED_IDLE (CAP_SYS_NICE, or
        RLIMIT_NICE of 20 or more: ulimit -e 20); yes: the same, and MPI_Init
        fails if one of these is missing.

    - name        : MPIR_CVAR_CH4_CX_SERVER_PARK
      category    : CH4_CX
      type        : string
      default     : "auto"
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        Whether the selective reactivation server (waits ksc or auto),
        after a poll that found nothing, sleeps until a core has nothing
        else to run (a helper thread at SCHED_IDLE wakes it; at most 1 ms)
        instead of yielding, so that threads with work run first when
        threads outnumber cores. No privilege needed. auto (default): where
        the waits are ksc or auto and the VCI locks futex or mutex (their
        waiters sleep); yes: the same, and MPI_Init fails where they are
        not or the helper thread cannot run at idle priority; no: the
        server yields between polls. MPIR_CVAR_CH4_CX_SERVER_IDLE, where it
        acts, takes precedence.

    - name        : MPIR_CVAR_CH4_CX_FORCE_TRYLOCK_FAIL
      category    : CH4_CX
      type        : int
      default     : 0
      class       : none
      verbosity   : MPI_T_VERBOSITY_MPIDEV_DETAIL
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        Debugging: percent (0-100) of lockq issue try-locks that fail on
        purpose, so tests drive the enqueue path.

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

MPIDI_CX_global_t MPIDI_CX_global;
_Thread_local cx_test_backoff_t MPIDI_CX_test_backoff;

/* The values of MPIR_CVAR_CH4_MT_MODEL (and --enable-ch4-mt) that are ours,
 * listed in cx_mt_models.def.  The VCI lock: MPIR_CVAR_CH4_CX_VCI_LOCK if
 * set; else the model's own lock (`lock`, part of what the model is); else
 * --with-ch4-vci-lock if given; else the model's default (`dflt`). */
#include "cx_mt_models.def"

/* *INDENT-OFF* */
static const struct {
    const char *name;
    int model;
    int lock;                   /* the model's own lock, -1: none */
    int dflt;                   /* its lock when nothing else names one */
    int wait_kind;
/* *INDENT-OFF* */
} models[] = {
#define MODEL_ROW(name_, model_, lock_, dflt_, wait_) {name_, model_, lock_, dflt_, wait_},
    MPIDI_CX_MT_MODELS(MODEL_ROW)
#undef MODEL_ROW
};
/* *INDENT-ON* */

#define NUM_MODELS ((int) (sizeof(models) / sizeof(models[0])))
/* "direct, lockq, ..., lockless": every name MPIR_CVAR_CH4_MT_MODEL takes */
#define MODEL_NAME_COMMA(name_, model_, lock_, dflt_, wait_) name_ ", "
#define MODEL_LIST MPIDI_CX_MT_MODELS(MODEL_NAME_COMMA) "lockless"
#ifdef MPIDI_CH4_USE_MT_LOCKLESS
#define BUILT_MT_NAME "lockless"
#else
#define BUILT_MT_NAME MPIDI_CX_DEFAULT_MT_NAME
#endif

static int find_model(const char *name)
{
    for (int m = 0; m < NUM_MODELS; m++)
        if (!strcasecmp(name, models[m].name))
            return m;
    return -1;
}

/* The values of MPIR_CVAR_CH4_CX_WAIT, indexed by MPIDI_CX_WAIT_*, and
 * the offload model's own (not a value of the CVAR). */
static const char *const wait_kinds[] = { "poll", "usc", "ksc", "auto", "offload" };

static int find_wait_kind(const char *name)
{
    for (int k = 0; k < MPIDI_CX_WAIT_OFFLOAD; k++)
        if (!strcasecmp(name, wait_kinds[k]))
            return k;
    return -1;
}

/* MPI_Get_library_version's line: the model and lock this run uses. */
const char *MPIDI_CX_mt_describe(void)
{
    static char buf[80];
    snprintf(buf, sizeof(buf), "model %s, VCI lock %s, wait %s", MPIDI_CX_global.model_name,
             MPIDU_CX_lock_name(MPIDI_CX_global.lock_kind), wait_kinds[MPIDI_CX_global.wait_kind]);
    return buf;
}

/* ---- selection --------------------------------------------------------- */

/* Whether a core can go idle while the reactivation server waits between
 * polls: its waiters sleep (ksc, auto) and so do VCI lock waiters (futex,
 * mutex), rather than spin (spinning ones would keep an idle or parked
 * server off the CPU while they wait for its polls). */
static bool server_waits_beside_sleepers(void)
{
    int w = MPIDI_CX_global.wait_kind, l = MPIDI_CX_global.lock_kind;
    return (w == MPIDI_CX_WAIT_KSC || w == MPIDI_CX_WAIT_AUTO) &&
        (l == MPIDU_CX_LOCK_FUTEX || l == MPIDU_CX_LOCK_MUTEX);
}

/* The auto|yes|no of a server setting (MPIR_CVAR_CH4_CX_SERVER_IDLE and
 * _PARK), once the model, wait and lock are known: *on when it may act
 * (auto or yes, beside sleeping waiters); an error for a bad value, and for
 * yes beside spinning ones.  *required: yes, so that the caller's own
 * condition fails MPI_Init too. */
static int server_setting(const char *cvar, const char *v, bool *required, bool *on)
{
    *required = !strcasecmp(v, "yes");
    *on = false;
    if (!strcasecmp(v, "no"))
        return MPI_SUCCESS;
    if (!*required && strcasecmp(v, "auto"))
        return MPIDI_CX_cvar_invalid(cvar, v, "auto, yes, no");
    if (!server_waits_beside_sleepers()) {
        if (!*required)
            return MPI_SUCCESS;
        return MPIDI_CX_cvar_invalid(cvar, v, "auto, no (yes needs MPIR_CVAR_CH4_CX_WAIT ksc "
                                     "or auto and MPIR_CVAR_CH4_CX_VCI_LOCK futex or mutex)");
    }
    *on = true;
    return MPI_SUCCESS;
}

static int server_idle_init(void)
{
    const char *v = MPIR_CVAR_CH4_CX_SERVER_IDLE ? MPIR_CVAR_CH4_CX_SERVER_IDLE : "no";
    bool required, on;
    MPIDI_CX_global.server_idle = false;
    int mpi_errno = server_setting("MPIR_CVAR_CH4_CX_SERVER_IDLE", v, &required, &on);
    if (mpi_errno || !on)
        return mpi_errno;
    if (!cx_server_sched_probe(&MPIDI_CX_global.server_idle_nice)) {
        if (!required)
            return MPI_SUCCESS;
        return MPIDI_CX_cvar_invalid("MPIR_CVAR_CH4_CX_SERVER_IDLE", v,
                                     "auto, no (yes needs threads that may return from "
                                     "SCHED_IDLE: CAP_SYS_NICE, or RLIMIT_NICE of 20 or more, "
                                     "as after ulimit -e 20)");
    }
    MPIDI_CX_global.server_idle = true;
    return MPI_SUCCESS;
}

static int server_park_init(void)
{
    const char *v = MPIR_CVAR_CH4_CX_SERVER_PARK ? MPIR_CVAR_CH4_CX_SERVER_PARK : "auto";
    bool required, on;
    MPIDI_CX_global.server_park = false;
    int mpi_errno = server_setting("MPIR_CVAR_CH4_CX_SERVER_PARK", v, &required, &on);
    if (mpi_errno || !on)
        return mpi_errno;
    /* auto starts the sentinel at the first park (most processes never
     * crowd); yes here, to report a failure */
    if (required && !MPIDI_CX_server_park_start())
        return MPIDI_CX_cvar_invalid("MPIR_CVAR_CH4_CX_SERVER_PARK", v,
                                     "auto, no (yes needs a thread that runs at SCHED_IDLE "
                                     "or nice 19, on Linux)");
    MPIDI_CX_global.server_park = true;
    return MPI_SUCCESS;
}

/* Reads the model and lock CVARs.  *consumed tells the caller (CH4's own
 * runtime selection) that the model name was one of ours. */
int MPIDI_CX_init(bool *consumed)
{
    int mpi_errno = MPI_SUCCESS;
    const char *name = MPIR_CVAR_CH4_MT_MODEL;

    *consumed = false;
    mpi_errno = MPIDI_CX_nm_poll_init();
    if (mpi_errno)
        return mpi_errno;
    mpi_errno = MPIDI_CX_rank_yield_init();
    if (mpi_errno)
        return mpi_errno;
    int m = find_model(MPIDI_CX_DEFAULT_MT_NAME);
    MPIR_Assert(m >= 0);
    if (name[0]) {
        int named = find_model(name);
        if (!strcasecmp(name, "handoff")) {
            /* MPICH 4.0.2 compiles its work queues out (ch4i_workq_types.h) */
            return MPIDI_CX_cvar_invalid("MPIR_CVAR_CH4_MT_MODEL", name,
                                         MODEL_LIST " (handoff is disabled in MPICH 4.0.2)");
        }
#ifdef MPIDI_CH4_USE_MT_RUNTIME
        if (named < 0 && strcasecmp(name, "lockless"))
            return MPIDI_CX_cvar_invalid("MPIR_CVAR_CH4_MT_MODEL", name, MODEL_LIST);
        if (named >= 0) {
            m = named;
            MPIDI_global.settings.mt_model = MPIDI_CH4_MT_DIRECT;
            *consumed = true;
        }
#else
        /* a fixed build runs one model: any other name, or a typo (which
         * MPICH itself only warns about), stops MPI_Init */
#ifdef MPIDI_CH4_USE_MT_LOCKLESS
        bool is_built = !strcasecmp(name, "lockless");
#else
        bool is_built = named == m;
#endif
        if (!is_built)
            return MPIDI_CX_cvar_invalid("MPIR_CVAR_CH4_MT_MODEL", name,
                                         BUILT_MT_NAME " (this build; the models are "
                                         MODEL_LIST ": configure --enable-ch4-mt=runtime to "
                                         "choose one at run time)");
        *consumed = (named >= 0);
#endif
    } else {
#ifdef MPIDI_CH4_USE_MT_RUNTIME
        MPIDI_global.settings.mt_model = MPIDI_CH4_MT_DIRECT;
#endif
        *consumed = true;
    }
    MPIDI_CX_global.model = models[m].model;
    MPIDI_CX_global.model_name = models[m].name;
    MPIDI_CX_global.wait_kind = models[m].wait_kind;
    if (MPIR_CVAR_CH4_CX_WAIT[0]) {
        int k = find_wait_kind(MPIR_CVAR_CH4_CX_WAIT);
        if (k < 0)
            return MPIDI_CX_cvar_invalid("MPIR_CVAR_CH4_CX_WAIT", MPIR_CVAR_CH4_CX_WAIT,
                                         "poll, usc, ksc, auto");
        MPIDI_CX_global.wait_kind = k;
    }
    if (MPIDI_CX_global.model == MPIDI_CX_MT_OFFLOAD) {
        /* its waiters never poll: they sleep until the executor completed
         * their requests */
        if (MPIR_CVAR_CH4_CX_WAIT[0])
            return MPIDI_CX_cvar_invalid("MPIR_CVAR_CH4_CX_WAIT", MPIR_CVAR_CH4_CX_WAIT,
                                         "unset (offload's waiters sleep until its "
                                         "executor completed their requests)");
        mpi_errno = MPIDI_CX_offload_init();
        if (mpi_errno)
            return mpi_errno;
    }

    /* the CVAR overrides a model's own lock, except CSync's combining lock,
     * which is the model itself: naming another there is an error */
    if (MPIR_CVAR_CH4_CX_VCI_LOCK[0] && MPIDI_CX_global.model == MPIDI_CX_MT_CSYNC &&
        strcasecmp(MPIR_CVAR_CH4_CX_VCI_LOCK, "dsm"))
        return MPIDI_CX_cvar_invalid("MPIR_CVAR_CH4_CX_VCI_LOCK", MPIR_CVAR_CH4_CX_VCI_LOCK,
                                     "dsm, or unset (csync's VCI lock is its combining lock; "
                                     "the others apply to direct, lockq and hclhub-*)");
    if (MPIR_CVAR_CH4_CX_VCI_LOCK[0])
        name = MPIR_CVAR_CH4_CX_VCI_LOCK;
    else if (models[m].lock >= 0)
        name = MPIDU_CX_lock_name(models[m].lock);
    else if (strcmp(MPIDI_CX_DEFAULT_VCI_LOCK, "default"))
        name = MPIDI_CX_DEFAULT_VCI_LOCK;
    else
        name = MPIDU_CX_lock_name(models[m].dflt);
    MPIDI_CX_global.lock_kind = MPIDU_CX_lock_parse(name);
    if (MPIDI_CX_global.lock_kind < 0 || (MPIDI_CX_global.lock_kind == MPIDU_CX_LOCK_DSM &&
                                          MPIDI_CX_global.model != MPIDI_CX_MT_CSYNC))
        return MPIDI_CX_cvar_invalid("MPIR_CVAR_CH4_CX_VCI_LOCK", name,
                                     "mutex, futex, ticket, mcs, clh, clhub, hclhub");
    if (MPIDI_CX_global.model == MPIDI_CX_MT_CSYNC)
        MPIDI_CX_global.lock_kind = MPIDU_CX_LOCK_DSM;

    mpi_errno = MPIDI_CX_cvar_positive("MPIR_CVAR_CH4_CX_MAX_COMBINE", MPIR_CVAR_CH4_CX_MAX_COMBINE,
                                       &MPIDI_CX_global.max_combine);
    if (mpi_errno)
        return mpi_errno;
    mpi_errno = MPIDI_CX_cvar_positive("MPIR_CVAR_CH4_CX_TEST_MAX_FAILURES",
                                       MPIR_CVAR_CH4_CX_TEST_MAX_FAILURES,
                                       &MPIDI_CX_global.test_max_failures);
    if (mpi_errno)
        return mpi_errno;
    if (MPIR_CVAR_CH4_CX_FORCE_TRYLOCK_FAIL < 0 || MPIR_CVAR_CH4_CX_FORCE_TRYLOCK_FAIL > 100)
        return MPIDI_CX_cvar_invalid_int("MPIR_CVAR_CH4_CX_FORCE_TRYLOCK_FAIL",
                                         MPIR_CVAR_CH4_CX_FORCE_TRYLOCK_FAIL, "0 to 100");
    MPIDI_CX_global.force_trylock_fail = MPIR_CVAR_CH4_CX_FORCE_TRYLOCK_FAIL;
    if (MPIR_CVAR_CH4_CX_WAIT_YIELD_AFTER < -1 || MPIR_CVAR_CH4_CX_WAIT_YIELD_AFTER > 1000000)
        return MPIDI_CX_cvar_invalid_int("MPIR_CVAR_CH4_CX_WAIT_YIELD_AFTER",
                                         MPIR_CVAR_CH4_CX_WAIT_YIELD_AFTER,
                                         "-1 (never), 0 to 1000000 (microseconds)");
    MPIDI_CX_global.wait_yield_after_ns = MPIR_CVAR_CH4_CX_WAIT_YIELD_AFTER < 0 ? -1 :
        MPIR_CVAR_CH4_CX_WAIT_YIELD_AFTER * 1000LL;
    mpi_errno = server_idle_init();
    if (mpi_errno)
        return mpi_errno;
    mpi_errno = server_park_init();
    if (mpi_errno)
        return mpi_errno;

    /* the topology code reads this test knob itself; refuse a bad value here */
    const char *fake = getenv("MPICH_CX_FAKE_NUMA_NODES");
    if (fake) {
        char *end;
        long n = strtol(fake, &end, 10);
        if (end == fake || *end || n < 1 || n > 1024)
            return MPIDI_CX_cvar_invalid("MPICH_CX_FAKE_NUMA_NODES", fake, "1 to 1024");
    }
    return MPI_SUCCESS;
}

static void register_pvars(void);

/* After MPICH created the VCI mutexes: put a CX lock (and queue) under each. */
int MPIDI_CX_init_vcis(void)
{
    int mpi_errno = MPI_SUCCESS;
    bool stock = (MPIDI_CX_global.model == MPIDI_CX_MT_DIRECT &&
                  MPIDI_CX_global.lock_kind == MPIDU_CX_LOCK_MUTEX);
#if MPICH_THREAD_GRANULARITY == MPICH_THREAD_GRANULARITY__VCI
    int numa = 1;
    if (stock)
        goto fn_exit;   /* MPICH's own path, untouched */
    if (MPIDI_CX_global.lock_kind == MPIDU_CX_LOCK_HCLHUB)
        numa = MPIR_CX_topology_init();
    for (int i = 0; i < MPIDI_global.n_vcis; i++) {
        MPIDU_cx_lock_t *l = MPL_aligned_alloc(CX_CACHELINE_SIZE,
                                               MPL_ROUND_UP_ALIGN(sizeof(*l), CX_CACHELINE_SIZE),
                                               MPL_MEM_THREAD);
        MPIR_ERR_CHKANDJUMP(!l, mpi_errno, MPI_ERR_OTHER, "**nomem");
        MPIR_ERR_CHKANDJUMP(MPIDU_CX_lock_init(l, MPIDI_CX_global.lock_kind, i, numa),
                            mpi_errno, MPI_ERR_OTHER, "**nomem");
        if (l->kind == MPIDU_CX_LOCK_DSM)
            MPIDI_CX_csync_init_lock(l);
        if (MPIDI_CX_global.model == MPIDI_CX_MT_LOCKQ) {
            mpi_errno = MPIDI_CX_lockq_init_lock(l, i);
            MPIR_ERR_CHECK(mpi_errno);
        }
        if (MPIDI_CX_global.model == MPIDI_CX_MT_OFFLOAD) {
            mpi_errno = MPIDI_CX_offload_init_vci(l, i);
            MPIR_ERR_CHECK(mpi_errno);
        }
        MPIDI_CX_global.locks[i] = l;
        MPIDI_VCI(i).lock.cx = l;
    }
#else
    MPIR_ERR_CHKANDJUMP(!stock, mpi_errno, MPI_ERR_OTHER, "**cx|needpervci");
#endif
  fn_exit:
    register_pvars();
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* Before MPICH destroys the VCI mutexes and request pools. */
void MPIDI_CX_finalize(void)
{
    MPIDI_CX_offload_finalize();
    MPIDI_CX_reactivation_finalize();
    MPIDI_CX_lockq_finalize();
    for (int i = 0; i < MPIDI_CH4_MAX_VCIS; i++) {
        MPIDU_cx_lock_t *l = MPIDI_CX_global.locks[i];
        if (!l)
            continue;
        MPIR_Assert(MPIDI_CX_global.issued[i].head == NULL);
        MPIDI_VCI(i).lock.cx = NULL;
        if (l->queue) {
            cx_lockq_destroy(l->queue);
            MPL_free(l->queue);
        }
        MPIDU_CX_lock_destroy(l);
        MPL_free(l);
        MPIDI_CX_global.locks[i] = NULL;
        MPIDI_CX_global.queues[i] = NULL;
    }
}

/* ---- MPI_T ----------------------------------------------------------------- */

static unsigned long long pvar_sum(int which)
{
    unsigned long long sum = 0;
    for (int i = 0; i < MPIDI_CH4_MAX_VCIS; i++) {
        MPIDU_cx_lock_t *l = MPIDI_CX_global.locks[i];
        cx_lockq_t *q = MPIDI_CX_global.queues[i];
        if (!l)
            continue;
        switch (which) {
            case 0:
                sum += q ? atomic_load_explicit(&q->enqueued, memory_order_relaxed) : 0;
                break;
            case 1:
                sum += q ? atomic_load_explicit(&q->combined, memory_order_relaxed)
                    : (l->kind == MPIDU_CX_LOCK_DSM ?
                       atomic_load_explicit(&l->u.dsm.combined, memory_order_relaxed) : 0);
                break;
            case 2:
                sum += q ? atomic_load_explicit(&q->batches, memory_order_relaxed)
                    : (l->kind == MPIDU_CX_LOCK_DSM ?
                       atomic_load_explicit(&l->u.dsm.batches, memory_order_relaxed) : 0);
                break;
            case 3:
                sum += l->trylock_failures;
                break;
        }
    }
    return sum;
}

#define PVAR_GETTER(name_, which_) \
    static void name_(void *addr, void *obj, int count, void *buf) \
    { *(unsigned long long *) buf = pvar_sum(which_); }
PVAR_GETTER(get_enqueued, 0)
    PVAR_GETTER(get_combined, 1)
    PVAR_GETTER(get_batches, 2)
    PVAR_GETTER(get_trylock_failures, 3)
static void register_pvars(void)
{
    static int done;
    if (done)
        return;
    done = 1;
    MPIR_T_PVAR_REGISTER_impl(MPI_T_PVAR_CLASS_COUNTER, MPI_UNSIGNED_LONG_LONG,
                              "cx_ops_enqueued", NULL, 1, MPI_T_ENUM_NULL,
                              MPI_T_VERBOSITY_USER_BASIC, MPI_T_BIND_NO_OBJECT,
                              MPIR_T_PVAR_FLAG_READONLY | MPIR_T_PVAR_FLAG_CONTINUOUS,
                              get_enqueued, NULL, "CH4_CX",
                              "lockq: operations queued after a failed try-lock");
    MPIR_T_PVAR_REGISTER_impl(MPI_T_PVAR_CLASS_COUNTER, MPI_UNSIGNED_LONG_LONG,
                              "cx_ops_combined", NULL, 1, MPI_T_ENUM_NULL,
                              MPI_T_VERBOSITY_USER_BASIC, MPI_T_BIND_NO_OBJECT,
                              MPIR_T_PVAR_FLAG_READONLY | MPIR_T_PVAR_FLAG_CONTINUOUS,
                              get_combined, NULL, "CH4_CX",
                              "lockq/csync: operations run by a lock holder for another thread");
    MPIR_T_PVAR_REGISTER_impl(MPI_T_PVAR_CLASS_COUNTER, MPI_UNSIGNED_LONG_LONG,
                              "cx_combine_batches", NULL, 1, MPI_T_ENUM_NULL,
                              MPI_T_VERBOSITY_USER_BASIC, MPI_T_BIND_NO_OBJECT,
                              MPIR_T_PVAR_FLAG_READONLY | MPIR_T_PVAR_FLAG_CONTINUOUS,
                              get_batches, NULL, "CH4_CX",
                              "lockq/csync: combining rounds that ran at least one operation "
                              "(cx_ops_combined / cx_combine_batches = mean batch size)");
    MPIR_T_PVAR_REGISTER_impl(MPI_T_PVAR_CLASS_COUNTER, MPI_UNSIGNED_LONG_LONG,
                              "cx_trylock_failures", NULL, 1, MPI_T_ENUM_NULL,
                              MPI_T_VERBOSITY_USER_BASIC, MPI_T_BIND_NO_OBJECT,
                              MPIR_T_PVAR_FLAG_READONLY | MPIR_T_PVAR_FLAG_CONTINUOUS,
                              get_trylock_failures, NULL, "CH4_CX",
                              "VCI try-locks that failed (issue and progress)");
    MPIDI_CX_lockq_register_pvars();
    MPIDI_CX_reactivation_register_pvars();
    MPIDI_CX_offload_register_pvars();
    MPIDI_CX_nm_poll_register_pvars();
    MPIDI_CX_rank_yield_register_pvars();
}
