/*
 * MPICH-CX thread-safety models (see cx_mt.h): selection at MPI_Init, the
 * LockQ queue and its proxy requests, CSync combining, and their MPI_T pvars.
 */
#include "mpidimpl.h"
#include "cx_mt.h"
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
        poll for the others).

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

/* The values of MPIR_CVAR_CH4_MT_MODEL (and --enable-ch4-mt) that are ours.
 * The VCI lock: MPIR_CVAR_CH4_CX_VCI_LOCK if set; else the model's own lock
 * (`lock`, part of what the model is); else --with-ch4-vci-lock if given;
 * else the model's default (`dflt`). */
static const struct {
    const char *name;
    int model;
    int lock;                   /* the model's own lock, -1: none */
    int dflt;                   /* its lock when nothing else names one */
    int wait_kind;
} models[] = {
    {"direct", MPIDI_CX_MT_DIRECT, -1, MPIDU_CX_LOCK_MUTEX, MPIDI_CX_WAIT_POLL},
    /* LockQ issues under a try-lock: the futex mutex's is inline */
    {"lockq", MPIDI_CX_MT_LOCKQ, -1, MPIDU_CX_LOCK_FUTEX, MPIDI_CX_WAIT_AUTO},
    {"csync", MPIDI_CX_MT_CSYNC, MPIDU_CX_LOCK_DSM, MPIDU_CX_LOCK_DSM, MPIDI_CX_WAIT_POLL},
    {"hclhub-usc", MPIDI_CX_MT_DIRECT, MPIDU_CX_LOCK_HCLHUB, MPIDU_CX_LOCK_HCLHUB,
     MPIDI_CX_WAIT_USC},
    {"hclhub-ksc", MPIDI_CX_MT_DIRECT, MPIDU_CX_LOCK_HCLHUB, MPIDU_CX_LOCK_HCLHUB,
     MPIDI_CX_WAIT_KSC},
};

#define NUM_MODELS ((int) (sizeof(models) / sizeof(models[0])))
#define MODEL_LIST "direct, lockq, csync, hclhub-usc, hclhub-ksc, lockless"
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

/* The values of MPIR_CVAR_CH4_CX_WAIT, indexed by MPIDI_CX_WAIT_*. */
static const char *const wait_kinds[] = { "poll", "usc", "ksc", "auto" };

static int find_wait_kind(const char *name)
{
    for (int k = 0; k < (int) (sizeof(wait_kinds) / sizeof(wait_kinds[0])); k++)
        if (!strcasecmp(name, wait_kinds[k]))
            return k;
    return -1;
}

/* MPI_Get_library_version's line: the model and lock this run uses. */
int MPIDI_CX_mt_is_active(void)
{
    return 1;   /* a model is always in use; direct+mutex is MPICH's own */
}

const char *MPIDI_CX_mt_describe(void)
{
    static char buf[80];
    snprintf(buf, sizeof(buf), "model %s, VCI lock %s, wait %s", MPIDI_CX_global.model_name,
             MPIDU_CX_lock_name(MPIDI_CX_global.lock_kind),
             wait_kinds[MPIDI_CX_global.wait_kind]);
    return buf;
}

/* ---- selection --------------------------------------------------------- */

int MPIDI_CX_cvar_invalid(const char *cvar, const char *value, const char *valid)
{
    return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                MPI_ERR_OTHER, "**cx|cvar", "**cx|cvar %s %s %s",
                                value, cvar, valid);
}

int MPIDI_CX_cvar_invalid_int(const char *cvar, int value, const char *valid)
{
    char buf[32];
    snprintf(buf, sizeof(buf), "%d", value);
    return MPIDI_CX_cvar_invalid(cvar, buf, valid);
}

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
static int server_setting(const char *cvar, const char *v, bool * required, bool * on)
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

static int positive_cvar(const char *name, int value, unsigned *out)
{
    if (value < 1)
        return MPIDI_CX_cvar_invalid_int(name, value, "an integer of 1 or more");
    *out = (unsigned) value;
    return MPI_SUCCESS;
}

/* Reads the model and lock CVARs.  *consumed tells the caller (CH4's own
 * runtime selection) that the model name was one of ours. */
