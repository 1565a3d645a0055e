/*
 * MPICH-CX: PiP single-copy transfers (see pip_init.c for the set-up).
 *
 * Local ranks that are PiP tasks of one hosting process share its address
 * space.  For a message of at least MPIR_CVAR_CH4_CX_PIP_P2P_THRESHOLD bytes
 * between two of them the sender passes its buffer's address in the IPC
 * rendezvous header, the receiver copies straight from it once matched and
 * acknowledges, and the send completes: one copy instead of the POSIX path's
 * two.  A large copy is a task that ranks idle in MPI, the sender among
 * them, take chunks of (CAB-MPI, pip_steal.c).  Windows made by MPI_Win_create
 * and MPI_Win_create_dynamic are reached directly the same way (pip_win.c).
 */
#ifndef PIP_POST_H_INCLUDED
#define PIP_POST_H_INCLUDED

#include "ch4_impl.h"
#include "ipc_types.h"
#include "pip_steal_hooks.h"
#include "pip_daps_hooks.h"
#include "pip_win_reach.h"

/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

categories :
    - name : CH4_CX_PIP
      description : MPICH-CX PiP single-copy transfers

cvars:
    - name        : MPIR_CVAR_CH4_CX_PIP_ENABLE
      category    : CH4_CX_PIP
      alt-env     : MPIR_CVAR_CH4_IPC_PIP_ENABLE
      type        : int
      default     : 1
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        Under mpiexec -pip: 1 lets local ranks that are tasks of one process
        copy messages of at least MPIR_CVAR_CH4_CX_PIP_P2P_THRESHOLD bytes
        directly from the sender's buffer and access created and dynamic windows
        directly; 0 keeps the POSIX shared-memory path. No effect on ranks
        that are ordinary processes.

    - name        : MPIR_CVAR_CH4_CX_PIP_P2P_THRESHOLD
      category    : CH4_CX_PIP
      alt-env     : MPIR_CVAR_CH4_IPC_PIP_P2P_THRESHOLD
      type        : int
      default     : 32768
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        Under mpiexec -pip: point-to-point messages of at least this many
        bytes between tasks of one process take the single-copy path (the
        receiver copies from the sender's buffer); smaller ones the POSIX
        eager path. 0 sends every message by single copy.

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

typedef struct {
    size_t threshold;           /* MPIR_AINT_MAX while inactive */
    uint8_t *same_space;        /* by world rank: 1 if that rank is a task of this process */
    int world_size;
    int n_peers;                /* local ranks other than this one in this process */
    MPIDI_PIP_space_t space;    /* zero while inactive */
    unsigned long long copies;  /* single-copy receives */
    unsigned long long bytes;   /* bytes they copied */
    unsigned long long windows; /* windows with directly accessed peers */
    unsigned long long split_windows;   /* those with peers in other processes too */
} MPIDI_PIP_global_t;

extern MPIDI_PIP_global_t MPIDI_PIP_global;

/* The module's MPI_T counters: unsigned long long, read-only, continuous. */
typedef struct {
    const char *name;
    unsigned long long *counter;
    const char *desc;
} MPIDI_PIP_pvar_t;
void MPIDI_PIP_register_counters(const char *category, const MPIDI_PIP_pvar_t * pvars, int n);

int MPIDI_PIP_init_local(void);
int MPIDI_PIP_init_world(void);
int MPIDI_PIP_finalize(void);
const char *MPIDI_PIP_describe(void);

/* CAB-MPI work stealing (pip_steal.c) */
int MPIDI_PIP_numa_node_self(void);
int MPIDI_PIP_steal_init_local(void);
uintptr_t MPIDI_PIP_steal_prepare(void);
int MPIDI_PIP_steal_init_world(const uintptr_t * peers);
void MPIDI_PIP_steal_finalize(void);
const char *MPIDI_PIP_steal_describe(void);
/* Daps progress stealing (pip_daps.c) */
int MPIDI_PIP_daps_init_local(void);
uintptr_t MPIDI_PIP_daps_prepare(void);
int MPIDI_PIP_daps_init_world(const uintptr_t * peers);
void MPIDI_PIP_daps_finalize(void);
const char *MPIDI_PIP_daps_describe(void);
/* PiP-MColl collectives (pip_mcoll_comm.c) */
int MPIDI_PIP_mcoll_init_local(void);
void MPIDI_PIP_mcoll_init_world(void);
void MPIDI_PIP_mcoll_finalize(void);
const char *MPIDI_PIP_mcoll_describe(void);
bool MPIDI_PIP_steal_recv(const MPIDI_IPC_hdr * hdr, MPIR_Request * rreq, size_t recv_data_sz);

/* Created and dynamic windows (pip_win.c; who is reached: pip_win_reach.h) */
int MPIDI_PIP_mpi_win_create_dynamic_hook(MPIR_Win * win);
void MPIDI_PIP_win_map(MPIDIG_win_shared_info_t * entry, const MPIDI_PIP_win_info_t * info);
void MPIDI_PIP_win_mark(MPIR_Win * win, MPIDI_PIP_win_reach_t reach);

/* Whether a rank published this space token at window creation. */
MPL_STATIC_INLINE_PREFIX bool MPIDI_PIP_is_my_space(const MPIDI_PIP_space_t * s)
{
    return MPIDI_PIP_same_space(&MPIDI_PIP_global.space, s);
}

/* Whether rank of comm is a task of this process: a send to it passes its
 * buffer by address, whatever the layout (nothing is mapped or attached). */
MPL_STATIC_INLINE_PREFIX bool MPIDI_PIP_any_layout(int rank, MPIR_Comm * comm)
{
    if (!MPIDI_PIP_global.n_peers)
        return false;
    int lpid = MPIDIU_rank_to_lpid(rank, comm);
    return lpid >= 0 && lpid < MPIDI_PIP_global.world_size && MPIDI_PIP_global.same_space[lpid];
}

/* Sender side: the PiP handle for a send of data_sz bytes at vaddr to rank,
 * or MPIDI_IPCI_TYPE__NONE (too small, MPI_BOTTOM, or another process). */
MPL_STATIC_INLINE_PREFIX void MPIDI_PIP_get_ipc_attr(const void *vaddr, uintptr_t data_sz,
                                                     int rank, MPIR_Comm * comm,
                                                     MPIDI_IPCI_ipc_attr_t * ipc_attr)
{
    if (data_sz >= MPIDI_PIP_global.threshold && vaddr != MPI_BOTTOM &&
        MPIDI_PIP_any_layout(rank, comm)) {
        ipc_attr->ipc_type = MPIDI_IPCI_TYPE__PIP;
        ipc_attr->ipc_handle.pip.addr = (uintptr_t) vaddr;
        ipc_attr->threshold.send_lmt_sz = MPIDI_PIP_global.threshold;
    }
}

/* This rank's entry for the MPI_Win_create exchange. */
MPL_STATIC_INLINE_PREFIX MPIDI_PIP_win_info_t MPIDI_PIP_win_info(MPIR_Win * win)
{
    MPIDI_PIP_win_info_t info = { MPIDI_PIP_global.space, win->base };
    return info;
}

/* Receiver, once matched: true if it made the copy of recv_data_sz bytes
 * as a task idle local ranks may take chunks of, false to copy alone. */
MPL_STATIC_INLINE_PREFIX bool MPIDI_PIP_recv_shared_copy(MPIDI_IPC_hdr * hdr, MPIR_Request * rreq,
                                                         size_t recv_data_sz)
{
#ifdef MPIDI_CX_STEAL
    return MPIDI_PIP_steal_recv(hdr, rreq, recv_data_sz);
#else
    return false;
#endif
}

/* Receiver side, after the copy. Counters may be bumped from several VCIs. */
MPL_STATIC_INLINE_PREFIX void MPIDI_PIP_count_copy(size_t bytes)
{
    __atomic_fetch_add(&MPIDI_PIP_global.copies, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&MPIDI_PIP_global.bytes, bytes, __ATOMIC_RELAXED);
}

#endif /* PIP_POST_H_INCLUDED */
