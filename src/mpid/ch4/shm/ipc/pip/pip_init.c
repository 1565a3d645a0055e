/*
 * MPICH-CX: PiP single-copy transfers: which local ranks share this
 * process's address space, the threshold, and the MPI_T pvars.
 */
#include "mpidimpl.h"
#include "cx_cvar.h"
#include "pip_post.h"
#include "mpidu_init_shm.h"
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

MPIDI_PIP_global_t MPIDI_PIP_global = {.threshold = SIZE_MAX };

static void register_pvars(void);

/* This address space's token, or zeros if it cannot be told apart.  The
 * raw syscall, because PiP gives every task its own getpid(). */
static MPIDI_PIP_space_t my_space(void)
{
    MPIDI_PIP_space_t s = { 0, 0 };
    struct stat st;
    if (stat("/proc/self/ns/pid", &st) == 0) {
        s.tgid = (uint64_t) syscall(SYS_getpid);
        s.pidns = (uint64_t) st.st_ino;
    }
    return s;
}

/* Before the world exists: the CVARs and the pvars. */
int MPIDI_PIP_init_local(void)
{
    register_pvars();
    if (MPIR_CVAR_CH4_CX_PIP_ENABLE != 0 && MPIR_CVAR_CH4_CX_PIP_ENABLE != 1)
        return MPIDI_CX_cvar_invalid_int("MPIR_CVAR_CH4_CX_PIP_ENABLE",
                                         MPIR_CVAR_CH4_CX_PIP_ENABLE,
                                         "1 (single copy between tasks) or 0 (off)");
    if (MPIR_CVAR_CH4_CX_PIP_P2P_THRESHOLD < 0)
        return MPIDI_CX_cvar_invalid_int("MPIR_CVAR_CH4_CX_PIP_P2P_THRESHOLD",
                                         MPIR_CVAR_CH4_CX_PIP_P2P_THRESHOLD,
                                         "a message size in bytes, 0 or more");
    int mpi_errno = MPIDI_PIP_steal_init_local();
    if (mpi_errno)
        return mpi_errno;
    mpi_errno = MPIDI_PIP_mcoll_init_local();
    if (mpi_errno)
        return mpi_errno;
    return MPIDI_PIP_daps_init_local();
}

/* Collective over the node's ranks once MPIDU_Init_shm is up: everyone
 * publishes its token, and each rank notes the peers with its own (and
 * hands their CAB-MPI state to pip_steal.c). */
int MPIDI_PIP_init_world(void)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_PIP_global_t *g = &MPIDI_PIP_global;
    uintptr_t *steal_peers = NULL, *daps_peers = NULL;

    g->threshold = SIZE_MAX;
    g->n_peers = 0;
    g->same_space = NULL;
    g->world_size = MPIR_Process.size;
    g->space = (MPIDI_PIP_space_t) {
    0, 0};
    if (MPIR_CVAR_CH4_CX_PIP_ENABLE)
        g->space = my_space();

    /* What each rank publishes: its address space, and where its CAB-MPI
     * state and its Daps progress descriptor are (read by the ranks of the
     * same space only). */
    struct {
        MPIDI_PIP_space_t space;
        uintptr_t steal, daps;
    } mine = { g->space, MPIDI_PIP_steal_prepare(), MPIDI_PIP_daps_prepare() }, peer;
    steal_peers = MPL_calloc(MPIR_Process.local_size, sizeof(uintptr_t), MPL_MEM_SHM);
    daps_peers = MPL_calloc(MPIR_Process.local_size, sizeof(uintptr_t), MPL_MEM_SHM);
    MPIR_ERR_CHKANDJUMP(!steal_peers || !daps_peers, mpi_errno, MPI_ERR_OTHER, "**nomem");

    /* Every local rank takes part in the exchange, enabled or not; the
     * first barrier keeps slower ranks' earlier gets from seeing our put. */
    mpi_errno = MPIDU_Init_shm_barrier();
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = MPIDU_Init_shm_put(&mine, sizeof(mine));
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = MPIDU_Init_shm_barrier();
    MPIR_ERR_CHECK(mpi_errno);
    for (int i = 0; i < MPIR_Process.local_size; i++) {
        if (i == MPIR_Process.local_rank)
            continue;
        mpi_errno = MPIDU_Init_shm_get(i, sizeof(peer), &peer);
        MPIR_ERR_CHECK(mpi_errno);
        if (!MPIDI_PIP_is_my_space(&peer.space))
            continue;
        if (!g->same_space) {
            g->same_space = MPL_calloc(g->world_size, 1, MPL_MEM_SHM);
            MPIR_ERR_CHKANDJUMP(!g->same_space, mpi_errno, MPI_ERR_OTHER, "**nomem");
        }
        g->same_space[MPIR_Process.node_local_map[i]] = 1;
        g->n_peers++;
        steal_peers[i] = peer.steal;
        daps_peers[i] = peer.daps;
    }
    mpi_errno = MPIDU_Init_shm_barrier();
    MPIR_ERR_CHECK(mpi_errno);
    if (g->n_peers)
        g->threshold = (size_t) MPIR_CVAR_CH4_CX_PIP_P2P_THRESHOLD;
    mpi_errno = MPIDI_PIP_steal_init_world(steal_peers);
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = MPIDI_PIP_daps_init_world(daps_peers);
    MPIR_ERR_CHECK(mpi_errno);
    MPIDI_PIP_mcoll_init_world();

  fn_exit:
    MPL_free(steal_peers);
    MPL_free(daps_peers);
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_PIP_finalize(void)
{
    MPIDI_PIP_mcoll_finalize();
    MPIDI_PIP_daps_finalize();
    MPIDI_PIP_steal_finalize();
    MPL_free(MPIDI_PIP_global.same_space);
    MPIDI_PIP_global.same_space = NULL;
    MPIDI_PIP_global.n_peers = 0;
    MPIDI_PIP_global.threshold = SIZE_MAX;
    return MPI_SUCCESS;
}

