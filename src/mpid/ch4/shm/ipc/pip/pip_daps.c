/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * MPICH-CX Daps: ranks idle in blocking MPI calls run the progress of local
 * PiP peers that compute. Each rank publishes a progress descriptor
 * (pip_daps.h) in PiP's init exchange; a worker calls the victim's own
 * progress function, i.e. the victim's copy of libmpi on the victim's data.
 * Design and the thread-local state audit: doc/user/daps.md.
 */

#include "mpidimpl.h"
#include "cx_cvar.h"
#include "pip_post.h"
#include "pip_daps.h"
#include "mpichcx_pip.h"
#include <sys/syscall.h>
#include <linux/membarrier.h>
#include <locale.h>
#include <time.h>

/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

categories :
    - name : CH4_CX_DAPS
      description : MPICH-CX Daps, progress stealing between PiP tasks

cvars:
    - name        : MPIR_CVAR_CH4_CX_DAPS
      category    : CH4_CX_DAPS
      type        : string
      default     : "off"
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        Under mpiexec -pip: on lets a rank idle in a blocking MPI call run the
        network and shared-memory progress of a local rank that computes
        outside MPI with operations pending; off: each rank progresses only
        its own operations. Refused at MPI_Init, naming the reason, where it
        cannot be done safely (a netmod or libfabric provider whose progress
        was not audited for calls from another rank's thread).

    - name        : MPIR_CVAR_CH4_CX_DAPS_AWAY_US
      category    : CH4_CX_DAPS
      type        : int
      default     : 50
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        Daps: how long, in microseconds, a local rank must stay outside MPI
        with operations pending before an idle rank runs its progress (0 to
        1000000). A rank between the calls of a communication loop is not
        computing, and running its progress there only makes it wait at its
        next call. 0: at once.

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

bool MPIDI_PIP_daps_on;         /* this rank steals (idle hook) */
bool MPIDI_PIP_daps_track_on;   /* this rank counts what it posts */
size_t MPIDI_PIP_daps_track_bytes = SIZE_MAX;

static MPIDI_PIPI_daps_rank_t my_daps;
/* MPI threads: this rank's threads change its availability counters at once */
static bool avail_locked;
static struct {
    int requested;              /* the CVAR said on */
    const char *off_reason;     /* why not, for the extensions line */
    MPIDI_PIPI_daps_worker_t world;     /* template of every thread's worker */
    /* pvars: as a worker; as a victim (counted by the workers, in this
     * rank's own progress function) */
    unsigned long long steps, net_steps, shm_steps, ns, served, errors;
} daps;
static _Thread_local MPIDI_PIPI_daps_worker_t thread_worker;

static void register_pvars(void);

static void membarrier_fence(void)
{
    syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
}

int MPIDI_PIP_daps_init_local(void)
{
    register_pvars();
    daps.requested = -1;
    if (!strcmp(MPIR_CVAR_CH4_CX_DAPS, "on"))
        daps.requested = 1;
    else if (!strcmp(MPIR_CVAR_CH4_CX_DAPS, "off"))
        daps.requested = 0;
    if (daps.requested < 0)
        return MPIDI_CX_cvar_invalid("MPIR_CVAR_CH4_CX_DAPS", MPIR_CVAR_CH4_CX_DAPS, "on or off");
    if (MPIR_CVAR_CH4_CX_DAPS_AWAY_US < 0 || MPIR_CVAR_CH4_CX_DAPS_AWAY_US > 1000000)
        return MPIDI_CX_cvar_invalid_int("MPIR_CVAR_CH4_CX_DAPS_AWAY_US",
                                         MPIR_CVAR_CH4_CX_DAPS_AWAY_US, "0 to 1000000");
#ifndef MPIDI_CX_DAPS
    if (daps.requested && getenv("MPIR_CVAR_CH4_CX_DAPS"))
        return MPIDI_CX_cvar_invalid("MPIR_CVAR_CH4_CX_DAPS", MPIR_CVAR_CH4_CX_DAPS,
                                     "off (this MPICH-CX was configured with --disable-cx-daps)");
    daps.requested = 0;
#endif
    return MPI_SUCCESS;
}

/* The netmod's progress may run on another rank's thread only where its
 * libraries keep no thread-local state on that path and use nothing private
 * to the calling thread (doc/user/daps.md, "Thread-local state"). */
static const char *unaudited_netmod(void)
{
#ifdef HAVE_CH4_NETMOD_UCX
    return "the ucx netmod (libucs keeps thread-local state)";
#elif defined(HAVE_CH4_NETMOD_OFI)
    static char why[160];
    static const char *const audited[] = { "tcp", "ofi_rxm", "sockets", "udp", "ofi_rxd", "shm",
        "psm2"
    };
    const char *prov = MPIDI_OFI_global.prov_use[0] ?
        MPIDI_OFI_global.prov_use[0]->fabric_attr->prov_name : NULL;
    if (!prov)
        return NULL;
    /* a layered provider, "tcp;ofi_rxm": every layer must be audited */
    for (const char *p = prov; *p;) {
        size_t len = strcspn(p, ";");
        bool ok = false;
        for (size_t i = 0; i < sizeof(audited) / sizeof(audited[0]); i++)
            ok |= strlen(audited[i]) == len && !strncmp(p, audited[i], len);
        if (!ok) {
            snprintf(why, sizeof(why), "libfabric provider %s (not audited for Daps)", prov);
            return why;
        }
        p += len + (p[len] == ';');
    }
    return NULL;
#else
    return NULL;
#endif
}

/* Steal steps run the victim's progress: the network step (with the
 * progress hooks, which move nonblocking collectives), and the shared-memory
 * step only if that found nothing (paper §3.4.3). Progress shows in the VCIs'
 * progress counters. Runs on the worker's thread, in this rank's namespace. */
static int progress_count_sum(void)
{
    int sum = 0;
    for (int vci = 0; vci < MPIDI_global.n_vcis; vci++)
        sum += MPL_atomic_relaxed_load_int(&MPIDI_VCI(vci).progress_count);
    return sum;
}

/* This rank's libc on the worker's thread: the thread was started by the
 * worker's own libc, whose start-up set only that libc's per-thread ctype
 * tables; ours are NULL for it, and the first tolower() in our libfabric
 * (strcasestr) faulted. uselocale sets them; once per thread. */
static _Thread_local bool ctype_ready;

/* A stolen step's progress returned an error. There is no call of the
 * owner to return it from, so the worker reports it on standard error, and
 * nobody steals from this rank any more (its own calls meet what remains of
 * the failure). Counted: cx_daps_errors. */
static int stolen_step_failed(int mpi_errno)
{
    char msg[MPI_MAX_ERROR_STRING];
    MPIR_Err_get_string(mpi_errno, msg, sizeof(msg), NULL);
    __atomic_store_n(&my_daps.enabled, 0, __ATOMIC_SEQ_CST);
    if (__atomic_fetch_add(&daps.errors, 1, __ATOMIC_RELAXED) == 0)
        fprintf(stderr, "MPICH-CX Daps: rank %d's progress, run by an idle local rank, failed; "
                "its progress is no longer stolen: %s\n", MPIR_Process.rank, msg);
    return 0;
}

static int daps_progress(bool net, bool shm)
{
    MPID_Progress_state st;
    int r = 0, before = progress_count_sum();

    if (unlikely(!ctype_ready)) {
        uselocale(LC_GLOBAL_LOCALE);
        ctype_ready = true;
    }

    __atomic_fetch_add(&daps.served, 1, __ATOMIC_RELAXED);
    if (net) {
        MPIDI_progress_state_init(&st);
        st.flag = MPIDI_PROGRESS_NM | MPIDI_PROGRESS_HOOKS;
        int err = MPIDI_progress_test(&st, 0);
        if (unlikely(err != MPI_SUCCESS))
            return stolen_step_failed(err);
        if (progress_count_sum() != before)
            r |= MPIDI_PIPI_DAPS_NET;
    }
#ifndef MPIDI_CH4_DIRECT_NETMOD
    if (!r && shm) {
        MPIDI_progress_state_init(&st);
        st.flag = MPIDI_PROGRESS_SHM;
        int err = MPIDI_progress_test(&st, 0);
        if (unlikely(err != MPI_SUCCESS))
            return stolen_step_failed(err);
        if (progress_count_sum() != before)
            r |= MPIDI_PIPI_DAPS_SHM;
    }
#endif
    return r;
}

/* Before PiP's init exchange: what the peers will read (the NUMA node only
 * for PiP tasks that may take part). */
uintptr_t MPIDI_PIP_daps_prepare(void)
{
    memset(&my_daps, 0, sizeof(my_daps));
    my_daps.progress = daps_progress;
    my_daps.guard = &MPIR_CX_daps_guard;
    if (daps.requested && MPIR_CVAR_CH4_CX_PIP_ENABLE && MPIR_CX_pip_shares_process())
        my_daps.numa = MPIDI_PIP_numa_node_self();
    return (uintptr_t) & my_daps;
}

/* The end of MPI_Init (MPIR_CX_daps_start): peers may run our progress from
 * now on, and we theirs. The guard keeps workers out while any thread of
 * ours is inside MPI; with MPI threads it counts per thread. */
static void daps_start(void)
{
    MPIR_CX_daps_start = NULL;  /* once: a second MPI_Session_init comes here too */
    if (!MPIDI_PIP_daps_track_on)
        return;
    if (MPIR_CVAR_ASYNC_PROGRESS && MPIR_ThreadInfo.thread_provided == MPI_THREAD_MULTIPLE) {
        /* MPICH's progress thread progresses this rank, and sits inside MPI
         * from before the guard was turned on: no worker may step in */
        MPIDI_PIP_daps_track_on = false;
        daps.off_reason = "MPIR_CVAR_ASYNC_PROGRESS=1 runs a progress thread";
        return;
    }
    if (MPIDI_CX_MT == MPIDI_CX_MT_OFFLOAD && MPIR_ThreadInfo.isThreaded) {
        /* the same for the offload model's executors (cx_mt_offload.c) */
        MPIDI_PIP_daps_track_on = false;
        daps.off_reason = "MPIR_CVAR_CH4_MT_MODEL=offload: its executors run the progress";
        return;
    }
    MPIDI_PIP_daps_on = true;
    avail_locked = MPIR_ThreadInfo.isThreaded;
    MPIR_CX_daps_turn_on(&MPIR_CX_daps_guard);
    __atomic_store_n(&my_daps.enabled, 1, __ATOMIC_SEQ_CST);
}

/* The start of MPI_Finalize (MPIR_CX_daps_stop): nobody runs our progress any more (a worker
 * inside finishes first), and we stop running theirs. */
static void daps_stop(void)
{
    MPIR_CX_daps_start = MPIR_CX_daps_stop = NULL;
    MPIDI_PIP_daps_on = false;
    MPIDI_PIP_daps_track_on = false;
    MPIDI_PIPI_daps_disable(&my_daps);
    MPIR_CX_daps_reset(&MPIR_CX_daps_guard);
}

/* MPI_Finalize, later: peers stopped reading our descriptor when they
 * passed the start of their own MPI_Finalize. */
void MPIDI_PIP_daps_finalize(void)
{
    if (MPIR_CX_daps_stop)
        daps_stop();    /* MPI_Init failed half-way */
    MPL_free(daps.world.local);
    MPL_free(daps.world.remote);
    memset(&daps.world, 0, sizeof(daps.world));
}

/* The smallest contiguous receive that may need a handshake with its
 * sender: PiP's single-copy threshold, the shared-memory and netmod eager
 * limits (larger messages are pipelined or go by rendezvous), and
 * libfabric's rxm rendezvous threshold (FI_OFI_RXM_BUFFER_SIZE, 16 KiB by
 * default; tcp and verbs send smaller messages eagerly). */
static size_t handshake_bytes(void)
{
    size_t n = 16384;
    const char *rxm_env = getenv("FI_OFI_RXM_BUFFER_SIZE");
    long rxm = rxm_env ? atol(rxm_env) : 0;
    if (rxm > 0 && (size_t) rxm < n)
        n = (size_t) rxm;
    if (MPIDI_PIP_global.threshold < n)
        n = MPIDI_PIP_global.threshold;
#ifndef MPIDI_CH4_DIRECT_NETMOD
    if ((size_t) MPIDI_SHM_am_eager_limit() < n)
        n = (size_t) MPIDI_SHM_am_eager_limit();
#endif
    if ((size_t) MPIDI_NM_am_eager_limit() < n)
        n = (size_t) MPIDI_NM_am_eager_limit();
    return n;
}

/* After it: peers[i] is local rank i's descriptor if it shares this address
 * space, else 0. Decides whether this rank takes part. */
int MPIDI_PIP_daps_init_world(const uintptr_t * peers)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_PIPI_daps_worker_t *w = &daps.world;
    int nl = MPIR_Process.local_size, n = 0;

    memset(w, 0, sizeof(*w));
    daps.off_reason = NULL;
    for (int i = 0; i < nl; i++)
        n += i != MPIR_Process.local_rank && peers[i];
    if (!daps.requested || n == 0)
        return MPI_SUCCESS;
    const char *why = unaudited_netmod();
    if (!why && syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) != 0)
        why = "membarrier(2) is not available";
    if (why) {
        daps.off_reason = why;
        if (getenv("MPIR_CVAR_CH4_CX_DAPS")) {
            char valid[240];
            snprintf(valid, sizeof(valid), "off (Daps cannot run here: %s)", why);
            return MPIDI_CX_cvar_invalid("MPIR_CVAR_CH4_CX_DAPS", MPIR_CVAR_CH4_CX_DAPS, valid);
        }
        return MPI_SUCCESS;
    }
    w->local = MPL_malloc(n * sizeof(*w->local), MPL_MEM_SHM);
    w->remote = MPL_malloc(n * sizeof(*w->remote), MPL_MEM_SHM);
    MPIR_ERR_CHKANDJUMP(!w->local || !w->remote, mpi_errno, MPI_ERR_OTHER, "**nomem");
    for (int i = 0; i < nl; i++) {
        MPIDI_PIPI_daps_rank_t *p = (MPIDI_PIPI_daps_rank_t *) peers[i];
        if (i == MPIR_Process.local_rank || !p)
            continue;
        if (p->numa == my_daps.numa)
            w->local[w->n_local++] = p;
        else
            w->remote[w->n_remote++] = p;
    }
    w->fence = membarrier_fence;
    w->min_away_ns = MPIR_CVAR_CH4_CX_DAPS_AWAY_US * 1000ULL;
    /* five looks at least before a step when watching; one per AWAY_US
     * when there is nobody to watch */
    w->look_ns = w->look_min_ns = w->min_away_ns / 5;
    w->look_max_ns = w->min_away_ns;
    w->look_polls = 15;
    w->rng = 2463534242u + 2654435761u * (unsigned) (MPIR_Process.local_rank + 1);
    if (!w->rng)
        w->rng = 1;
    MPIDI_PIP_daps_track_bytes = handshake_bytes();
    MPIDI_PIP_daps_track_on = true;
    MPIR_CX_daps_start = daps_start;
    MPIR_CX_daps_stop = daps_stop;

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* For the extensions line of MPI_Get_library_version. */
const char *MPIDI_PIP_daps_describe(void)
{
    static char buf[200];
    if (MPIDI_PIP_daps_on || MPIDI_PIP_daps_track_on)
        return ", progress stealing";
    if (daps.off_reason) {
        snprintf(buf, sizeof(buf), ", no progress stealing (%s)", daps.off_reason);
        return buf;
    }
    return "";
}

