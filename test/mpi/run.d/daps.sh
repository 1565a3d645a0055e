# Copyright (C) MPICH-CX contributors. See COPYRIGHT in top-level directory.
# Sourced by test/mpi/run: Daps progress stealing (doc/user/daps.md): a bad
# value of its CVAR (any build with CH4 shared memory), then, where PiP is
# built, a rank that computes outside MPI gets its receive or RMA target work
# done by ranks idle in MPI, checked before its own next MPI call, over shared
# memory and over the netmod; off, processes, and more ranks than cores.
needs_shm mpi/daps || return 0
bad_cvar mpi/cvar/bad-daps MPIR_CVAR_CH4_CX_DAPS sometimes "Invalid value 'sometimes' of MPIR_CVAR_CH4_CX_DAPS; valid values: on or off"
bad_cvar mpi/cvar/bad-daps-away MPIR_CVAR_CH4_CX_DAPS_AWAY_US -1 "Invalid value '-1' of MPIR_CVAR_CH4_CX_DAPS_AWAY_US; valid values: 0 to 1000000"

if [ -x "$prefix/bin/mpich-cx-piphost" ] && "$prefix/bin/mpichversion" | grep -q -- --disable-cx-daps; then
    t_result SKIP mpi/daps "MPICH-CX was configured with --disable-cx-daps"
    bad_cvar mpi/cvar/daps-not-built MPIR_CVAR_CH4_CX_DAPS on \
        "valid values: off (this MPICH-CX was configured with --disable-cx-daps)"
