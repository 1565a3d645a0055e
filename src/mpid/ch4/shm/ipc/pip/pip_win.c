/*
 * MPICH-CX: RMA windows between PiP tasks.  The local peers of a window that
 * are tasks of this process have their memory accessed directly at their
 * own addresses: MPI_Win_create's bases (ipc_win.c calls the helpers below
 * around its exchange) and a dynamic window's attached regions
 * (MPIDI_PIP_mpi_win_create_dynamic_hook).  When the node's ranks are tasks
 * of several processes (more than 15 ranks, MPMD), the others are reached
 * by active messages (pip_rma.h).  Every rank sees the same tokens, so all
 * decide alike (pip_win_reach.h; the shm hooks are collective).  The pvars
 * cx_pip_windows and cx_pip_split_windows count these windows.
 */
#include "mpidimpl.h"
#include "ipc_noinline.h"
#include "ipc_types.h"
#include "pip_post.h"
#include "pip_rma.h"

/* A peer's shared-table entry: its base if it is a task of this process,
 * else marked unmapped (size 0, so MPI_Win_shared_query offers nothing). */
void MPIDI_PIP_win_map(MPIDIG_win_shared_info_t * entry, const MPIDI_PIP_win_info_t * info)
{
    if (MPIDI_PIP_is_my_space(&info->space)) {
        entry->shm_base_addr = info->base;
        return;
    }
    entry->size = 0;
    entry->shm_base_addr = NULL;
    entry->ipc_mapped_device = MPIDI_PIP_WIN_UNMAPPED;
}

/* After the POSIX shm window hook, for a window with directly accessed
 * peers: count it, and send operations on the unmapped ones to active
 * messages. */
void MPIDI_PIP_win_mark(MPIR_Win * win, MPIDI_PIP_win_reach_t reach)
{
    if (reach == MPIDI_PIP_WIN_NONE || !(MPIDI_WIN(win, winattr) & MPIDI_WINATTR_SHM_ALLOCATED))
        return;
    __atomic_fetch_add(&MPIDI_PIP_global.windows, 1, __ATOMIC_RELAXED);
    if (reach == MPIDI_PIP_WIN_SOME) {
        MPIDI_WIN(win, winattr) |= MPIDI_WINATTR_CX_SOME_UNMAPPED;
        __atomic_fetch_add(&MPIDI_PIP_global.split_windows, 1, __ATOMIC_RELAXED);
    }
}

/* A dynamic window's displacements are addresses in the target's address
 * space.  For PiP tasks of this process those addresses are valid here
 * too, so those targets are accessed directly: base MPI_BOTTOM,
 * displacement unit 1.  Collective over the node communicator. */
int MPIDI_PIP_mpi_win_create_dynamic_hook(MPIR_Win * win)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_Comm *shm_comm_ptr = win->comm_ptr->node_comm;
    MPIR_Errflag_t errflag = MPIR_ERR_NONE;
    MPIDI_PIP_win_info_t *infos = NULL;

    MPIR_FUNC_ENTER;
    MPIR_CHKLMEM_DECL(1);

    if (!shm_comm_ptr)
        goto fn_exit;
    int n = shm_comm_ptr->local_size;
    MPIR_CHKLMEM_MALLOC(infos, MPIDI_PIP_win_info_t *, sizeof(MPIDI_PIP_win_info_t) * n,
                        mpi_errno, "PiP address spaces", MPL_MEM_RMA);
    infos[shm_comm_ptr->rank].space = MPIDI_PIP_global.space;
    infos[shm_comm_ptr->rank].base = MPI_BOTTOM;
    mpi_errno = MPIR_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, infos,
                               sizeof(MPIDI_PIP_win_info_t), MPI_BYTE, shm_comm_ptr, &errflag);
    MPIR_ERR_CHECK(mpi_errno);
    MPIDI_PIP_win_reach_t reach = MPIDI_PIP_win_reach(infos, sizeof(*infos), n);
    if (reach == MPIDI_PIP_WIN_NONE)
        goto fn_exit;

    MPIDIG_win_shared_info_t *table = MPL_calloc(n, sizeof(*table), MPL_MEM_RMA);
    MPIR_ERR_CHKANDJUMP(!table, mpi_errno, MPI_ERR_OTHER, "**nomem");
    for (int i = 0; i < n; i++) {
        table[i].size = MPIR_AINT_MAX;
        table[i].disp_unit = 1;
        table[i].ipc_mapped_device = -1;
        MPIDI_PIP_win_map(&table[i], &infos[i]);
    }
    MPIDIG_WIN(win, shared_table) = table;
    mpi_errno = MPIDI_POSIX_shm_win_init_hook(win);
    MPIR_ERR_CHECK(mpi_errno);
    MPIDI_PIP_win_mark(win, reach);

  fn_exit:
    MPIR_CHKLMEM_FREEALL();
    MPIR_FUNC_EXIT;
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}
