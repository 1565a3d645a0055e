/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * MPICH-CX PiP-MColl: which communicators qualify, their meeting state,
 * the CVARs and pvars. Design: doc/design/pip-mcoll.md.
 */

#include "mpidimpl.h"
#include "cx_cvar.h"
#include "pip_post.h"
#include "pip_mcoll.h"
#include "pip_mcoll_hooks.h"
#include <pthread.h>

/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

categories :
    - name : CH4_CX_MCOLL
      description : MPICH-CX PiP-MColl, collectives between PiP tasks by posted addresses

cvars:
    - name        : MPIR_CVAR_CH4_CX_MCOLL
      category    : CH4_CX_MCOLL
      type        : string
      default     : "auto"
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        Under mpiexec -pip, on a communicator whose ranks are all tasks of
        one process: auto runs MPI_Bcast, MPI_Gather, MPI_Scatter,
        MPI_Reduce and MPI_Allreduce by posted addresses (pip_mcoll)
        whenever that collective's algorithm CVAR
        (MPIR_CVAR_<COLL>_INTRA_ALGORITHM) is auto; off leaves them to
        MPICH's selection. Either way an algorithm CVAR that says pip_mcoll
        forces it (MPI_Allgather runs this way only then).

    - name        : MPIR_CVAR_CH4_CX_MCOLL_ALLREDUCE_SMALL
      category    : CH4_CX_MCOLL
      type        : int
      default     : 524288
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        pip_mcoll MPI_Allreduce: while a rank would read at most this many
        bytes of its peers' inputs (the vector's bytes times the ranks but
        one), every rank reduces all inputs itself, writing only its own
        buffer; above it each rank reduces its part of the vector and
        copies the others' parts (reads 2/P as much, but every part it
        writes is read by the others: a meeting more and a cache-line
        invalidation per line). 0 or more.

    - name        : MPIR_CVAR_CH4_CX_MCOLL_NODES_ALLREDUCE_SMALL
      category    : CH4_CX_MCOLL
      type        : int
      default     : 65536
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        pip_mcoll MPI_Allreduce across nodes: up to this many bytes the
        nodes' partial results are gathered by Bruck's algorithm with base
        P+1 and every rank reduces them (log steps); above it P rings per
        node do a reduce-scatter and an allgather (2(N-1) steps of 1/(NP)
        of the vector each).

    - name        : MPIR_CVAR_CH4_CX_MCOLL_NODES_ALLGATHER_RING
      category    : CH4_CX_MCOLL
      type        : int
      default     : 32768
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        pip_mcoll MPI_Allgather across nodes: up to this many bytes per rank
        Bruck's algorithm with base P+1 over the nodes (log steps, through
        a stage buffer); above it the multi-object ring (N-1 steps, straight
        into the receive buffers, the intranode copies overlapped).

    - name        : MPIR_CVAR_CH4_CX_MCOLL_PART_MIN
      category    : CH4_CX_MCOLL
      type        : int
      default     : 4096
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        pip_mcoll MPI_Reduce and MPI_Allreduce: the smallest part of the
        vector, in bytes, that one rank reduces; smaller vectors are
        reduced by fewer ranks (1 or more).

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

MPIDI_PIP_mcoll_global_t MPIDI_PIP_mcoll_global;
bool MPIDI_PIP_mcoll_on;
bool MPIDI_PIP_mcoll_auto;

/* What MPIDI_COMM(comm, cx_mcoll) holds before the state exists. */
static char comm_unfit, comm_fit;

static void register_pvars(void);

