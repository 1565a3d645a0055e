/*
 * MPICH-CX: ranks waiting in MPI yield their core (sched_yield) when the
 * node's ranks outnumber the CPUs they may run on together; MPICH's
 * MPL_thread_yield does nothing on Linux. Decided once, at init, from the
 * union of the local ranks' affinity masks (cx_oversub.h).
 */
#include "mpidimpl.h"
#include "cx_cvar.h"
#include "cx_oversub.h"
#include "mpidu_init_shm.h"

/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

cvars:
    - name        : MPIR_CVAR_CH4_CX_RANK_YIELD
      category    : CH4_CX
      type        : string
      default     : "auto"
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        Whether a rank whose blocking MPI call polled in vain gives its core
        away (sched_yield) before it polls again. auto: when the node's
        ranks outnumber the CPUs in the union of their affinity masks (a
        rank that never yields keeps its core for a whole time slice while
        the peer it waits for cannot run). always, never: regardless.

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

bool MPIDI_CX_rank_yield_on;
static atomic_ullong rank_yields;
static int oversub_mode;
static int node_cpus;           /* CPUs in the union of the local ranks' masks */

/* The mask exchanged between local ranks: the first 512 CPUs (one init-shm
 * block); on larger machines a rank's own mask counts alone. */
typedef struct {
    uint64_t bits[MPIDU_INIT_SHM_BLOCK_SIZE / sizeof(uint64_t)];
} cpu_bits_t;
#define CPU_BITS_MAX ((int) (8 * sizeof(cpu_bits_t)))

static void get_own_bits(cpu_bits_t * b)
{
    cpu_set_t set;
    memset(b, 0, sizeof(*b));
    if (sched_getaffinity(0, sizeof(set), &set) != 0)
        CPU_ZERO(&set);
    for (int c = 0; c < CPU_BITS_MAX && c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set))
            b->bits[c / 64] |= 1ULL << (c % 64);
}

/* Ranks that share this machine's CPUs. MPIR_CVAR_NUM_CLIQUES (or
 * ODD_EVEN_CLIQUES) and MPIR_CVAR_NOLOCAL split one machine's ranks into
 * emulated nodes, smaller than the machine (MPICH applies cliques only on a
 * single machine and means both for one): all ranks count then. */
static int machine_ranks(void)
{
    if (MPIR_CVAR_NOLOCAL || MPIR_pmi_has_local_cliques())
        return MPIR_Process.size;
    return MPIR_Process.local_size;
}

int MPIDI_CX_rank_yield_init(void)
{
    oversub_mode = cx_oversub_parse(MPIR_CVAR_CH4_CX_RANK_YIELD);
    if (oversub_mode < 0)
        return MPIDI_CX_cvar_invalid("MPIR_CVAR_CH4_CX_RANK_YIELD", MPIR_CVAR_CH4_CX_RANK_YIELD,
                                     CX_OVERSUB_MODES);
    node_cpus = cx_affinity_cpus();
    MPIDI_CX_rank_yield_on = cx_oversub_yields(oversub_mode, machine_ranks(), node_cpus);
    return MPI_SUCCESS;
}

/* Collective over the node's ranks once MPIDU_Init_shm is up. */
int MPIDI_CX_rank_yield_init_world(void)
{
    int mpi_errno = MPI_SUCCESS;
    if (oversub_mode != CX_OVERSUB_AUTO || MPIR_Process.local_size < 2 ||
        sysconf(_SC_NPROCESSORS_CONF) > CPU_BITS_MAX)
        return MPI_SUCCESS;
    cpu_bits_t mine, all, peer;
    get_own_bits(&mine);
    all = mine;
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
        for (int w = 0; w < (int) (sizeof(all.bits) / sizeof(all.bits[0])); w++)
            all.bits[w] |= peer.bits[w];
    }
    /* nobody may put again before everyone has read */
    mpi_errno = MPIDU_Init_shm_barrier();
    MPIR_ERR_CHECK(mpi_errno);
    node_cpus = 0;
    for (int w = 0; w < (int) (sizeof(all.bits) / sizeof(all.bits[0])); w++)
        node_cpus += __builtin_popcountll(all.bits[w]);
    MPIDI_CX_rank_yield_on = cx_oversub_yields(oversub_mode, machine_ranks(), node_cpus);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

void MPIDI_CX_rank_yield_now(void)
{
    atomic_fetch_add_explicit(&rank_yields, 1, memory_order_relaxed);
    sched_yield();
}

static void get_rank_yields(void *addr, void *obj, int count, void *buf)
{
    *(unsigned long long *) buf = atomic_load_explicit(&rank_yields, memory_order_relaxed);
}

static void get_node_cpus(void *addr, void *obj, int count, void *buf)
{
    *(unsigned long long *) buf = (unsigned long long) node_cpus;
}

static void get_yield_on(void *addr, void *obj, int count, void *buf)
{
    *(unsigned long long *) buf = MPIDI_CX_rank_yield_on;
}

void MPIDI_CX_rank_yield_register_pvars(void)
{
    MPIR_T_PVAR_REGISTER_impl(MPI_T_PVAR_CLASS_COUNTER, MPI_UNSIGNED_LONG_LONG,
                              "cx_rank_yields", NULL, 1, MPI_T_ENUM_NULL,
                              MPI_T_VERBOSITY_USER_BASIC, MPI_T_BIND_NO_OBJECT,
                              MPIR_T_PVAR_FLAG_READONLY | MPIR_T_PVAR_FLAG_CONTINUOUS,
                              get_rank_yields, NULL, "CH4_CX",
                              "times this rank, polling in vain in a blocking call, gave its "
                              "core away (MPIR_CVAR_CH4_CX_RANK_YIELD)");
    MPIR_T_PVAR_REGISTER_impl(MPI_T_PVAR_CLASS_LEVEL, MPI_UNSIGNED_LONG_LONG,
                              "cx_rank_yield_on", NULL, 1, MPI_T_ENUM_NULL,
                              MPI_T_VERBOSITY_USER_BASIC, MPI_T_BIND_NO_OBJECT,
                              MPIR_T_PVAR_FLAG_READONLY | MPIR_T_PVAR_FLAG_CONTINUOUS,
                              get_yield_on, NULL, "CH4_CX",
                              "1 when this rank's waits yield (MPIR_CVAR_CH4_CX_RANK_YIELD)");
    MPIR_T_PVAR_REGISTER_impl(MPI_T_PVAR_CLASS_LEVEL, MPI_UNSIGNED_LONG_LONG,
                              "cx_node_cpus", NULL, 1, MPI_T_ENUM_NULL,
                              MPI_T_VERBOSITY_USER_BASIC, MPI_T_BIND_NO_OBJECT,
                              MPIR_T_PVAR_FLAG_READONLY | MPIR_T_PVAR_FLAG_CONTINUOUS,
                              get_node_cpus, NULL, "CH4_CX",
                              "CPUs the node's ranks may run on together (the union of their "
                              "affinity masks), which auto compares with their number");
}