elif [ -x "$prefix/bin/mpich-cx-piphost" ]; then
    daps=(-pip -genv MPIR_CVAR_CH4_CX_DAPS on)
    overlap='[ $rc = 0 ] && grep -qx "No Errors" <<<"$out"'
    for m in contig vector acc; do
        # 3 ranks: rank 2 idles in MPI_Barrier, rank 0 in its send or flush
        # (acc: PiP windows are accessed directly, so it needs no Daps here)
        pip_run daps-$m-3 300 "$overlap" "${daps[@]}" -n 3 "$work/mpi/daps_overlap" $m 3 expect-overlap
        # through the netmod (OFI tcp on loopback; 2 cliques: ranks 0 and 2,
        # 1 and 3 are "nodes"): rank 3 runs rank 1's network progress
        pip_run daps-$m-netmod 300 "$overlap" "${daps[@]}" -genv MPIR_CVAR_NUM_CLIQUES 2 \
            -genv FI_PROVIDER tcp -n 4 "$work/mpi/daps_overlap" $m 3 expect-overlap
    done
    # 8 MiB accumulates: the target's libfabric runs tolower() on the
    # worker's thread (per-thread ctype tables of another libc)
    pip_run daps-acc-large-netmod 300 "$overlap" "${daps[@]}" -genv MPIR_CVAR_NUM_CLIQUES 2 \
        -genv FI_PROVIDER tcp -n 4 "$work/mpi/daps_overlap" acc 2 acc-mib=8
    pip_run daps-acc-netmod-off 300 "$overlap"' && grep -q "overlapped 0 of 2" <<<"$out"' -pip \
        -genv MPIR_CVAR_NUM_CLIQUES 2 -genv FI_PROVIDER tcp -n 4 "$work/mpi/daps_overlap" acc 2 compute-ms=100
    # the victim re-enters MPI while workers steal (1 ms of computing), two
    # workers racing for it; a victim with MPI_THREAD_MULTIPLE and a second
    # thread of its own in MPI_Recv (it progresses itself: nobody steals)
    pip_run daps-reenter 300 "$overlap" "${daps[@]}" -n 4 "$work/mpi/daps_overlap" vector 150 compute-ms=1
    pip_run daps-reenter-netmod 300 "$overlap" "${daps[@]}" -genv MPIR_CVAR_NUM_CLIQUES 2 \
        -genv FI_PROVIDER tcp -n 4 "$work/mpi/daps_overlap" contig 100 compute-ms=1
    pip_run daps-multiple 300 "$overlap" "${daps[@]}" -n 3 "$work/mpi/daps_overlap" vector 3 \
        expect-overlap multiple
    # victims with MPI_THREAD_MULTIPLE: 4 threads each post a receive and
    # compute (a worker takes the victim's VCI locks, free while none of its
    # threads is in MPI), over PiP and over the netmod; re-entering at once
    # (under every thread-safety model: the workers' waits are then the
    # model's too, selective reactivation's server included)
    models=("${T_MODELS[@]}")
    t_runtime_build "$prefix" || models=("default|")
    for m in "${models[@]}"; do
        label=${m%%|*} genv=()
        # offload's executors run their rank's progress: no Daps there
        case $label in offload*) continue ;; esac
        read -ra menv <<<"${m#*|}"
        for e in "${menv[@]}"; do genv+=(-genv "${e%%=*}" "${e#*=}"); done
        pip_run daps-threads-$label 300 "$overlap" "${daps[@]}" "${genv[@]}" -n 3 \
            "$work/mpi/daps_overlap" vector 2 expect-overlap threads=4 compute-ms=150
    done
    pip_run daps-threads-netmod 300 "$overlap" "${daps[@]}" -genv MPIR_CVAR_NUM_CLIQUES 2 \
        -genv FI_PROVIDER tcp -n 4 "$work/mpi/daps_overlap" contig 3 expect-overlap threads=3
    pip_run daps-threads-reenter 300 "$overlap" "${daps[@]}" -n 4 "$work/mpi/daps_overlap" vector 60 \
        compute-ms=1 threads=3
    # a small receive needs no handshake and is not counted: nobody steals
    # for it (the data arrives when rank 1 calls MPI again); sent 10 ms in,
    # after the receive is posted (one sent before completed at its post
    # in a quarter of the runs)
    pip_run daps-small-recv 300 "$overlap"' && grep -q "overlapped 0 of 3" <<<"$out"' "${daps[@]}" \
        -n 3 "$work/mpi/daps_overlap" contig 3 bytes=64 compute-ms=50 send-delay-ms=10
    # with MPICH's progress thread, Daps stays out (the thread sits inside MPI)
    pip_run daps-async-progress 120 '[ $rc = 0 ] && grep -q "no progress stealing (MPIR_CVAR_ASYNC_PROGRESS=1 runs a progress thread)" <<<"$out"' \
        "${daps[@]}" -genv MPIR_CVAR_ASYNC_PROGRESS 1 -n 2 "$work/mpi/library_version" -v
    # so do offload's executors (they run their rank's progress)
    if t_runtime_build "$prefix"; then
        pip_run daps-offload 120 '[ $rc = 0 ] && grep -q "no progress stealing (MPIR_CVAR_CH4_MT_MODEL=offload: its executors run the progress)" <<<"$out"' \
            "${daps[@]}" -genv MPIR_CVAR_CH4_MT_MODEL offload -genv MPIR_CVAR_DEFAULT_THREAD_LEVEL MPI_THREAD_MULTIPLE \
            -n 2 "$work/mpi/library_version" -v
    fi
    pip_run daps-extensions-line 120 '[ $rc = 0 ] && grep -q "^MPICH-CX Extensions:.*, progress stealing" <<<"$out"' \
        "${daps[@]}" -n 2 "$work/mpi/library_version" -v
    # 2 ranks: the sender alone is the worker; 6 ranks on 2 cores
    pip_run daps-contig-2 300 "$overlap" "${daps[@]}" -n 2 "$work/mpi/daps_overlap" contig 3 expect-overlap
    pip_run daps-vector-6 300 "$overlap" "${daps[@]}" -n 6 "$work/mpi/daps_overlap" vector 3 expect-overlap
    # the application kernels (benchmarks/daps_kernels; they check their own
    # sums and halos), 4 ranks, over PiP and over the netmod
    kernel_ok='[ $rc = 0 ] && grep -Eq "^daps_kernels,$m compute=[0-9]+ms,[0-9]+,time,[0-9.e+-]+,us$" <<<"$out"'
    for m in two-stage stencil; do
        pip_run daps-kernel-$m 300 "m=$m; $kernel_ok" "${daps[@]}" -n 4 \
            "$prefix/libexec/mpich-cx/daps_kernels" --quick --mode $m
        pip_run daps-kernel-$m-netmod 300 "m=$m; $kernel_ok" "${daps[@]}" \
            -genv MPIR_CVAR_NUM_CLIQUES 2 -genv FI_PROVIDER tcp -n 4 \
            "$prefix/libexec/mpich-cx/daps_kernels" --quick --mode $m
    done
    # off, and processes: nobody runs rank 1's progress; the data is right
    pip_run daps-off 300 "$overlap"' && grep -q "overlapped 0 of 2" <<<"$out"' -pip \
        -n 3 "$work/mpi/daps_overlap" vector 2 compute-ms=100
    t_run mpi/daps/processes 300 bash -c 'out=$("$@" 2>&1); echo "$out"; grep -qx "No Errors" <<<"$out" &&
        grep -q "overlapped 0 of 2" <<<"$out"' _ "${launch[@]}" -genv MPIR_CVAR_CH4_CX_DAPS on \
        -n 3 "$work/mpi/daps_overlap" vector 2 compute-ms=100
fi