int MPIDI_PIP_mcoll_init_local(void)
{
    register_pvars();
    if (strcmp(MPIR_CVAR_CH4_CX_MCOLL, "auto") && strcmp(MPIR_CVAR_CH4_CX_MCOLL, "off"))
        return MPIDI_CX_cvar_invalid("MPIR_CVAR_CH4_CX_MCOLL", MPIR_CVAR_CH4_CX_MCOLL,
                                     "auto or off");
    if (MPIR_CVAR_CH4_CX_MCOLL_ALLREDUCE_SMALL < 0)
        return MPIDI_CX_cvar_invalid_int("MPIR_CVAR_CH4_CX_MCOLL_ALLREDUCE_SMALL",
                                         MPIR_CVAR_CH4_CX_MCOLL_ALLREDUCE_SMALL,
                                         "a message size in bytes, 0 or more");
    if (MPIR_CVAR_CH4_CX_MCOLL_NODES_ALLREDUCE_SMALL < 0)
        return MPIDI_CX_cvar_invalid_int("MPIR_CVAR_CH4_CX_MCOLL_NODES_ALLREDUCE_SMALL",
                                         MPIR_CVAR_CH4_CX_MCOLL_NODES_ALLREDUCE_SMALL,
                                         "a message size in bytes, 0 or more");
    if (MPIR_CVAR_CH4_CX_MCOLL_NODES_ALLGATHER_RING < 0)
        return MPIDI_CX_cvar_invalid_int("MPIR_CVAR_CH4_CX_MCOLL_NODES_ALLGATHER_RING",
                                         MPIR_CVAR_CH4_CX_MCOLL_NODES_ALLGATHER_RING,
                                         "a message size in bytes, 0 or more");
    if (MPIR_CVAR_CH4_CX_MCOLL_PART_MIN < 1)
        return MPIDI_CX_cvar_invalid_int("MPIR_CVAR_CH4_CX_MCOLL_PART_MIN",
                                         MPIR_CVAR_CH4_CX_MCOLL_PART_MIN,
                                         "a size in bytes, 1 or more");
    return MPI_SUCCESS;
}

/* Once PiP knows its peers (MPIDI_PIP_init_world). On is the same on every
 * rank of the job (mpiexec -pip runs every rank as a task, and the CVAR is
 * the same everywhere), also on a node whose only rank has no peers: a
 * communicator across nodes decides collectively whether it qualifies. */
void MPIDI_PIP_mcoll_init_world(void)
{
#ifdef MPIDI_CX_MCOLL
    MPIDI_PIP_mcoll_on = MPIR_CVAR_CH4_CX_PIP_ENABLE && getenv("MPICH_CX_PIP_TASK");
#endif
    MPIDI_PIP_mcoll_auto = MPIDI_PIP_mcoll_on && !strcmp(MPIR_CVAR_CH4_CX_MCOLL, "auto");
}

void MPIDI_PIP_mcoll_finalize(void)
{
    MPIDI_PIP_mcoll_on = MPIDI_PIP_mcoll_auto = false;
}

const char *MPIDI_PIP_mcoll_describe(void)
{
    return MPIDI_PIP_mcoll_auto ? ", collectives by posted addresses" : "";
}

static int nodes_setup(MPIR_Comm * comm);

/* Every rank of comm is a task of this process (the same answer on every
 * rank: sharing a process is symmetric), or comm spans nodes whose ranks
 * are each one process's tasks (decided together: see nodes_setup). */
int MPIR_CX_mcoll_comm_ok(MPIR_Comm * comm)
{
    void *st = MPIDI_COMM(comm, cx_mcoll);
    if (st)
        return st != &comm_unfit;
    if (!MPIDI_PIP_mcoll_on)
        return 0;       /* not cached: PiP may not know its peers yet */
    if (comm->comm_kind != MPIR_COMM_KIND__INTRACOMM || comm->local_size < 2) {
        MPIDI_COMM(comm, cx_mcoll) = &comm_unfit;
        return 0;
    }
    bool fit = true;
    for (int r = 0; fit && r < comm->local_size; r++)
        fit = r == comm->rank || MPIDI_PIP_any_layout(r, comm);
    if (fit) {
        MPIDI_COMM(comm, cx_mcoll) = &comm_fit;
        return 1;
    }
    return nodes_setup(comm);
}

/* Whether comm's state (once comm_ok said yes) spans nodes. */
int MPIR_CX_mcoll_comm_nodes(MPIR_Comm * comm)
{
    MPIDI_PIP_mcoll_comm_t *st = MPIDI_COMM(comm, cx_mcoll);
    return st && st != (void *) &comm_fit && st != (void *) &comm_unfit && st->nodes;
}

/* Contiguous over any count: a peer reads count elements at the buffer's
 * true lower bound without the datatype (whose handle means nothing in the
 * peer's copy of MPICH). */
int MPIR_CX_mcoll_contig(MPI_Datatype datatype)
{
    int contig;
    MPI_Aint size, extent;
    MPIR_Datatype_is_contig(datatype, &contig);
    MPIR_Datatype_get_size_macro(datatype, size);
    MPIR_Datatype_get_extent_macro(datatype, extent);
    return contig && size == extent;
}

/* Slots come from a pool and go back to it: a slot is never freed while
 * this task runs (a peer may still poll it as it leaves its last meeting). */
typedef struct pool_slot {
    MPIDI_PIP_mcoll_slot_t slot;        /* first: the slot's alignment */
    struct pool_slot *next;
} pool_slot_t;

