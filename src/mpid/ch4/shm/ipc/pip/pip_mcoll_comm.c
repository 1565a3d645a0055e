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
      default     : 16384
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        pip_mcoll MPI_Allreduce: up to this many bytes every rank reduces
        all inputs itself (one meeting less); above it each rank reduces
        its part of the vector and copies the others' parts (0 or more).

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
    if (MPIR_CVAR_CH4_CX_MCOLL_PART_MIN < 1)
        return MPIDI_CX_cvar_invalid_int("MPIR_CVAR_CH4_CX_MCOLL_PART_MIN",
                                         MPIR_CVAR_CH4_CX_MCOLL_PART_MIN,
                                         "a size in bytes, 1 or more");
    return MPI_SUCCESS;
}

/* Once PiP knows its peers (MPIDI_PIP_init_world). */
void MPIDI_PIP_mcoll_init_world(void)
{
#ifdef MPIDI_CX_MCOLL
    MPIDI_PIP_mcoll_on = MPIDI_PIP_global.n_peers > 0;
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

int MPIR_CX_mcoll_comm_ok(MPIR_Comm * comm)
{
    void *st = MPIDI_COMM(comm, cx_mcoll);
    if (st)
        return st != &comm_unfit;
    if (!MPIDI_PIP_mcoll_on)
        return 0;       /* not cached: PiP may not know its peers yet */
    bool fit = comm->comm_kind == MPIR_COMM_KIND__INTRACOMM && comm->local_size > 1;
    for (int r = 0; fit && r < comm->local_size; r++)
        fit = r == comm->rank || MPIDI_PIP_any_layout(r, comm);
    MPIDI_COMM(comm, cx_mcoll) = fit ? &comm_fit : &comm_unfit;
    return fit;
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
        if (posix_memalign((void **) &p, sizeof(MPIDI_PIP_mcoll_slot_t), sizeof(*p)))
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

    MPIR_Assert(st != (void *) &comm_unfit);
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

void *MPIDI_PIP_mcoll_tmp(MPIDI_PIP_mcoll_comm_t * st, size_t size)
{
    if (size > st->tmp_size) {
        MPL_free(st->tmp);
        st->tmp = MPL_malloc(size, MPL_MEM_COLL);
        st->tmp_size = st->tmp ? size : 0;
    }
    return st->tmp;
}

void MPIDI_PIP_mcoll_comm_free(MPIR_Comm * comm)
{
    MPIDI_PIP_mcoll_comm_t *st = MPIDI_COMM(comm, cx_mcoll);
    MPIDI_COMM(comm, cx_mcoll) = NULL;
    if (!st || st == (void *) &comm_fit || st == (void *) &comm_unfit)
        return;
    slot_give(st->sync.peer[st->sync.rank].slot);
    MPL_free(st->sync.peer);
    MPL_free(st->posted);
    MPL_free(st->tmp);
    MPL_free(st);
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
    };
    if (registered++)
        return;
    for (int i = 0; i < MPIDI_PIP_MCOLL_NCOLL; i++)
        pvars[i].counter = &g->runs[i];
    pvars[MPIDI_PIP_MCOLL_NCOLL].counter = &g->bytes;
    MPIDI_PIP_register_counters("CH4_CX_MCOLL", pvars, sizeof(pvars) / sizeof(pvars[0]));
}
