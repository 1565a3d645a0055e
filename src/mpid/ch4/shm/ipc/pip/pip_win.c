/*
 * MPICH-CX: RMA windows between PiP tasks of one process.  When every rank of
 * a window's node communicator is a task of this process, the peers' memory
 * is accessed directly at the peers' own addresses: MPI_Win_create's bases
 * (ipc_win.c calls the helpers below around its exchange) and a dynamic
 * window's attached regions (MPIDI_PIP_mpi_win_create_dynamic_hook).  Every
 * rank sees the same tokens, so all decide alike (the shm hooks are
 * collective).  The pvar cx_pip_windows counts these windows.
 */
#include "mpidimpl.h"
#include "ipc_noinline.h"
#include "ipc_types.h"
#include "pip_post.h"

/* Whether every entry of ipc_win.c's exchanged table (n entries, stride
 * bytes apart, first at first) is a task of this process. */
bool MPIDI_PIP_win_all_mine(const MPIDI_PIP_win_info_t * first, size_t stride, int n)
{
    bool all_mine = true;
    for (int i = 0; i < n; i++) {
        const MPIDI_PIP_win_info_t *info =
            (const MPIDI_PIP_win_info_t *) ((const char *) first + i * stride);
        if (!MPIDI_PIP_is_my_space(&info->space))
            all_mine = false;
    }
    return all_mine;
}

/* After the POSIX shm window hook, for a window whose peers are reached
 * directly. */
void MPIDI_PIP_win_count(MPIR_Win * win)
{
    if (MPIDI_WIN(win, winattr) & MPIDI_WINATTR_SHM_ALLOCATED)
        __atomic_fetch_add(&MPIDI_PIP_global.windows, 1, __ATOMIC_RELAXED);
}

/* A dynamic window's displacements are addresses in the target's address
 * space.  When every rank of the node is a PiP task of this process those
 * addresses are valid here too, so the local targets are accessed directly:
 * base MPI_BOTTOM, displacement unit 1, for everyone.  Collective over the
 * node communicator. */
int MPIDI_PIP_mpi_win_create_dynamic_hook(MPIR_Win * win)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_Comm *shm_comm_ptr = win->comm_ptr->node_comm;
    MPIR_Errflag_t errflag = MPIR_ERR_NONE;
    MPIDI_PIP_space_t *spaces = NULL;
    bool all_mine = true;

    MPIR_FUNC_ENTER;
    MPIR_CHKLMEM_DECL(1);

    if (!shm_comm_ptr)
        goto fn_exit;
    MPIR_CHKLMEM_MALLOC(spaces, MPIDI_PIP_space_t *,
                        sizeof(MPIDI_PIP_space_t) * shm_comm_ptr->local_size, mpi_errno,
                        "PiP address spaces", MPL_MEM_RMA);
    spaces[shm_comm_ptr->rank] = MPIDI_PIP_global.space;
    mpi_errno = MPIR_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, spaces,
                               sizeof(MPIDI_PIP_space_t), MPI_BYTE, shm_comm_ptr, &errflag);
    MPIR_ERR_CHECK(mpi_errno);
    for (int i = 0; i < shm_comm_ptr->local_size; i++)
        if (!MPIDI_PIP_is_my_space(&spaces[i]))
            all_mine = false;
    if (!all_mine)
        goto fn_exit;

    MPIDIG_WIN(win, shared_table) =
        MPL_calloc(shm_comm_ptr->local_size, sizeof(MPIDIG_win_shared_info_t), MPL_MEM_RMA);
    MPIR_ERR_CHKANDJUMP(!MPIDIG_WIN(win, shared_table), mpi_errno, MPI_ERR_OTHER, "**nomem");
    for (int i = 0; i < shm_comm_ptr->local_size; i++) {
        MPIDIG_WIN(win, shared_table)[i].size = MPIR_AINT_MAX;
        MPIDIG_WIN(win, shared_table)[i].disp_unit = 1;
        MPIDIG_WIN(win, shared_table)[i].shm_base_addr = MPI_BOTTOM;
        MPIDIG_WIN(win, shared_table)[i].ipc_mapped_device = -1;
    }
    mpi_errno = MPIDI_POSIX_shm_win_init_hook(win);
    MPIR_ERR_CHECK(mpi_errno);
    MPIDI_PIP_win_count(win);

  fn_exit:
    MPIR_CHKLMEM_FREEALL();
    MPIR_FUNC_EXIT;
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}