static pool_slot_t *pool;
static pthread_mutex_t pool_mutex = PTHREAD_MUTEX_INITIALIZER;

static MPIDI_PIP_mcoll_slot_t *slot_take(void)
{
    pool_slot_t *p;
    pthread_mutex_lock(&pool_mutex);
    p = pool;
    if (p)
        pool = p->next;
    pthread_mutex_unlock(&pool_mutex);
    if (!p) {
        if (posix_memalign((void **) &p, 64, sizeof(*p)))
            return NULL;
        memset(p, 0, sizeof(*p));
    }
    return &p->slot;
}

static void slot_give(MPIDI_PIP_mcoll_slot_t * slot)
{
    pool_slot_t *p = (pool_slot_t *) slot;
    pthread_mutex_lock(&pool_mutex);
    p->next = pool;
    pool = p;
    pthread_mutex_unlock(&pool_mutex);
}

int MPIDI_PIP_mcoll_get(MPIR_Comm * comm, MPIDI_PIP_mcoll_comm_t ** out)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_Errflag_t errflag = MPIR_ERR_NONE;
    MPIDI_PIP_mcoll_comm_t *st = MPIDI_COMM(comm, cx_mcoll);

    MPIR_Assert(st && st != (void *) &comm_unfit);
    if (st != (void *) &comm_fit) {
        *out = st;
        return MPI_SUCCESS;
    }
    st = MPL_calloc(1, sizeof(*st), MPL_MEM_COMM);
    MPIR_ERR_CHKANDJUMP(!st, mpi_errno, MPI_ERR_OTHER, "**nomem");
    st->sync.size = comm->local_size;
    st->sync.rank = comm->rank;
    st->sync.peer = MPL_malloc(comm->local_size * sizeof(MPIDI_PIP_mcoll_peer_t), MPL_MEM_COMM);
    st->posted = MPL_malloc(comm->local_size * sizeof(void *), MPL_MEM_COMM);
    MPIDI_PIP_mcoll_peer_t mine = { slot_take(), 0 };
    /* every rank takes part in the exchange, even one that failed */
    if (mine.slot)
        mine.base = __atomic_load_n(&mine.slot->step, __ATOMIC_RELAXED);
    MPIR_ERR_CHKANDJUMP(!st->sync.peer || !st->posted, mpi_errno, MPI_ERR_OTHER, "**nomem");
    mpi_errno = MPIR_Allgather_intra_brucks(&mine, sizeof(mine), MPI_BYTE, st->sync.peer,
                                            sizeof(mine), MPI_BYTE, comm, &errflag);
    MPIR_ERR_CHECK(mpi_errno);
    for (int r = 0; r < comm->local_size; r++)
        MPIR_ERR_CHKANDJUMP(!st->sync.peer[r].slot, mpi_errno, MPI_ERR_OTHER, "**nomem");
    MPIDI_COMM(comm, cx_mcoll) = st;
    *out = st;
  fn_exit:
    return mpi_errno;
  fn_fail:
    if (mine.slot)
        slot_give(mine.slot);
    if (st) {
        MPL_free(st->sync.peer);
        MPL_free(st->posted);
    }
    MPL_free(st);
    goto fn_exit;
}

static void *grow(void **buf, size_t *have, size_t size)
{
    if (size > *have) {
        MPL_free(*buf);
        *buf = MPL_malloc(size, MPL_MEM_COLL);
        *have = *buf ? size : 0;
    }
    return *buf;
}

void *MPIDI_PIP_mcoll_tmp(MPIDI_PIP_mcoll_comm_t * st, size_t size)
{
    return grow(&st->tmp, &st->tmp_size, size);
}

void *MPIDI_PIP_mcoll_stage(MPIDI_PIP_mcoll_comm_t * st, size_t size)
{
    return grow(&st->stage, &st->stage_size, size);
}

static void nodes_free(MPIDI_PIP_mcoll_nodes_t * ns)
{
    if (!ns)
        return;
    MPL_free(ns->size);
    MPL_free(ns->first);
    MPL_free(ns->rank);
    MPL_free(ns->node_of);
    MPL_free(ns->local_of);
    MPL_free(ns->off);
    MPL_free(ns);
}

