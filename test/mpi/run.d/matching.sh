# Copyright (C) MPICH-CX contributors. See COPYRIGHT in top-level directory.
# Sourced by test/mpi/run: tag matching, more outstanding requests than
# MPICH's pool holds, and the unexpected-message buffers.

# Tag matching (doc/user/matching.md): MPI's matching rules through MPIDIG's
# queues, constant-time (hash, the default: short lists up to 64, always the
# tables, and moves into the tables past 2) and MPICH's lists, over shared
# memory and over OFI's active-message path (tagged messages off).
# Over UCX (no CH4 shared memory) UCX matches every message itself: MPI's
# rules are checked there, the matcher's pvars are not.
netmod_matches=0
case $(t_device "$prefix") in ch4:ucx*) [ -n "$no_shm" ] && netmod_matches=1 ;; esac
for mm in hash hash-tables hash-moves list; do
    menv=(MPIR_CVAR_CH4_CX_MATCHING=${mm%%-*})
    case $mm in
        hash-tables) menv+=(MPIR_CVAR_CH4_CX_MATCHING_LIST_MAX=0) ;;
        hash-moves) menv+=(MPIR_CVAR_CH4_CX_MATCHING_LIST_MAX=2) ;;
    esac
    if [ $netmod_matches = 1 ]; then
        run_ok "mpi/match-$mm/match_order-ucx" "match_order netmod-matches" "${menv[@]}"
        continue
    fi
    run_ok "mpi/match-$mm/match_order" match_order "${menv[@]}"
    run_ok "mpi/match-$mm/match_order-ofi-am" match_order "${menv[@]}" "${T_OFI_AM_ENV[@]}"
done
# More outstanding requests than MPICH's pool holds (patch
# cx-request-capacity): 300000 receives queued at once, posted first and
# unexpected first, over shared memory and OFI's active-message path; and
# running out names the limit.
if [ $netmod_matches = 1 ]; then
    t_result SKIP mpi/many-requests "UCX matches the 300000 receives itself, in linear time (minutes)"
else
    run_ok mpi/many-requests many_requests
    run_ok mpi/many-requests-ofi-am many_requests "${T_OFI_AM_ENV[@]}"
fi
t_run mpi/many-requests-exhaust 60 bash -c 'out=$("$@" 2>&1) && { echo "$out"; echo "ran out of requests without failing"; exit 1; }
    echo "$out" | grep -v "^/"
    grep -qF "past MPICH'"'"'s limit: 300000 receives outstanding" <<<"$out" &&
    grep -qF "MPICH-CX: no request left in pool 0: it holds 1043456 requests at once" <<<"$out"' \
    _ "${launch[@]}" -n 1 "$work/mpi/many_requests" exhaust
# Unexpected-message buffers: small cells (default), pack buffers only (0),
# every message small (4000), a limit that is no multiple of 16 (100),
# MPICH's lists, and OFI's active-message path.
# Over UCX the buffers are not used (UCX keeps unexpected messages itself),
# and MPICH 4.0.2 fails this program there (payloads of 0: Debian's mpich
# package, ch4:ucx, too).
if [ $netmod_matches = 1 ]; then
    t_result SKIP mpi/unexp-buffers "UCX keeps unexpected messages itself (and MPICH 4.0.2 fails this program over UCX)"
else
    run_ok mpi/unexp-buffers unexp_buffers
    run_ok mpi/unexp-buffers-off unexp_buffers MPIR_CVAR_CH4_CX_UNEXP_SMALL_BUFFER_SIZE=0
    run_ok mpi/unexp-buffers-4000 unexp_buffers MPIR_CVAR_CH4_CX_UNEXP_SMALL_BUFFER_SIZE=4000
    run_ok mpi/unexp-buffers-100 unexp_buffers MPIR_CVAR_CH4_CX_UNEXP_SMALL_BUFFER_SIZE=100
    run_ok mpi/unexp-buffers-list unexp_buffers MPIR_CVAR_CH4_CX_MATCHING=list
    run_ok mpi/unexp-buffers-ofi-am unexp_buffers "${T_OFI_AM_ENV[@]}"
fi
# Bad values of their CVARs.
bad_cvar mpi/cvar/bad-unexp-small-negative MPIR_CVAR_CH4_CX_UNEXP_SMALL_BUFFER_SIZE -1 "Invalid value '-1' of MPIR_CVAR_CH4_CX_UNEXP_SMALL_BUFFER_SIZE; valid values: 0 (off) to 69632 (MPIR_CVAR_CH4_AM_PACK_BUFFER_SIZE)"
bad_cvar mpi/cvar/bad-unexp-small-large MPIR_CVAR_CH4_CX_UNEXP_SMALL_BUFFER_SIZE 70000 "Invalid value '70000' of MPIR_CVAR_CH4_CX_UNEXP_SMALL_BUFFER_SIZE; valid values: 0 (off) to 69632 (MPIR_CVAR_CH4_AM_PACK_BUFFER_SIZE)"
bad_cvar mpi/cvar/bad-matching MPIR_CVAR_CH4_CX_MATCHING tree "Invalid value 'tree' of MPIR_CVAR_CH4_CX_MATCHING; valid values: hash, list"
bad_cvar mpi/cvar/bad-list-max MPIR_CVAR_CH4_CX_MATCHING_LIST_MAX -1 "Invalid value '-1' of MPIR_CVAR_CH4_CX_MATCHING_LIST_MAX; valid values: 0 (always hash) or a positive queue length"
