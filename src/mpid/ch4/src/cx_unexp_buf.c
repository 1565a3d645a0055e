/*
 * MPICH-CX: the small-cell pools for unexpected eager messages, their CVAR
 * and their MPI_T counter (see cx_unexp_buf.h).
 */
#include "mpidimpl.h"
#include "cx_cvar.h"
#include "cx_unexp_buf.h"

/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

cvars:
    - name        : MPIR_CVAR_CH4_CX_UNEXP_SMALL_BUFFER_SIZE
      category    : CH4_CX_MATCHING
      alt-env     : MPIR_CVAR_CH4_AM_UNEXP_SMALL_BUFFER_SIZE
      type        : int
      default     : 256
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        An unexpected eager message of at most this many bytes is buffered
        in a cell of this size from a per-VCI pool, instead of a pack buffer
        of MPIR_CVAR_CH4_AM_PACK_BUFFER_SIZE bytes each (which costs a fresh
        page per message when thousands are queued). 0: pack buffers for
        every message, as MPICH does. At most
        MPIR_CVAR_CH4_AM_PACK_BUFFER_SIZE.

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

/* Cells per block of the small pool (a block of 256-byte cells is 68 KiB). */
#define SMALL_CELLS_PER_BLOCK 256

MPIDIG_cx_unexp_buf_t MPIDIG_cx_unexp_buf[MPIDI_CH4_MAX_VCIS];
MPI_Aint MPIDIG_cx_unexp_small_size;    /* 0 until init: no message is small */

static void get_small_buffers(void *addr, void *obj, int count, void *buf)
{
    unsigned long long v = 0;
    for (int vci = 0; vci < MPIDI_CH4_MAX_VCIS; vci++)
        v += MPIDIG_cx_unexp_buf[vci].small_buffers;    /* statistics: no lock */
    *(unsigned long long *) buf = v;
}

int MPIDIG_cx_unexp_buf_init(MPIDU_genq_malloc_fn malloc_fn, MPIDU_genq_free_fn free_fn)
{
    int mpi_errno = MPI_SUCCESS;
    static int pvar_registered;
    int size = MPIR_CVAR_CH4_CX_UNEXP_SMALL_BUFFER_SIZE;

    MPIDIG_cx_unexp_small_size = 0;
    if (size < 0 || size > MPIR_CVAR_CH4_AM_PACK_BUFFER_SIZE) {
        char valid[96];
        snprintf(valid, sizeof(valid), "0 (off) to %d (MPIR_CVAR_CH4_AM_PACK_BUFFER_SIZE)",
                 MPIR_CVAR_CH4_AM_PACK_BUFFER_SIZE);
        return MPIDI_CX_cvar_invalid_int("MPIR_CVAR_CH4_CX_UNEXP_SMALL_BUFFER_SIZE", size, valid);
    }
    for (int vci = 0; vci < MPIDI_global.n_vcis; vci++) {
        MPIDIG_cx_unexp_buf[vci].pool = NULL;
        MPIDIG_cx_unexp_buf[vci].small_buffers = 0;
        if (size == 0)
            continue;
        int cell = (size + 15) & ~15;   /* keeps the pool's cell headers aligned */
        mpi_errno = MPIDU_genq_private_pool_create_unsafe(cell, SMALL_CELLS_PER_BLOCK,
                                                          0 /* unlimited */ , malloc_fn, free_fn,
                                                          &MPIDIG_cx_unexp_buf[vci].pool);
        MPIR_ERR_CHECK(mpi_errno);
    }
    MPIDIG_cx_unexp_small_size = size;

    if (!pvar_registered++)
        MPIR_T_PVAR_REGISTER_impl(MPI_T_PVAR_CLASS_COUNTER, MPI_UNSIGNED_LONG_LONG,
                                  "cx_unexp_small_buffers", NULL, 1, MPI_T_ENUM_NULL,
                                  MPI_T_VERBOSITY_USER_BASIC, MPI_T_BIND_NO_OBJECT,
                                  MPIR_T_PVAR_FLAG_READONLY | MPIR_T_PVAR_FLAG_CONTINUOUS,
                                  get_small_buffers, NULL, "CH4_CX_MATCHING",
                                  "unexpected eager messages buffered in small cells "
                                  "(MPIR_CVAR_CH4_CX_UNEXP_SMALL_BUFFER_SIZE) instead of "
                                  "pack buffers");
  fn_exit:
    return mpi_errno;
  fn_fail:
    MPIDIG_cx_unexp_buf_finalize();
    goto fn_exit;
}

void MPIDIG_cx_unexp_buf_finalize(void)
{
    MPIDIG_cx_unexp_small_size = 0;
    for (int vci = 0; vci < MPIDI_CH4_MAX_VCIS; vci++) {
        if (MPIDIG_cx_unexp_buf[vci].pool)
            MPIDU_genq_private_pool_destroy_unsafe(MPIDIG_cx_unexp_buf[vci].pool);
        MPIDIG_cx_unexp_buf[vci].pool = NULL;
    }
}