int MPIDI_CX_init(bool * consumed)
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

    mpi_errno = positive_cvar("MPIR_CVAR_CH4_CX_MAX_COMBINE", MPIR_CVAR_CH4_CX_MAX_COMBINE,
                              &MPIDI_CX_global.max_combine);
    if (mpi_errno)
        return mpi_errno;
    mpi_errno = positive_cvar("MPIR_CVAR_CH4_CX_TEST_MAX_FAILURES",
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

static void lockq_drain(MPIDU_cx_lock_t * lock);
static void lockq_apply(void *descr, void *ctx);
static void csync_apply(void *req, void *ctx);
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
        if (l->kind == MPIDU_CX_LOCK_DSM) {
            l->u.dsm.max_combine = MPIDI_CX_global.max_combine;
            l->u.dsm.apply = csync_apply;
            l->u.dsm.ctx = l;
        }
        if (MPIDI_CX_global.model == MPIDI_CX_MT_LOCKQ) {
            cx_lockq_t *q = MPL_aligned_alloc(CX_CACHELINE_SIZE,
                                              MPL_ROUND_UP_ALIGN(sizeof(*q), CX_CACHELINE_SIZE),
                                              MPL_MEM_THREAD);
            MPIR_ERR_CHKANDJUMP(!q, mpi_errno, MPI_ERR_OTHER, "**nomem");
            MPIR_ERR_CHKANDJUMP(cx_lockq_init(q, MPIDI_CX_global.max_combine),
                                mpi_errno, MPI_ERR_OTHER, "**nomem");
            l->queue = q;
            l->drain = lockq_drain;
            MPIDI_CX_global.queues[i] = q;
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

static void free_request_caches(void);

/* Before MPICH destroys the VCI mutexes and request pools. */
void MPIDI_CX_finalize(void)
{
    MPIDI_CX_reactivation_finalize();
    free_request_caches();
    for (int i = 0; i < MPIDI_CH4_MAX_VCIS; i++) {
        MPIDU_cx_lock_t *l = MPIDI_CX_global.locks[i];
        if (!l)
            continue;
        MPIR_Assert(MPIDI_CX_global.issued[i] == NULL);
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

/* ---- the debug knob ------------------------------------------------------ */

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

/* ---- proxy requests ------------------------------------------------------ */

/* A queued operation must hand the user a request at once, but taking one
 * from the VCI's pool needs the VCI lock the issuer just failed to get.  So
 * each thread keeps a few requests per VCI, refilled while it holds the lock
 * (paper §2.2 also uses a per-thread request cache). */
#define REQ_CACHE_SIZE 32

typedef struct req_cache {
    struct req_cache *next_cache;
    int vci;
    int n;
    MPIR_Request *reqs[REQ_CACHE_SIZE];
} req_cache_t;

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

/* Under the VCI lock. */
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
    return c;
}

static void free_request_caches(void)
{
    pthread_mutex_lock(&all_caches_mutex);
    while (all_caches) {
        req_cache_t *c = all_caches;
        all_caches = c->next_cache;
        while (c->n > 0)
            MPIR_Request_free_unsafe(c->reqs[--c->n]);
        MPL_free(c);
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
    return r;
}

/* ---- LockQ --------------------------------------------------------------- */

static int issue_direct(MPIDI_CX_descr_t * d, MPIR_Request ** req)
{
    switch (d->op) {
        case MPIDI_CX_OP_ISEND:
            return MPIDI_isend_direct(d->send_buf, d->count, d->datatype, d->rank, d->tag,
                                      d->comm, d->context_offset, d->av, req);
        case MPIDI_CX_OP_ISSEND:
            return MPIDI_issend_direct(d->send_buf, d->count, d->datatype, d->rank, d->tag,
                                       d->comm, d->context_offset, d->av, req);
        case MPIDI_CX_OP_IRECV:
            return MPIDI_irecv_direct(d->recv_buf, d->count, d->datatype, d->rank, d->tag,
                                      d->comm, d->context_offset, d->av, req);
    }
    MPIDI_CX_rma_args_t *a = &d->rma;
    switch (d->op) {
        case MPIDI_CX_OP_PUT:
            return MPIDI_put_direct(a->origin_addr, a->origin_count, a->origin_datatype,
                                    a->target_rank, a->target_disp, a->target_count,
                                    a->target_datatype, a->win);
        case MPIDI_CX_OP_GET:
            return MPIDI_get_direct(a->result_addr, a->origin_count, a->origin_datatype,
                                    a->target_rank, a->target_disp, a->target_count,
                                    a->target_datatype, a->win);
        case MPIDI_CX_OP_ACC:
            return MPIDI_accumulate_direct(a->origin_addr, a->origin_count, a->origin_datatype,
                                           a->target_rank, a->target_disp, a->target_count,
                                           a->target_datatype, a->op, a->win);
        case MPIDI_CX_OP_GET_ACC:
            return MPIDI_get_accumulate_direct(a->origin_addr, a->origin_count,
                                               a->origin_datatype, a->result_addr,
                                               a->result_count, a->result_datatype,
                                               a->target_rank, a->target_disp, a->target_count,
                                               a->target_datatype, a->op, a->win);
        case MPIDI_CX_OP_FETCH_OP:
            return MPIDI_fetch_and_op_direct(a->origin_addr, a->result_addr, a->origin_datatype,
                                             a->target_rank, a->target_disp, a->op, a->win);
        case MPIDI_CX_OP_CAS:
            return MPIDI_compare_and_swap_direct(a->origin_addr, a->compare_addr,
                                                 a->result_addr, a->origin_datatype,
                                                 a->target_rank, a->target_disp, a->win);
        case MPIDI_CX_OP_RPUT:
            return MPIDI_rput_direct(a->origin_addr, a->origin_count, a->origin_datatype,
                                     a->target_rank, a->target_disp, a->target_count,
                                     a->target_datatype, a->win, req);
        case MPIDI_CX_OP_RGET:
            return MPIDI_rget_direct(a->result_addr, a->origin_count, a->origin_datatype,
                                     a->target_rank, a->target_disp, a->target_count,
                                     a->target_datatype, a->win, req);
        case MPIDI_CX_OP_RACC:
            return MPIDI_raccumulate_direct(a->origin_addr, a->origin_count, a->origin_datatype,
                                            a->target_rank, a->target_disp, a->target_count,
                                            a->target_datatype, a->op, a->win, req);
        case MPIDI_CX_OP_RGET_ACC:
            return MPIDI_rget_accumulate_direct(a->origin_addr, a->origin_count,
                                                a->origin_datatype, a->result_addr,
                                                a->result_count, a->result_datatype,
                                                a->target_rank, a->target_disp,
                                                a->target_count, a->target_datatype, a->op,
                                                a->win, req);
    }
    MPIR_Assert(0);
    return MPI_ERR_INTERN;
}

static bool is_pt2pt(const MPIDI_CX_descr_t * d)
{
    return d->op <= MPIDI_CX_OP_IRECV;
}

/* What a queued operation keeps alive until it ran: its datatypes and its
 * communicator (the user may free them right after the call returns). */
static void add_refs(MPIDI_CX_descr_t * d)
{
    if (is_pt2pt(d)) {
        MPIR_Datatype_add_ref_if_not_builtin(d->datatype);
        MPIR_Comm_add_ref(d->comm);
        return;
    }
    MPIDI_CX_rma_args_t *a = &d->rma;
    /* unused datatype fields are 0 in the descriptor */
    if (!a->origin_datatype)
        a->origin_datatype = MPI_DATATYPE_NULL;
    if (!a->target_datatype)
        a->target_datatype = MPI_DATATYPE_NULL;
    if (!a->result_datatype)
        a->result_datatype = MPI_DATATYPE_NULL;
    MPIR_Datatype_add_ref_if_not_builtin(a->origin_datatype);
    MPIR_Datatype_add_ref_if_not_builtin(a->target_datatype);
    MPIR_Datatype_add_ref_if_not_builtin(a->result_datatype);
}

static void release_refs(MPIDI_CX_descr_t * d)
{
    if (is_pt2pt(d)) {
        MPIR_Datatype_release_if_not_builtin(d->datatype);
        MPIR_Comm_release(d->comm);
        return;
    }
    MPIR_Datatype_release_if_not_builtin(d->rma.origin_datatype);
    MPIR_Datatype_release_if_not_builtin(d->rma.target_datatype);
    MPIR_Datatype_release_if_not_builtin(d->rma.result_datatype);
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

/* Queue an operation: the issuer failed the try-lock (locked = false), or
 * holds the lock but found work left in the queue (locked = true).  The user
 * gets a proxy request at once; the datatype and communicator are referenced
 * so the user may free them at once. */
int MPIDI_CX_lockq_post(MPIDI_CX_descr_t * dd, MPIR_Request ** req, bool locked)
{
    int mpi_errno = MPI_SUCCESS;
    int vci = dd->vci;
    req_cache_t *c = thread_cache(vci);

    if (unlikely(is_pt2pt(dd) && (!c || c->n == 0))) {
        /* no proxy at hand: take the lock (once per REQ_CACHE_SIZE queued
         * operations), refill, and issue directly behind the whole queue */
        if (!locked)
            MPIDU_CX_cs_enter(&MPIDI_VCI(vci).lock);
        refill_request_cache(vci);
        MPIDI_CX_drain_all(vci);
        mpi_errno = issue_direct(dd, req);
        if (!locked)
            MPIDU_CX_cs_exit(&MPIDI_VCI(vci).lock);
        return mpi_errno;
    }

    MPIDI_CX_descr_t *d = MPL_malloc(sizeof(*d), MPL_MEM_OTHER);
    MPIR_ERR_CHKANDJUMP(!d, mpi_errno, MPI_ERR_OTHER, "**nomem");
    *d = *dd;
    d->real = NULL;
    d->cancelled = 0;
    d->next_issued = NULL;
    if (is_pt2pt(d)) {
        d->proxy = take_cached_request(c, d->op == MPIDI_CX_OP_IRECV ? MPIR_REQUEST_KIND__RECV
                                       : MPIR_REQUEST_KIND__SEND);
        d->proxy->dev.cx_descr = d;
        *req = d->proxy;
    } else {
        d->proxy = NULL;        /* completed by the window's synchronization */
    }
    add_refs(d);
    int err = d->proxy ? cx_lockq_post(MPIDI_CX_global.queues[vci], d)
        : cx_lockq_group_post(MPIDI_CX_global.queues[vci], &MPIDIG_WIN(d->rma.win, cx_queued), d);
    if (err) {
        release_refs(d);
        MPL_free(d);
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
    MPL_free(d);
    MPID_Request_complete(proxy);
}

/* Under the VCI lock: run one queued operation. */
static void lockq_apply(void *descr, void *ctx)
{
    MPIDI_CX_descr_t *d = descr;
    int vci = d->vci;

    if (!d->proxy) {
        /* one-sided: no request to carry an error; the window's next
         * synchronization call returns it (MPIDI_CX_win_drain) */
        MPIR_Win *win = d->rma.win;
        cx_lockq_group_ran(&MPIDIG_WIN(win, cx_queued), issue_direct(d, NULL));
        release_refs(d);
        MPL_free(d);
        return;
    }
    if (d->cancelled) {
        MPIR_STATUS_SET_CANCEL_BIT(d->proxy->status, TRUE);
        MPIR_STATUS_SET_COUNT(d->proxy->status, 0);
    } else {
        int err = issue_direct(d, &d->real);
        if (err != MPI_SUCCESS) {
            d->proxy->status.MPI_ERROR = err;
        } else if (!MPIR_Request_is_complete(d->real)) {
            d->next_issued = MPIDI_CX_global.issued[vci];
            MPIDI_CX_global.issued[vci] = d;
            d = NULL;   /* completes later, in MPIDI_CX_resolve_issued */
        } else {
            copy_status(d->proxy, d->real);
            MPIR_Request_free_unsafe(d->real);
        }
    }
    release_refs(descr);
    if (d)
        complete_proxy(d);
}

static void lockq_drain(MPIDU_cx_lock_t * lock)
{
    bool limit;
    cx_lockq_combine(lock->queue, lockq_apply, NULL, &limit);
    /* over MAX_COMBINE: the rest waits for the next holder (every
     * completion call takes the lock, so it is not stranded) */
}

/* Under the VCI lock: complete proxies whose real request completed. */
void MPIDI_CX_resolve_issued(int vci)
{
    MPIDI_CX_descr_t **pp = &MPIDI_CX_global.issued[vci];
    while (*pp) {
        MPIDI_CX_descr_t *d = *pp;
        if (MPIR_Request_is_complete(d->real)) {
            *pp = d->next_issued;
            copy_status(d->proxy, d->real);
            MPIR_Request_free_unsafe(d->real);
            complete_proxy(d);
        } else {
            pp = &d->next_issued;
        }
    }
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
        if (d->real->kind == MPIR_REQUEST_KIND__RECV)
            mpi_errno = MPID_Cancel_recv(d->real);
        else
            mpi_errno = MPID_Cancel_send(d->real);
        MPIDI_CX_resolve_issued(vci);
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
 * whenever threads outnumber cores (2 threads per rank on 2 cores ran at
 * 0.15-0.4x MPICH's message rate that way, README). */
#define TEST_MAX_DELAY 1024    /* MPI_Test calls skipped between try-locks, at most */

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

/* ---- CSync ----------------------------------------------------------------- */

/* Run by whichever thread combines, under the DSM lock. */
static void csync_apply(void *req, void *ctx)
{
    MPIDU_cx_lock_t *l = ctx;
    MPIDI_CX_descr_t *d = req;
    MPIDI_CX_csync_hold(l->index);
    d->mpi_errno = issue_direct(d, d->reqp);
    MPIDI_CX_csync_unhold(l->index);
}

/* ---- the issue paths of LockQ and CSync --------------------------------- */

/* Out of line, so that MPICH's direct path stays as inlined as in MPICH.
 * Each has one call of the transport's issue function, so that it stays
 * inlined here too. */

/* CSync: a thread that finds the combining queue empty heads it, holds the
 * lock at once and issues inline, building no descriptor (one thread always
 * does); otherwise it announces a descriptor and waits until it ran. */
#define MPIDI_CX_CSYNC_ENTER(vci_, t_, descr_, req_)                    \
    do {                                                                \
        t_ = MPIDI_CX_csync_fast_enter(vci_);                           \
        if (!t_) {                                                      \
            MPIDI_CX_descr_t d_ = descr_;                               \
            d_.reqp = (req_);                                           \
            MPIDU_cx_lock_t *l_ = MPIDI_CX_global.locks[vci_];          \
            cx_dsm_synch(&l_->u.dsm, MPIDU_CX_dsm_thread(l_), &d_);     \
            return d_.mpi_errno;                                        \
        }                                                               \
    } while (0)

/* Issue while holding the VCI (LockQ) or heading its queue (CSync, t_ set),
 * then let go. */
#define MPIDI_CX_ISSUE_HELD(vci_, t_, direct_call_)                     \
    do {                                                                \
        int err_ = direct_call_;                                        \
        if (t_)                                                         \
            MPIDI_CX_csync_fast_exit(vci_, t_);                         \
        else                                                            \
            MPIDU_CX_cs_exit(&MPIDI_VCI(vci_).lock);                    \
        return err_;                                                    \
    } while (0)

/* LockQ: issue under the try-lock, or hand the operation to the holder; a
 * holder that left work in the queue (MAX_COMBINE reached, or a producer
 * not yet linked) queues its own operation behind it, to keep the order. */
#define MPIDI_CX_ISSUE(vci_, direct_call_, descr_, req_)                \
    do {                                                                \
        cx_dsm_thread_t *t_ = NULL;                                     \
        if (MPIDI_CX_MT == MPIDI_CX_MT_LOCKQ) {                         \
            if (!MPIDI_CX_issue_tryenter(vci_)) {                       \
                MPIDI_CX_descr_t d_ = descr_;                           \
                return MPIDI_CX_lockq_post(&d_, req_, false);           \
            }                                                           \
            if (unlikely(cx_lockq_pending(MPIDI_CX_global.queues[vci_]))) { \
                MPIDI_CX_descr_t d_ = descr_;                           \
                int err_ = MPIDI_CX_lockq_post(&d_, req_, true);        \
                MPIDU_CX_cs_exit(&MPIDI_VCI(vci_).lock);                \
                return err_;                                            \
            }                                                           \
        } else {                                                        \
            MPIDI_CX_CSYNC_ENTER(vci_, t_, descr_, req_);               \
        }                                                               \
        MPIDI_CX_ISSUE_HELD(vci_, t_, direct_call_);                    \
    } while (0)

/* Fills a descriptor; only built when the operation leaves this thread. */
#define MPIDI_CX_DESCR(op_, vci_, sbuf_, rbuf_, count_, dt_, rank_, tag_, comm_, ctx_, av_) \
    ((MPIDI_CX_descr_t) { .op = (op_), .vci = (vci_), .send_buf = (sbuf_), .recv_buf = (rbuf_), \
                          .count = (count_), .datatype = (dt_), .rank = (rank_), .tag = (tag_), \
                          .comm = (comm_), .context_offset = (ctx_), .av = (av_) })

#define MPIDI_CX_RMA_DESCR(op_, vci_, ...) \
    ((MPIDI_CX_descr_t) { .op = (op_), .vci = (vci_), .rma = { __VA_ARGS__ } })

/* LockQ for operations with a request: blocking entry, the queue run to
 * its end (they cannot be queued themselves), then issue. */
#define MPIDI_CX_ISSUE_LOCKED(vci_, direct_call_, descr_, req_)          \
    do {                                                                \
        cx_dsm_thread_t *t_ = NULL;                                     \
        if (MPIDI_CX_MT == MPIDI_CX_MT_LOCKQ) {                         \
            MPIDU_CX_cs_enter(&MPIDI_VCI(vci_).lock);                   \
            MPIDI_CX_drain_all(vci_);                                   \
        } else {                                                        \
            MPIDI_CX_CSYNC_ENTER(vci_, t_, descr_, req_);               \
        }                                                               \
        MPIDI_CX_ISSUE_HELD(vci_, t_, direct_call_);                    \
    } while (0)

int MPIDI_CX_isend(const void *buf, MPI_Aint count, MPI_Datatype datatype,
                   int rank, int tag, MPIR_Comm * comm, int context_offset,
                   MPIDI_av_entry_t * av, MPIR_Request ** req)
{
    int vci = MPIDI_CX_send_vci(comm, rank, tag);
    MPIDI_CX_ISSUE(vci,
                   MPIDI_isend_direct(buf, count, datatype, rank, tag, comm, context_offset, av,
                                      req),
                   MPIDI_CX_DESCR(MPIDI_CX_OP_ISEND, vci, buf, NULL, count, datatype, rank, tag,
                                  comm, context_offset, av), req);
}

int MPIDI_CX_issend(const void *buf, MPI_Aint count, MPI_Datatype datatype,
                    int rank, int tag, MPIR_Comm * comm, int context_offset,
                    MPIDI_av_entry_t * av, MPIR_Request ** req)
{
    int vci = MPIDI_CX_send_vci(comm, rank, tag);
    MPIDI_CX_ISSUE(vci,
                   MPIDI_issend_direct(buf, count, datatype, rank, tag, comm, context_offset, av,
                                       req),
                   MPIDI_CX_DESCR(MPIDI_CX_OP_ISSEND, vci, buf, NULL, count, datatype, rank, tag,
                                  comm, context_offset, av), req);
}

int MPIDI_CX_irecv(void *buf, MPI_Aint count, MPI_Datatype datatype,
                   int rank, int tag, MPIR_Comm * comm, int context_offset,
                   MPIDI_av_entry_t * av, MPIR_Request ** req)
{
    int vci = MPIDI_CX_recv_vci(comm, rank, tag);
    MPIDI_CX_ISSUE(vci,
                   MPIDI_irecv_direct(buf, count, datatype, rank, tag, comm, context_offset, av,
                                      req),
                   MPIDI_CX_DESCR(MPIDI_CX_OP_IRECV, vci, NULL, buf, count, datatype, rank, tag,
                                  comm, context_offset, av), req);
}

int MPIDI_CX_put(const void *origin_addr, int origin_count,
                 MPI_Datatype origin_datatype, int target_rank,
                 MPI_Aint target_disp, int target_count,
                 MPI_Datatype target_datatype, MPIR_Win * win)
{
#define ARGS_ origin_addr, origin_count, origin_datatype, target_rank, target_disp, \
        target_count, target_datatype, win
    int vci = MPIDI_CX_win_vci(win);
    MPIDI_CX_ISSUE(vci, MPIDI_put_direct(ARGS_),
                   MPIDI_CX_RMA_DESCR(MPIDI_CX_OP_PUT, vci,.origin_addr = origin_addr,
                                      .origin_count = origin_count,
                                      .origin_datatype = origin_datatype,
                                      .target_rank = target_rank,.target_disp = target_disp,
                                      .target_count = target_count,
                                      .target_datatype = target_datatype,.win = win), NULL);
#undef ARGS_
}

int MPIDI_CX_get(void *origin_addr, int origin_count,
                 MPI_Datatype origin_datatype, int target_rank,
                 MPI_Aint target_disp, int target_count,
                 MPI_Datatype target_datatype, MPIR_Win * win)
{
#define ARGS_ origin_addr, origin_count, origin_datatype, target_rank, target_disp, \
        target_count, target_datatype, win
    int vci = MPIDI_CX_win_vci(win);
    MPIDI_CX_ISSUE(vci, MPIDI_get_direct(ARGS_),
                   MPIDI_CX_RMA_DESCR(MPIDI_CX_OP_GET, vci,.result_addr = origin_addr,
                                      .origin_count = origin_count,
                                      .origin_datatype = origin_datatype,
                                      .target_rank = target_rank,.target_disp = target_disp,
                                      .target_count = target_count,
                                      .target_datatype = target_datatype,.win = win), NULL);
#undef ARGS_
}

int MPIDI_CX_accumulate(const void *origin_addr, int origin_count,
                        MPI_Datatype origin_datatype, int target_rank,
                        MPI_Aint target_disp, int target_count,
                        MPI_Datatype target_datatype, MPI_Op op,
                        MPIR_Win * win)
{
#define ARGS_ origin_addr, origin_count, origin_datatype, target_rank, target_disp, \
        target_count, target_datatype, op, win
    int vci = MPIDI_CX_win_vci(win);
    MPIDI_CX_ISSUE(vci, MPIDI_accumulate_direct(ARGS_),
                   MPIDI_CX_RMA_DESCR(MPIDI_CX_OP_ACC, vci,.origin_addr = origin_addr,
                                      .origin_count = origin_count,
                                      .origin_datatype = origin_datatype,
                                      .target_rank = target_rank,.target_disp = target_disp,
                                      .target_count = target_count,
                                      .target_datatype = target_datatype,.op = op,.win = win),
                   NULL);
#undef ARGS_
}

int MPIDI_CX_get_accumulate(const void *origin_addr, int origin_count,
                            MPI_Datatype origin_datatype, void *result_addr,
                            int result_count, MPI_Datatype result_datatype,
                            int target_rank, MPI_Aint target_disp,
                            int target_count, MPI_Datatype target_datatype,
                            MPI_Op op, MPIR_Win * win)
{
#define ARGS_ origin_addr, origin_count, origin_datatype, result_addr, result_count, \
        result_datatype, target_rank, target_disp, target_count, target_datatype, op, win
    int vci = MPIDI_CX_win_vci(win);
    MPIDI_CX_ISSUE(vci, MPIDI_get_accumulate_direct(ARGS_),
                   MPIDI_CX_RMA_DESCR(MPIDI_CX_OP_GET_ACC, vci,.origin_addr = origin_addr,
                                      .origin_count = origin_count,
                                      .origin_datatype = origin_datatype,
                                      .result_addr = result_addr,.result_count = result_count,
                                      .result_datatype = result_datatype,
                                      .target_rank = target_rank,.target_disp = target_disp,
                                      .target_count = target_count,
                                      .target_datatype = target_datatype,.op = op,.win = win),
                   NULL);
#undef ARGS_
}

int MPIDI_CX_fetch_and_op(const void *origin_addr, void *result_addr,
                          MPI_Datatype datatype, int target_rank,
                          MPI_Aint target_disp, MPI_Op op, MPIR_Win * win)
{
#define ARGS_ origin_addr, result_addr, datatype, target_rank, target_disp, op, win
    int vci = MPIDI_CX_win_vci(win);
    MPIDI_CX_ISSUE(vci, MPIDI_fetch_and_op_direct(ARGS_),
                   MPIDI_CX_RMA_DESCR(MPIDI_CX_OP_FETCH_OP, vci,.origin_addr = origin_addr,
                                      .result_addr = result_addr,.origin_datatype = datatype,
                                      .target_rank = target_rank,.target_disp = target_disp,
                                      .op = op,.win = win), NULL);
#undef ARGS_
}

int MPIDI_CX_compare_and_swap(const void *origin_addr,
                              const void *compare_addr, void *result_addr,
                              MPI_Datatype datatype, int target_rank,
                              MPI_Aint target_disp, MPIR_Win * win)
{
#define ARGS_ origin_addr, compare_addr, result_addr, datatype, target_rank, target_disp, win
    int vci = MPIDI_CX_win_vci(win);
    MPIDI_CX_ISSUE(vci, MPIDI_compare_and_swap_direct(ARGS_),
                   MPIDI_CX_RMA_DESCR(MPIDI_CX_OP_CAS, vci,.origin_addr = origin_addr,
                                      .compare_addr = compare_addr,.result_addr = result_addr,
                                      .origin_datatype = datatype,.target_rank = target_rank,
                                      .target_disp = target_disp,.win = win), NULL);
#undef ARGS_
}

int MPIDI_CX_rput(const void *origin_addr, int origin_count,
                  MPI_Datatype origin_datatype, int target_rank,
                  MPI_Aint target_disp, int target_count,
                  MPI_Datatype target_datatype, MPIR_Win * win,
                  MPIR_Request ** request)
{
#define ARGS_ origin_addr, origin_count, origin_datatype, target_rank, target_disp, \
        target_count, target_datatype, win, request
    int vci = MPIDI_CX_win_vci(win);
    MPIDI_CX_ISSUE_LOCKED(vci, MPIDI_rput_direct(ARGS_),
                          MPIDI_CX_RMA_DESCR(MPIDI_CX_OP_RPUT, vci,.origin_addr = origin_addr,
                                             .origin_count = origin_count,
                                             .origin_datatype = origin_datatype,
                                             .target_rank = target_rank,
                                             .target_disp = target_disp,
                                             .target_count = target_count,
                                             .target_datatype = target_datatype,.win = win),
                          request);
#undef ARGS_
}

int MPIDI_CX_rget(void *origin_addr, int origin_count,
                  MPI_Datatype origin_datatype, int target_rank,
                  MPI_Aint target_disp, int target_count,
                  MPI_Datatype target_datatype, MPIR_Win * win,
                  MPIR_Request ** request)
{
#define ARGS_ origin_addr, origin_count, origin_datatype, target_rank, target_disp, \
        target_count, target_datatype, win, request
    int vci = MPIDI_CX_win_vci(win);
    MPIDI_CX_ISSUE_LOCKED(vci, MPIDI_rget_direct(ARGS_),
                          MPIDI_CX_RMA_DESCR(MPIDI_CX_OP_RGET, vci,.result_addr = origin_addr,
                                             .origin_count = origin_count,
                                             .origin_datatype = origin_datatype,
                                             .target_rank = target_rank,
                                             .target_disp = target_disp,
                                             .target_count = target_count,
                                             .target_datatype = target_datatype,.win = win),
                          request);
#undef ARGS_
}

int MPIDI_CX_raccumulate(const void *origin_addr, int origin_count,
                         MPI_Datatype origin_datatype, int target_rank,
                         MPI_Aint target_disp, int target_count,
                         MPI_Datatype target_datatype, MPI_Op op,
                         MPIR_Win * win, MPIR_Request ** request)
{
#define ARGS_ origin_addr, origin_count, origin_datatype, target_rank, target_disp, \
        target_count, target_datatype, op, win, request
    int vci = MPIDI_CX_win_vci(win);
    MPIDI_CX_ISSUE_LOCKED(vci, MPIDI_raccumulate_direct(ARGS_),
                          MPIDI_CX_RMA_DESCR(MPIDI_CX_OP_RACC, vci,.origin_addr = origin_addr,
                                             .origin_count = origin_count,
                                             .origin_datatype = origin_datatype,
                                             .target_rank = target_rank,
                                             .target_disp = target_disp,
                                             .target_count = target_count,
                                             .target_datatype = target_datatype,.op = op,
                                             .win = win), request);
#undef ARGS_
}

int MPIDI_CX_rget_accumulate(const void *origin_addr, int origin_count,
                             MPI_Datatype origin_datatype,
                             void *result_addr, int result_count,
                             MPI_Datatype result_datatype, int target_rank,
                             MPI_Aint target_disp, int target_count,
                             MPI_Datatype target_datatype, MPI_Op op,
                             MPIR_Win * win, MPIR_Request ** request)
{
#define ARGS_ origin_addr, origin_count, origin_datatype, result_addr, result_count, \
        result_datatype, target_rank, target_disp, target_count, target_datatype, op, win, request
    int vci = MPIDI_CX_win_vci(win);
    MPIDI_CX_ISSUE_LOCKED(vci, MPIDI_rget_accumulate_direct(ARGS_),
                          MPIDI_CX_RMA_DESCR(MPIDI_CX_OP_RGET_ACC, vci,
                                             .origin_addr = origin_addr,
                                             .origin_count = origin_count,
                                             .origin_datatype = origin_datatype,
                                             .result_addr = result_addr,
                                             .result_count = result_count,
                                             .result_datatype = result_datatype,
                                             .target_rank = target_rank,
                                             .target_disp = target_disp,
                                             .target_count = target_count,
                                             .target_datatype = target_datatype,.op = op,
                                             .win = win), request);
#undef ARGS_
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
    MPIDI_CX_reactivation_register_pvars();
    MPIDI_CX_nm_poll_register_pvars();
    MPIDI_CX_rank_yield_register_pvars();
}