/* For the extensions line of MPI_Get_library_version. */
const char *MPIDI_PIP_describe(void)
{
    static char buf[320];
    if (!MPIDI_PIP_global.n_peers)
        return MPIR_CVAR_CH4_CX_PIP_ENABLE ? "single copy: no peer task" : "single copy off";
    snprintf(buf, sizeof(buf), "single copy from %zu bytes%s%s%s with %d peer tasks",
             MPIDI_PIP_global.threshold, MPIDI_PIP_steal_describe(), MPIDI_PIP_daps_describe(),
             MPIDI_PIP_mcoll_describe(), MPIDI_PIP_global.n_peers);
    return buf;
}

/* Counters are bumped with atomic adds, from several VCIs. */
static void read_counter(void *addr, void *obj, int count, void *buf)
{
    *(unsigned long long *) buf = __atomic_load_n((unsigned long long *) addr, __ATOMIC_RELAXED);
}

void MPIDI_PIP_register_counters(const char *category, const MPIDI_PIP_pvar_t * pvars, int n)
{
    for (int i = 0; i < n; i++)
        MPIR_T_PVAR_REGISTER_impl(MPI_T_PVAR_CLASS_COUNTER, MPI_UNSIGNED_LONG_LONG, pvars[i].name,
                                  pvars[i].counter, 1, MPI_T_ENUM_NULL,
                                  MPI_T_VERBOSITY_USER_BASIC, MPI_T_BIND_NO_OBJECT,
                                  MPIR_T_PVAR_FLAG_READONLY | MPIR_T_PVAR_FLAG_CONTINUOUS,
                                  read_counter, NULL, category, pvars[i].desc);
}

static void register_pvars(void)
{
    static int registered;
    static const MPIDI_PIP_pvar_t pvars[] = {
        {"cx_pip_copies", &MPIDI_PIP_global.copies,
         "PiP: messages this rank received by copying from the sender's buffer"},
        {"cx_pip_copy_bytes", &MPIDI_PIP_global.bytes,
         "PiP: bytes this rank received by copying from the sender's buffer"},
        {"cx_pip_windows", &MPIDI_PIP_global.windows,
         "PiP: created and dynamic windows whose local peers' memory this rank accesses directly"},
        {"cx_pip_split_windows", &MPIDI_PIP_global.split_windows,
         "PiP: those of them with local peers in other processes too, reached by active messages"},
    };
    if (!registered++)
        MPIDI_PIP_register_counters("CH4_CX_PIP", pvars, sizeof(pvars) / sizeof(pvars[0]));
}