void MPIDI_PIP_mcoll_comm_free(MPIR_Comm * comm)
{
    MPIDI_PIP_mcoll_comm_t *st = MPIDI_COMM(comm, cx_mcoll);
    MPIDI_COMM(comm, cx_mcoll) = NULL;
    if (!st || st == (void *) &comm_fit || st == (void *) &comm_unfit)
        return;
    /* a peer may still be taking this rank's last one-way step */
    MPIDI_PIP_mcoll_quiesce(&st->sync);
    slot_give(st->sync.peer[st->sync.rank].slot);
    MPL_free(st->sync.peer);
    MPL_free(st->posted);
    MPL_free(st->tmp);
    MPL_free(st->stage);
    nodes_free(st->nodes);
    MPL_free(st);
}

/* comm's node map from MPICH's tables (internode_table: node of each rank;
 * MPICH numbers nodes the same way on every rank), or NULL: one node, no
 * tables (a node or node-roots subcommunicator), or no memory. */
static MPIDI_PIP_mcoll_nodes_t *nodes_map(MPIR_Comm * comm)
{
    int size = comm->local_size, n = 0;
    if (!comm->internode_table || !comm->intranode_table)
        return NULL;
    for (int r = 0; r < size; r++)
        if (comm->internode_table[r] >= n)
            n = comm->internode_table[r] + 1;
    if (n < 2)
        return NULL;
    MPIDI_PIP_mcoll_nodes_t *ns = MPL_calloc(1, sizeof(*ns), MPL_MEM_COMM);
    if (!ns)
        return NULL;
    ns->n = n;
    ns->size = MPL_calloc(n, sizeof(int), MPL_MEM_COMM);
    ns->first = MPL_calloc(n, sizeof(int), MPL_MEM_COMM);
    ns->rank = MPL_calloc(size, sizeof(int), MPL_MEM_COMM);
    ns->node_of = MPL_calloc(size, sizeof(int), MPL_MEM_COMM);
    ns->local_of = MPL_calloc(size, sizeof(int), MPL_MEM_COMM);
    ns->off = MPL_calloc(n + 1, sizeof(size_t), MPL_MEM_COMM);
    if (!ns->size || !ns->first || !ns->rank || !ns->node_of || !ns->local_of || !ns->off) {
        nodes_free(ns);
        return NULL;
    }
    for (int r = 0; r < size; r++) {
        ns->node_of[r] = comm->internode_table[r];
        ns->local_of[r] = ns->size[ns->node_of[r]]++;
    }
    ns->objects = size;
    for (int m = 0; m < n; m++) {
        ns->first[m] = m ? ns->first[m - 1] + ns->size[m - 1] : 0;
        if (ns->size[m] < ns->objects)
            ns->objects = ns->size[m];
    }
    for (int r = 0; r < size; r++)
        ns->rank[ns->first[ns->node_of[r]] + ns->local_of[r]] = r;
    ns->node = ns->node_of[comm->rank];
    ns->local = ns->local_of[comm->rank];
    return ns;
}

/* A communicator across nodes qualifies when every node's ranks are tasks
 * of one process. Each rank knows that of its own node only, so the ranks
 * decide together, once, in the exchange that also hands out the meeting
 * slots (the caller is a collective: every rank gets here together). A
 * node's meetings are among its own ranks. */
static int nodes_setup(MPIR_Comm * comm)
{
    int size = comm->local_size;
    MPIR_Errflag_t errflag = MPIR_ERR_NONE;
    MPIDI_PIP_mcoll_nodes_t *ns = nodes_map(comm);
    MPIDI_PIP_mcoll_comm_t *st = NULL;
    struct entry {
        MPIDI_PIP_mcoll_peer_t peer;
        uint64_t ok;
    } mine = { {NULL, 0}, 0 }, *all = NULL;

    if (!ns) {
        /* the same on every rank: MPICH's tables are */
        MPIDI_COMM(comm, cx_mcoll) = &comm_unfit;
        return 0;
    }
    bool ok = true;
    for (int j = 0; ok && j < ns->size[ns->node]; j++) {
        int r = ns->rank[ns->first[ns->node] + j];
        ok = r == comm->rank || MPIDI_PIP_any_layout(r, comm);
    }
    st = MPL_calloc(1, sizeof(*st), MPL_MEM_COMM);
    all = MPL_malloc(size * sizeof(*all), MPL_MEM_COMM);
    if (st) {
        st->sync.peer = MPL_malloc(ns->size[ns->node] * sizeof(MPIDI_PIP_mcoll_peer_t),
                                   MPL_MEM_COMM);
        st->posted = MPL_malloc(ns->size[ns->node] * sizeof(void *), MPL_MEM_COMM);
    }
    if (ok && st && st->sync.peer && st->posted && all)
        mine.peer.slot = slot_take();
    if (mine.peer.slot) {
        mine.peer.base = __atomic_load_n(&mine.peer.slot->step, __ATOMIC_RELAXED);
        mine.ok = 1;
    }
    /* without memory for the answers this rank cannot take part (as in
     * MPICH's algorithms, whose peers then wait) */
    int mpi_errno = MPI_ERR_OTHER;
    if (all)
        mpi_errno = MPIR_Allgather_intra_brucks(&mine, sizeof(mine), MPI_BYTE, all, sizeof(mine),
                                                MPI_BYTE, comm, &errflag);
    for (int r = 0; ok && r < size; r++)
        ok = !mpi_errno && all && all[r].ok;
    if (!ok) {
        /* every rank sees the same answers (no error), so all give up */
        if (mine.peer.slot)
            slot_give(mine.peer.slot);
        if (st) {
            MPL_free(st->sync.peer);
            MPL_free(st->posted);
        }
        MPL_free(st);
        MPL_free(all);
        nodes_free(ns);
        MPIDI_COMM(comm, cx_mcoll) = &comm_unfit;
        return 0;
    }
    st->nodes = ns;
    st->sync.size = ns->size[ns->node];
    st->sync.rank = ns->local;
    for (int j = 0; j < st->sync.size; j++)
        st->sync.peer[j] = all[ns->rank[ns->first[ns->node] + j]].peer;
    MPL_free(all);
    MPIDI_COMM(comm, cx_mcoll) = st;
    return 1;
}

