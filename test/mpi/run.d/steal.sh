# Copyright (C) MPICH-CX contributors. See COPYRIGHT in top-level directory.
# Sourced by test/mpi/run: CAB-MPI work stealing (doc/user/cab-stealing.md):
# bad values of its CVARs (any build with CH4 shared memory), then, where PiP
# is built, copies and accumulates checked byte for byte while every one of
# them is a task in tiny chunks, on 3, 4 and 16 ranks (16: two hosts), under
# each strategy on a fake two-node NUMA map, through the netmod, with the
# post_comm_access info key, and that ranks waiting in MPI did steal.
needs_shm mpi/steal || return 0
bad_cvar mpi/cvar/bad-steal MPIR_CVAR_CH4_CX_STEAL greedy "Invalid value 'greedy' of MPIR_CVAR_CH4_CX_STEAL; valid values: off, localized, mixed or throughput"
bad_cvar mpi/cvar/bad-steal-threshold MPIR_CVAR_CH4_CX_STEAL_THRESHOLD -1 "Invalid value '-1' of MPIR_CVAR_CH4_CX_STEAL_THRESHOLD; valid values: a size in bytes, 0 or more"
bad_cvar mpi/cvar/bad-steal-chunk MPIR_CVAR_CH4_CX_STEAL_CHUNK_MEDIUM 0 "Invalid value '0' of MPIR_CVAR_CH4_CX_STEAL_CHUNK_MEDIUM; valid values: an integer of 1 or more"
bad_cvar mpi/cvar/bad-steal-ranges MPIR_CVAR_CH4_CX_STEAL_CHUNK_LARGE_FROM 1000 "Invalid value '1000' of MPIR_CVAR_CH4_CX_STEAL_CHUNK_LARGE_FROM; valid values: a size no smaller than MPIR_CVAR_CH4_CX_STEAL_CHUNK_MEDIUM_FROM"
bad_cvar mpi/cvar/bad-steal-nsaturate MPIR_CVAR_CH4_CX_STEAL_NSATURATE 0 "Invalid value '0' of MPIR_CVAR_CH4_CX_STEAL_NSATURATE; valid values: an integer of 1 or more"
bad_cvar mpi/cvar/bad-steal-chunks-per-rank MPIR_CVAR_CH4_CX_STEAL_CHUNKS_PER_RANK -2 "Invalid value '-2' of MPIR_CVAR_CH4_CX_STEAL_CHUNKS_PER_RANK; valid values: a number of chunks, or 0 for the size classes alone"
bad_cvar mpi/cvar/bad-steal-order MPIR_CVAR_CH4_CX_STEAL_ORDER sideways "Invalid value 'sideways' of MPIR_CVAR_CH4_CX_STEAL_ORDER; valid values: lo-to-hi, hi-to-lo or random"

if [ -x "$prefix/bin/mpich-cx-piphost" ] && [ $cx_steal_built = 0 ]; then
    t_result SKIP mpi/steal "MPICH-CX was configured with --disable-cx-steal"
    bad_cvar mpi/cvar/steal-not-built MPIR_CVAR_CH4_CX_STEAL localized \
        "valid values: off (this MPICH-CX was configured with --disable-cx-steal)"