static unsigned long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long) ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* A blocking call polled in vain and found no chunk to steal: one steal
 * step on one victim. Every thread of a rank is a worker of its own. */
bool MPIDI_PIP_daps_idle(void)
{
    MPIDI_PIPI_daps_worker_t *w = &thread_worker;
    if (unlikely(w->local != daps.world.local || w->remote != daps.world.remote)) {
        unsigned rng = daps.world.rng ^ (unsigned) (uintptr_t) w;
        *w = daps.world;        /* this thread's first steal */
        w->rng = rng ? rng : 1;
    }
    unsigned long long ns = 0;
    int r = MPIDI_PIPI_daps_idle(w, now_ns, &ns);
    if (r < 0)
        return false;
    __atomic_fetch_add(&daps.ns, ns, __ATOMIC_RELAXED);
    __atomic_fetch_add(&daps.steps, 1, __ATOMIC_RELAXED);
    if (r & MPIDI_PIPI_DAPS_NET)
        __atomic_fetch_add(&daps.net_steps, 1, __ATOMIC_RELAXED);
    if (r & MPIDI_PIPI_DAPS_SHM)
        __atomic_fetch_add(&daps.shm_steps, 1, __ATOMIC_RELAXED);
    return r > 0;
}

/* Only this rank's MPI code changes its counters, and the guard never lets
 * the owner and a worker run it at once; without MPI threads a plain load
 * and store do, without a locked instruction. Workers only read them. */
