# Copyright (C) MPICH-CX contributors. See COPYRIGHT in top-level directory.
# Sourced by test/mpi/run: netmod polls skipped while shared memory delivers
# (doc/user/nm-poll-skip.md): 4 ranks as two
# pretend nodes, so both transports carry traffic at once.
needs_shm mpi/nm-poll-skip || return 0
nm_skip() {   # NAME ARG ENV...
    local name=$1 arg=$2; shift 2
    t_run "$name" 180 bash -c 'set -o pipefail; "$@" | tee /dev/stderr | grep -x "No Errors" >/dev/null' _ \
        env MPIR_CVAR_NUM_CLIQUES=2 FI_PROVIDER=tcp "$@" "${launch[@]}" -n 4 "$work/mpi/nm_poll_skip" "$arg"
}
nm_skip mpi/nm-poll-skip skips
nm_skip mpi/nm-poll-skip-1 skips MPIR_CVAR_CH4_CX_NM_POLL_SKIP=1
nm_skip mpi/nm-poll-skip-off noskips MPIR_CVAR_CH4_CX_NM_POLL_SKIP=0
nm_skip mpi/nm-poll-quiet-1 skips MPIR_CVAR_CH4_CX_NM_POLL_QUIET=1
nm_skip mpi/nm-poll-quiet-off noquiet MPIR_CVAR_CH4_CX_NM_POLL_QUIET=0
nm_skip mpi/nm-poll-pause-off nopause MPIR_CVAR_CH4_CX_NM_POLL_PAUSE=0
nm_skip mpi/nm-poll-pause-long skips MPIR_CVAR_CH4_CX_NM_POLL_PAUSE=200
# Bad values of its CVARs.
bad_cvar mpi/cvar/bad-nm-poll-skip MPIR_CVAR_CH4_CX_NM_POLL_SKIP -1 "Invalid value '-1' of MPIR_CVAR_CH4_CX_NM_POLL_SKIP; valid values: 0 to 1000000"
bad_cvar mpi/cvar/bad-nm-poll-pause MPIR_CVAR_CH4_CX_NM_POLL_PAUSE 10001 "Invalid value '10001' of MPIR_CVAR_CH4_CX_NM_POLL_PAUSE; valid values: 0 to 10000"
bad_cvar mpi/cvar/bad-nm-poll-quiet MPIR_CVAR_CH4_CX_NM_POLL_QUIET 70000000 "Invalid value '70000000' of MPIR_CVAR_CH4_CX_NM_POLL_QUIET; valid values: 0 to 60000000 (microseconds)"