elif [ -x "$prefix/bin/mpich-cx-piphost" ]; then
    # every copy and reduction a task, in chunks of 1 to 4 KiB
    every=(-genv MPIR_CVAR_CH4_CX_STEAL_THRESHOLD 0 -genv MPIR_CVAR_CH4_CX_STEAL_CHUNK_SMALL 1024
           -genv MPIR_CVAR_CH4_CX_STEAL_CHUNK_MEDIUM 2048 -genv MPIR_CVAR_CH4_CX_STEAL_CHUNK_LARGE 4096
           -genv MPIR_CVAR_CH4_CX_STEAL_CHUNKS_PER_RANK 0)
    stole="$ok"' && grep -q "owners published [1-9][0-9]* tasks, waiting ranks stole [1-9][0-9]* chunks" <<<"$out"'
    # runs that expect steals bind their ranks: unbound, with more ranks than
    # cores, the kernel may keep the owner and the workers on one CPU
    bound=(-pip -bind-to core)
    for n in 3 4; do
        pip_run steal-p2p-$n 300 "$stole" "${bound[@]}" "${every[@]}" -n $n "$work/mpi/cab_steal" p2p 40 expect-steals
        pip_run steal-acc-$n 300 "$stole" "${bound[@]}" "${every[@]}" -n $n "$work/mpi/cab_steal" acc 20 expect-steals
    done
    # two hosts (15 + 1 ranks): ranks steal only inside their own host, and
    # seldom here (14 waiting ranks on 2 cores, each trying one random peer
    # per attempt), so correctness only; the window is not shared directly
    # across hosts, so its accumulates are not tasks
    pip_run steal-p2p-16 600 "$ok" -pip "${every[@]}" -n 16 "$work/mpi/cab_steal" p2p 12
    pip_run steal-acc-16 600 "$ok" -pip "${every[@]}" -n 16 "$work/mpi/cab_steal" acc 6
    # the strategies on a fake map of two NUMA nodes (ranks 0-1 and 2-3);
    # the low-to-high order and streaming stores
    for s in localized mixed throughput; do
        pip_run steal-$s 300 "$ok" -pip "${every[@]}" -genv MPICH_CX_FAKE_NUMA_NODES 2 \
            -genv MPIR_CVAR_CH4_CX_STEAL $s -n 4 "$work/mpi/cab_steal" p2p 20
    done
    pip_run steal-order-stream 300 "$stole" "${bound[@]}" "${every[@]}" -genv MPIR_CVAR_CH4_CX_STEAL_ORDER hi-to-lo \
        -genv MPIR_CVAR_CH4_CX_STEAL_STREAM 1 -n 3 "$work/mpi/cab_steal" p2p 20 expect-steals
    for v in hi-to-lo random lo-to-hi; do       # the info key on the communicator and window
        pip_run steal-info-$v 300 "$stole" "${bound[@]}" "${every[@]}" -n 3 "$work/mpi/cab_steal" acc 10 \
            expect-steals post_comm_access=$v
    done
    # through the netmod (OFI tcp on loopback; 2 cliques, so ranks 0 and 2,
    # 1 and 3 are "nodes" of their own): packing and unpacking of the
    # noncontiguous messages are the tasks, ranks 2 and 3 the workers (60
    # messages: with 4 ranks on 2 cores the workers may sit out 15 of them);
    # each worker bound to the CPU its owner is not on (-bind-to core would
    # put rank 2 beside rank 0 and rank 3 beside rank 1: no steal in 145 tasks)
    crossed=(-pip); [ "$(nproc)" -ge 2 ] && crossed=(-pip -bind-to user:0,1,1,0)
    pip_run steal-netmod 300 "$stole" "${crossed[@]}" "${every[@]}" -genv MPIR_CVAR_NUM_CLIQUES 2 \
        -genv FI_PROVIDER tcp -n 4 "$work/mpi/cab_steal" p2p 60 expect-steals no-truncate
    # off: nothing published, nothing stolen, same results
    pip_run steal-off 300 "$ok"' && grep -q "owners published 0 tasks, waiting ranks stole 0 chunks" <<<"$out"' \
        -pip "${every[@]}" -genv MPIR_CVAR_CH4_CX_STEAL off -n 3 "$work/mpi/cab_steal" p2p 20
    # processes (no -pip): no peer shares the address space, nothing to steal
    t_run mpi/steal/processes 300 bash -c 'out=$("$@" 2>&1); echo "$out"; grep -qx "No Errors" <<<"$out" &&
        grep -q "owners published 0 tasks, waiting ranks stole 0 chunks" <<<"$out"' \
        _ "${launch[@]}" "${every[@]}" -n 3 "$work/mpi/cab_steal" p2p 10
fi