static inline void avail_add(long *counter, long delta)
{
    if (avail_locked)
        __atomic_add_fetch(counter, delta, __ATOMIC_RELAXED);
    else
        __atomic_store_n(counter, __atomic_load_n(counter, __ATOMIC_RELAXED) + delta,
                         __ATOMIC_RELAXED);
}

/* A nonblocking operation still incomplete after its issue: workers have
 * something to progress here until it completes (request free hook). */
void MPIDI_PIP_daps_posted(MPIR_Request * req, int kind)
{
    req->dev.cx_daps = kind;
    if (kind & MPIDI_PIPI_DAPS_NET)
        avail_add(&my_daps.net_avail, 1);
    if (kind & MPIDI_PIPI_DAPS_SHM)
        avail_add(&my_daps.shm_avail, 1);
}

void MPIDI_PIP_daps_untrack(MPIR_Request * req)
{
    int kind = req->dev.cx_daps;
    req->dev.cx_daps = 0;
    if (kind & MPIDI_PIPI_DAPS_NET)
        avail_add(&my_daps.net_avail, -1);
    if (kind & MPIDI_PIPI_DAPS_SHM)
        avail_add(&my_daps.shm_avail, -1);
}

/* A window with memory: other ranks' RMA may need this rank's progress
 * (active messages) for its whole life; the target cannot know when. */
void MPIDI_PIP_daps_window(int delta)
{
    avail_add(&my_daps.net_avail, delta);
    avail_add(&my_daps.shm_avail, delta);
}

static void register_pvars(void)
{
    static int registered;
    static const MPIDI_PIP_pvar_t pvars[] = {
        {"cx_daps_steps", &daps.steps,
         "Daps: steal steps this rank ran on a computing local rank's progress while idle in MPI"},
        {"cx_daps_net_progress", &daps.net_steps,
         "Daps: steal steps of this rank whose network progress completed something"},
        {"cx_daps_shm_progress", &daps.shm_steps,
         "Daps: steal steps of this rank whose shared-memory progress completed something"},
        {"cx_daps_ns", &daps.ns,
         "Daps: nanoseconds this rank spent running other ranks' progress"},
        {"cx_daps_served", &daps.served,
         "Daps: steal steps other ranks ran on this rank's progress"},
        {"cx_daps_errors", &daps.errors,
         "Daps: steal steps on this rank whose progress failed (stealing from it stops; "
         "its own calls report the failure)"},
    };
    if (!registered++)
        MPIDI_PIP_register_counters("CH4_CX_DAPS", pvars, sizeof(pvars) / sizeof(pvars[0]));
}
