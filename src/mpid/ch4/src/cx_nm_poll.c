/*
 * MPICH-CX: netmod polls skipped while shared memory delivers (see
 * cx_nm_poll.h): the CVAR and the pvar.
 */
#include "mpidimpl.h"
#include "cx_nm_poll.h"

/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

cvars:
    - name        : MPIR_CVAR_CH4_CX_NM_POLL_SKIP
      category    : CH4_CX
      type        : int
      default     : 16
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        While the last shared-memory poll of a VCI received a message and
        its netmod's last poll found nothing, progress skips the netmod, at
        most this many calls in a row (0 to 1000000). 0 polls the netmod on
        every progress call, as MPICH does. The netmod is polled on every
        call whenever shared memory is idle.

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

cx_poll_skip_t MPIDI_CX_nm_poll[MPIDI_CH4_MAX_VCIS];
int MPIDI_CX_nm_poll_max_skip;

int MPIDI_CX_nm_poll_init(void)
{
    int skip = MPIR_CVAR_CH4_CX_NM_POLL_SKIP;
    if (skip < 0 || skip > 1000000)
        return MPIDI_CX_cvar_invalid_int("MPIR_CVAR_CH4_CX_NM_POLL_SKIP", skip, "0 to 1000000");
    MPIDI_CX_nm_poll_max_skip = skip;
    return MPI_SUCCESS;
}

static void get_skipped(void *addr, void *obj, int count, void *buf)
{
    unsigned long long sum = 0;
    for (int i = 0; i < MPIDI_CH4_MAX_VCIS; i++)
        sum += atomic_load_explicit(&MPIDI_CX_nm_poll[i].skipped_total, memory_order_relaxed);
    *(unsigned long long *) buf = sum;
}

void MPIDI_CX_nm_poll_register_pvars(void)
{
    MPIR_T_PVAR_REGISTER_impl(MPI_T_PVAR_CLASS_COUNTER, MPI_UNSIGNED_LONG_LONG,
                              "cx_nm_polls_skipped", NULL, 1, MPI_T_ENUM_NULL,
                              MPI_T_VERBOSITY_USER_BASIC, MPI_T_BIND_NO_OBJECT,
                              MPIR_T_PVAR_FLAG_READONLY | MPIR_T_PVAR_FLAG_CONTINUOUS,
                              get_skipped, NULL, "CH4_CX",
                              "netmod polls skipped because shared memory was delivering "
                              "(MPIR_CVAR_CH4_CX_NM_POLL_SKIP)");
}
