# Copyright (C) MPICH-CX contributors. See COPYRIGHT in top-level directory.
# Sourced by test/mpi/run: PiP-MColl (doc/user/pip-mcoll.md): bad values of
# its CVARs (any build), then, where PiP is built, the correctness sweep
# (mcoll_sweep: every collective, root, in place or not, sizes around the
# switch points, strided types, a non-commutative operation; checked
# against results computed without MPI) by posted addresses, chosen by
# MPIR_CVAR_CH4_CX_MCOLL=auto and forced by the algorithm CVARs; off and as
# processes (MPICH's algorithms, the pvars unmoved); more ranks than cores;
# every thread-safety model.
bad_cvar mpi/cvar/bad-mcoll MPIR_CVAR_CH4_CX_MCOLL always "Invalid value 'always' of MPIR_CVAR_CH4_CX_MCOLL; valid values: auto or off"
bad_cvar mpi/cvar/bad-mcoll-small MPIR_CVAR_CH4_CX_MCOLL_ALLREDUCE_SMALL -1 "Invalid value '-1' of MPIR_CVAR_CH4_CX_MCOLL_ALLREDUCE_SMALL; valid values: a message size in bytes, 0 or more"
bad_cvar mpi/cvar/bad-mcoll-part MPIR_CVAR_CH4_CX_MCOLL_PART_MIN 0 "Invalid value '0' of MPIR_CVAR_CH4_CX_MCOLL_PART_MIN; valid values: a size in bytes, 1 or more"

if [ -x "$prefix/bin/mpich-cx-piphost" ]; then
    mok='[ $rc = 0 ] && grep -qx "No Errors" <<<"$out"'
    forced=()
    for c in BCAST GATHER SCATTER REDUCE ALLREDUCE ALLGATHER; do
        forced+=(-genv MPIR_CVAR_${c}_INTRA_ALGORITHM pip_mcoll)
    done
    pip_run mcoll-auto-2 300 "$mok" -pip -n 2 "$work/mpi/mcoll_sweep" expect-mcoll
    pip_run mcoll-auto-3 300 "$mok" -pip -n 3 "$work/mpi/mcoll_sweep" expect-mcoll
    # forced (MPICH's fallback rule would print if the restriction failed)
    pip_run mcoll-forced-4 300 "$mok"' && ! grep -q "not usable" <<<"$out"' -pip \
        -genv MPIR_CVAR_CH4_CX_MCOLL off -genv MPIR_CVAR_COLLECTIVE_FALLBACK print "${forced[@]}" \
        -n 4 "$work/mpi/mcoll_sweep" expect-mcoll quick
    # parts of one element and every rank reducing all of a large vector
    pip_run mcoll-parts-3 300 "$mok" -pip -genv MPIR_CVAR_CH4_CX_MCOLL_PART_MIN 1 \
        -genv MPIR_CVAR_CH4_CX_MCOLL_ALLREDUCE_SMALL 0 -n 3 "$work/mpi/mcoll_sweep" expect-mcoll quick
    pip_run mcoll-small-3 300 "$mok" -pip -genv MPIR_CVAR_CH4_CX_MCOLL_ALLREDUCE_SMALL 100000000 \
        -n 3 "$work/mpi/mcoll_sweep" expect-mcoll quick
    # 6 ranks on 2 cores: the waits yield
    pip_run mcoll-auto-6 300 "$mok" -pip -n 6 "$work/mpi/mcoll_sweep" expect-mcoll quick
    # under every thread-safety model (their waits and locks in the
    # progress the meetings poll)
    if t_runtime_build "$prefix"; then
        for m in "${T_MODELS[@]}"; do
            label=${m%%|*} genv=()
            read -ra menv <<<"${m#*|}"
            for e in "${menv[@]}"; do genv+=(-genv "${e%%=*}" "${e#*=}"); done
            pip_run mcoll-model-$label 300 "$mok" -pip "${genv[@]}" -n 3 \
                "$work/mpi/mcoll_sweep" expect-mcoll quick
        done
    fi
    pip_run mcoll-off 300 "$mok" -pip -genv MPIR_CVAR_CH4_CX_MCOLL off -n 3 \
        "$work/mpi/mcoll_sweep" expect-none quick
    t_run mpi/mcoll/processes 300 bash -c 'out=$("$@" 2>&1); echo "$out"; grep -qx "No Errors" <<<"$out"' \
        _ "${launch[@]}" "${forced[@]}" -n 3 "$work/mpi/mcoll_sweep" expect-none quick
fi
