/*
 * MPICH-CX: netmod polls skipped while shared memory delivers or the
 * netmod is quiet (see cx_nm_poll.h): the CVARs and the pvars.
 */
#include "mpidimpl.h"
#include "cx_cvar.h"
#include "cx_nm_poll.h"
#include <time.h>

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
        every progress call, as MPICH does. While shared memory is idle the
        netmod is polled on every call, unless it is quiet
        (MPIR_CVAR_CH4_CX_NM_POLL_QUIET).

    - name        : MPIR_CVAR_CH4_CX_NM_POLL_QUIET
      category    : CH4_CX
      type        : int
      default     : 1000
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        Once a VCI's netmod polls have found nothing for this many
        microseconds, the netmod is quiet: progress then skips it even while
        shared memory is idle, at most MPIR_CVAR_CH4_CX_NM_POLL_SKIP calls
        in a row, until a netmod poll finds work (0 to 60000000). 0: the
        netmod is never quiet, and is polled on every call while shared
        memory is idle.

    - name        : MPIR_CVAR_CH4_CX_NM_POLL_PAUSE
      category    : CH4_CX
      type        : int
      default     : 1
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        After a progress call that skipped the netmod and whose
        shared-memory poll found nothing, progress executes this many CPU
        relax instructions (x86 pause, about 10 ns each on recent Xeons)
        before it returns (0 to 10000). The skipped netmod poll used to
        space the polls of an idle queue; polled back to back, the queue's
        cache lines slow the sending rank down. 0: no pause.

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

cx_poll_skip_t MPIDI_CX_nm_poll[MPIDI_CH4_MAX_VCIS];
int MPIDI_CX_nm_poll_max_skip;
long long MPIDI_CX_nm_poll_quiet_ns;
int MPIDI_CX_nm_poll_pause;

/* Read once per CX_POLL_SKIP_CLOCK_EVERY empty netmod polls (vDSO, no
 * system call). */
long long MPIDI_CX_nm_poll_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long) ts.tv_sec * 1000000000LL + ts.tv_nsec + 1;       /* never 0 */
}

int MPIDI_CX_nm_poll_init(void)
{
    int skip = MPIR_CVAR_CH4_CX_NM_POLL_SKIP;
    if (skip < 0 || skip > 1000000)
        return MPIDI_CX_cvar_invalid_int("MPIR_CVAR_CH4_CX_NM_POLL_SKIP", skip, "0 to 1000000");
    int quiet = MPIR_CVAR_CH4_CX_NM_POLL_QUIET;
    if (quiet < 0 || quiet > 60000000)
        return MPIDI_CX_cvar_invalid_int("MPIR_CVAR_CH4_CX_NM_POLL_QUIET", quiet,
                                         "0 to 60000000 (microseconds)");
    int pause = MPIR_CVAR_CH4_CX_NM_POLL_PAUSE;
    if (pause < 0 || pause > 10000)
        return MPIDI_CX_cvar_invalid_int("MPIR_CVAR_CH4_CX_NM_POLL_PAUSE", pause, "0 to 10000");
    MPIDI_CX_nm_poll_max_skip = skip;
    MPIDI_CX_nm_poll_pause = pause;
    MPIDI_CX_nm_poll_quiet_ns = quiet * 1000LL;
    return MPI_SUCCESS;
}

#define NM_POLL_PVAR_GETTER(name_, field_)                               \
    static void name_(void *addr, void *obj, int count, void *buf)      \
    {                                                                   \
        unsigned long long sum = 0;                                     \
        for (int i = 0; i < MPIDI_CH4_MAX_VCIS; i++)                    \
            sum += atomic_load_explicit(&MPIDI_CX_nm_poll[i].field_, memory_order_relaxed); \
        *(unsigned long long *) buf = sum;                              \
    }
NM_POLL_PVAR_GETTER(get_skipped, skipped_total)
    NM_POLL_PVAR_GETTER(get_quiet_skipped, quiet_skipped_total)
    NM_POLL_PVAR_GETTER(get_idle_pauses, idle_pauses_total)
void MPIDI_CX_nm_poll_register_pvars(void)
{
    MPIR_T_PVAR_REGISTER_impl(MPI_T_PVAR_CLASS_COUNTER, MPI_UNSIGNED_LONG_LONG,
                              "cx_nm_polls_skipped", NULL, 1, MPI_T_ENUM_NULL,
                              MPI_T_VERBOSITY_USER_BASIC, MPI_T_BIND_NO_OBJECT,
                              MPIR_T_PVAR_FLAG_READONLY | MPIR_T_PVAR_FLAG_CONTINUOUS,
                              get_skipped, NULL, "CH4_CX",
                              "netmod polls skipped because shared memory was delivering "
                              "or the netmod was quiet (MPIR_CVAR_CH4_CX_NM_POLL_SKIP)");
    MPIR_T_PVAR_REGISTER_impl(MPI_T_PVAR_CLASS_COUNTER, MPI_UNSIGNED_LONG_LONG,
                              "cx_nm_polls_skipped_quiet", NULL, 1, MPI_T_ENUM_NULL,
                              MPI_T_VERBOSITY_USER_BASIC, MPI_T_BIND_NO_OBJECT,
                              MPIR_T_PVAR_FLAG_READONLY | MPIR_T_PVAR_FLAG_CONTINUOUS,
                              get_quiet_skipped, NULL, "CH4_CX",
                              "of cx_nm_polls_skipped, those skipped while shared memory "
                              "was idle too: the netmod was quiet (MPIR_CVAR_CH4_CX_NM_POLL_QUIET)");
    MPIR_T_PVAR_REGISTER_impl(MPI_T_PVAR_CLASS_COUNTER, MPI_UNSIGNED_LONG_LONG,
                              "cx_nm_poll_pauses", NULL, 1, MPI_T_ENUM_NULL,
                              MPI_T_VERBOSITY_USER_BASIC, MPI_T_BIND_NO_OBJECT,
                              MPIR_T_PVAR_FLAG_READONLY | MPIR_T_PVAR_FLAG_CONTINUOUS,
                              get_idle_pauses, NULL, "CH4_CX",
                              "pauses after an empty shared-memory poll in a progress call "
                              "that skipped the netmod (MPIR_CVAR_CH4_CX_NM_POLL_PAUSE)");
}
