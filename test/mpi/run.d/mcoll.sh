# Copyright (C) MPICH-CX contributors. See COPYRIGHT in top-level directory.
# Sourced by test/mpi/run: PiP-MColl (doc/user/pip-mcoll.md): bad values of
# its CVARs (any build with CH4 shared memory), then, where PiP is built, the
# correctness sweep (mcoll_sweep: every collective, root, in place or not,
# sizes around the switch points, strided types, a non-commutative operation;
# checked against results computed without MPI) by posted addresses, chosen by
# MPIR_CVAR_CH4_CX_MCOLL=auto and forced by the algorithm CVARs; off and as
# processes (MPICH's algorithms, the pvars unmoved); more ranks than cores;
# every thread-safety model. Across nodes (emulated: see nodes_run) the same
# sweep on the N x P grid with N in {2,3,4,5,8} and P in {1,2,3,4}, nodes of
# unequal sizes, cliques (nodes whose ranks are not consecutive), forced, off
# and processes; the internode steps of an allgather must be ceil(log_{P+1}
# N).
needs_shm mpi/mcoll || return 0
bad_cvar mpi/cvar/bad-mcoll MPIR_CVAR_CH4_CX_MCOLL always "Invalid value 'always' of MPIR_CVAR_CH4_CX_MCOLL; valid values: auto or off"
bad_cvar mpi/cvar/bad-mcoll-small MPIR_CVAR_CH4_CX_MCOLL_ALLREDUCE_SMALL -1 "Invalid value '-1' of MPIR_CVAR_CH4_CX_MCOLL_ALLREDUCE_SMALL; valid values: a message size in bytes, 0 or more"
bad_cvar mpi/cvar/bad-mcoll-nodes-small MPIR_CVAR_CH4_CX_MCOLL_NODES_ALLREDUCE_SMALL -2 "Invalid value '-2' of MPIR_CVAR_CH4_CX_MCOLL_NODES_ALLREDUCE_SMALL; valid values: a message size in bytes, 0 or more"
bad_cvar mpi/cvar/bad-mcoll-nodes-ring MPIR_CVAR_CH4_CX_MCOLL_NODES_ALLGATHER_RING -1 "Invalid value '-1' of MPIR_CVAR_CH4_CX_MCOLL_NODES_ALLGATHER_RING; valid values: a message size in bytes, 0 or more"
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
    pip_run mcoll-forced-4 300 "$mok"' && ! grep -q "cannot be applied" <<<"$out"' -pip \
        -genv MPIR_CVAR_CH4_CX_MCOLL off -genv MPIR_CVAR_COLLECTIVE_FALLBACK print "${forced[@]}" \
        -n 4 "$work/mpi/mcoll_sweep" expect-mcoll quick
    # parts of one element and every rank reducing all of a large vector
    pip_run mcoll-parts-3 300 "$mok" -pip -genv MPIR_CVAR_CH4_CX_MCOLL_PART_MIN 1 \
        -genv MPIR_CVAR_CH4_CX_MCOLL_ALLREDUCE_SMALL 0 -n 3 "$work/mpi/mcoll_sweep" expect-mcoll quick
    pip_run mcoll-small-3 300 "$mok" -pip -genv MPIR_CVAR_CH4_CX_MCOLL_ALLREDUCE_SMALL 100000000 \
        -n 3 "$work/mpi/mcoll_sweep" expect-mcoll quick
    # the small bcast's root leaves at once: runs of them, lagging readers,
    # communicators freed in a loop; 8 ranks on 2 cores
    pip_run mcoll-oneway-3 300 "$mok" -pip -n 3 "$work/mpi/mcoll_oneway" 300 expect-mcoll
    pip_run mcoll-oneway-8 300 "$mok" -pip -n 8 "$work/mpi/mcoll_oneway" 100 expect-mcoll
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
    # Emulated nodes: Hydra's fork launcher starts one proxy, so one PiP
    # host, per host name it is given, and MPICH takes each for a node
    # (consecutive ranks, -ppn per node or name:count); traffic between them
    # goes through OFI tcp on loopback. The ranks of all of them share this
    # machine's cores, which no node sees: they yield always.
    # nodes_run NAME TIMEOUT CHECK HOSTS MPIEXEC-ARGS...
    nodes_run() {
        local name=$1 limit=$2 check=$3 hosts=$4; shift 4
        t_run "mpi/pip/$name" "$limit" bash -c 'check=$1; shift
            rc=0; out=$("$@" 2>&1) || rc=$?; echo "$out"; echo "exit status $rc"; eval "$check"' \
            _ "$check" "$mpiexec" -launcher fork -hosts "$hosts" -genv FI_PROVIDER tcp \
            -genv MPIR_CVAR_CH4_CX_RANK_YIELD always "$@"
    }
    # ceil(log_base n)
    log_steps() { local s=0 h=1; while [ $h -lt $1 ]; do h=$((h * $2)); s=$((s + 1)); done; echo $s; }
    # N nodes of P ranks: every N with P = 1 (up to 3 steps) and 2; P = 3
    # (base 4) in one and two steps, P = 4 (base 5) in one. Left out for
    # the CI's time: 4x4, 5x4, 8x3 and 8x4 (16-32 ranks, 4.5 of its 60
    # minutes), of which only 8x4 adds something: base 5 in two steps.
    for NxP in 2x1 2x2 2x3 2x4 3x1 3x2 3x3 3x4 4x1 4x2 4x3 5x1 5x2 5x3 8x1 8x2; do
        N=${NxP%x*} P=${NxP#*x}
        hosts=$(seq -s, -f cxnode%g 1 $N)
        nodes_run mcoll-nodes-${N}x$P 300 "$mok" $hosts -ppn $P -pip -n $((N * P)) \
            "$work/mpi/mcoll_sweep" expect-nodes steps=$(log_steps $N $((P + 1))) quick
    done
    # unequal nodes (P = 1: base 2), the full sweep; cliques, whose nodes
    # are ranks 0, 3, 6 / 1, 4 / 2, 5 (one host: no yield needed)
    nodes_run mcoll-nodes-unequal 300 "$mok" cxnode1:3,cxnode2:1,cxnode3:2 -pip -n 6 \
        "$work/mpi/mcoll_sweep" expect-nodes steps=2
    nodes_run mcoll-nodes-unequal-2 300 "$mok" cxnode1:2,cxnode2:4,cxnode3:3 -pip -n 9 \
        "$work/mpi/mcoll_sweep" expect-nodes steps=1 quick
    pip_run mcoll-cliques-3 300 "$mok" -pip -genv MPIR_CVAR_NUM_CLIQUES 3 -genv FI_PROVIDER tcp \
        -n 7 "$work/mpi/mcoll_sweep" expect-nodes steps=1
    # the multi-object ring for every allgather: unequal nodes, cliques
    nodes_run mcoll-nodes-ring-unequal 300 "$mok" cxnode1:2,cxnode2:4,cxnode3:3 -pip \
        -genv MPIR_CVAR_CH4_CX_MCOLL_NODES_ALLGATHER_RING 0 -n 9 "$work/mpi/mcoll_sweep" expect-nodes quick
    pip_run mcoll-cliques-ring 300 "$mok" -pip -genv MPIR_CVAR_NUM_CLIQUES 3 -genv FI_PROVIDER tcp \
        -genv MPIR_CVAR_CH4_CX_MCOLL_NODES_ALLGATHER_RING 0 -n 7 "$work/mpi/mcoll_sweep" expect-nodes quick
    # the rings (and parts of one element) for every allreduce
    nodes_run mcoll-nodes-rings 300 "$mok" cxnode1,cxnode2,cxnode3 -ppn 2 -pip \
        -genv MPIR_CVAR_CH4_CX_MCOLL_NODES_ALLREDUCE_SMALL 0 -genv MPIR_CVAR_CH4_CX_MCOLL_PART_MIN 1 \
        -n 6 "$work/mpi/mcoll_sweep" expect-nodes quick
    # forced: bcast, gather and reduce run MPICH's node-aware algorithms
    # (whose node steps are ours), the others ours
    nodes_run mcoll-nodes-forced 300 "$mok" cxnode1,cxnode2,cxnode3 -ppn 2 -pip "${forced[@]}" \
        -genv MPIR_CVAR_CH4_CX_MCOLL off -n 6 "$work/mpi/mcoll_sweep" expect-nodes steps=1 quick
    nodes_run mcoll-nodes-off 300 "$mok" cxnode1,cxnode2,cxnode3 -ppn 2 -pip \
        -genv MPIR_CVAR_CH4_CX_MCOLL off -n 6 "$work/mpi/mcoll_sweep" expect-none quick
    nodes_run mcoll-nodes-processes 300 "$mok" cxnode1,cxnode2,cxnode3 -ppn 2 -n 6 \
        "$work/mpi/mcoll_sweep" expect-none quick
    pip_run mcoll-off 300 "$mok" -pip -genv MPIR_CVAR_CH4_CX_MCOLL off -n 3 \
        "$work/mpi/mcoll_sweep" expect-none quick
    t_run mpi/mcoll/processes 300 bash -c 'out=$("$@" 2>&1); echo "$out"; grep -qx "No Errors" <<<"$out"' \
        _ "${launch[@]}" "${forced[@]}" -n 3 "$work/mpi/mcoll_sweep" expect-none quick
fi