static void register_pvars(void)
{
    static int registered;
    MPIDI_PIP_mcoll_global_t *g = &MPIDI_PIP_mcoll_global;
    static MPIDI_PIP_pvar_t pvars[] = {
        {"cx_mcoll_bcast", NULL, "PiP-MColl: MPI_Bcast calls run by posted addresses"},
        {"cx_mcoll_gather", NULL, "PiP-MColl: MPI_Gather calls run by posted addresses"},
        {"cx_mcoll_scatter", NULL, "PiP-MColl: MPI_Scatter calls run by posted addresses"},
        {"cx_mcoll_reduce", NULL, "PiP-MColl: MPI_Reduce calls run by posted addresses"},
        {"cx_mcoll_allreduce", NULL, "PiP-MColl: MPI_Allreduce calls run by posted addresses"},
        {"cx_mcoll_allgather", NULL, "PiP-MColl: MPI_Allgather calls run by posted addresses"},
        {"cx_mcoll_bytes", NULL,
         "PiP-MColl: bytes this rank read from or wrote to local peers' buffers"},
        {"cx_mcoll_nodes_scatter", NULL,
         "PiP-MColl: of cx_mcoll_scatter, calls across nodes ((P+1)-ary tree)"},
        {"cx_mcoll_nodes_allgather", NULL,
         "PiP-MColl: of cx_mcoll_allgather, calls across nodes (Bruck, base P+1)"},
        {"cx_mcoll_nodes_allreduce", NULL,
         "PiP-MColl: of cx_mcoll_allreduce, calls across nodes (Bruck or P rings)"},
        {"cx_mcoll_internode_steps", NULL,
         "PiP-MColl: internode steps of all calls across nodes"},
        {"cx_mcoll_internode_steps_last", NULL,
         "PiP-MColl: internode steps of the last call across nodes (ceil(log_{P+1} N) for the "
         "scatter and the Bruck algorithms)"},
    };
    if (registered++)
        return;
    for (int i = 0; i < MPIDI_PIP_MCOLL_NCOLL; i++)
        pvars[i].counter = &g->runs[i];
    pvars[MPIDI_PIP_MCOLL_NCOLL].counter = &g->bytes;
    pvars[MPIDI_PIP_MCOLL_NCOLL + 1].counter = &g->nodes_runs[MPIDI_PIP_MCOLL_SCATTER];
    pvars[MPIDI_PIP_MCOLL_NCOLL + 2].counter = &g->nodes_runs[MPIDI_PIP_MCOLL_ALLGATHER];
    pvars[MPIDI_PIP_MCOLL_NCOLL + 3].counter = &g->nodes_runs[MPIDI_PIP_MCOLL_ALLREDUCE];
    pvars[MPIDI_PIP_MCOLL_NCOLL + 4].counter = &g->steps;
    pvars[MPIDI_PIP_MCOLL_NCOLL + 5].counter = &g->last_steps;
    MPIDI_PIP_register_counters("CH4_CX_MCOLL", pvars, sizeof(pvars) / sizeof(pvars[0]));
}
