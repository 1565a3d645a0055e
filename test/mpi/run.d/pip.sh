# Copyright (C) MPICH-CX contributors. See COPYRIGHT in top-level directory.
# Sourced by test/mpi/run: PiP (process in process): bad values of its CVARs
# (any build with CH4 shared memory), then, where PiP is built, its tests.
needs_shm mpi/pip || return 0
bad_cvar mpi/cvar/bad-pip-threshold MPIR_CVAR_CH4_CX_PIP_P2P_THRESHOLD -5 "Invalid value '-5' of MPIR_CVAR_CH4_CX_PIP_P2P_THRESHOLD; valid values: a message size in bytes, 0 or more"
bad_cvar mpi/cvar/bad-pip-enable MPIR_CVAR_CH4_CX_PIP_ENABLE 2 "Invalid value '2' of MPIR_CVAR_CH4_CX_PIP_ENABLE; valid values: 1 (single copy between tasks) or 0 (off)"
bad_cvar mpi/cvar/bad-steal-stream MPIR_CVAR_CH4_CX_STEAL_STREAM maybe "Unable to parse environment variable (MPIR_CVAR_CH4_CX_STEAL_STREAM)"

# PiP (doc/user/pip.md): mpiexec -pip (or HYDRA_PIP=1) starts the ranks of a node
# as tasks of mpich-cx-piphost processes, up to 15 each.
if [ -x "$prefix/bin/mpich-cx-piphost" ]; then
    # pip_run NAME TIMEOUT CHECK-SCRIPT MPIEXEC-ARGS...: the script sees $out, $rc
    pip_run() {
        local name=$1 limit=$2 check=$3; shift 3
        t_run "mpi/pip/$name" "$limit" bash -c 'check=$1; shift
            rc=0; out=$("$@" 2>&1) || rc=$?; echo "$out"; echo "exit status $rc"; eval "$check"' \
            _ "$check" "${launch[@]}" "$@"
    }
    ok='[ $rc = 0 ] && grep -qx "No Errors" <<<"$out"'
    pip_run basic 120 "$ok" -pip -n 2 "$work/mpi/pip_basic"
    # threads started and ended in a loop, each receiving by single copy
    pip_run thread-loop 300 "$ok" -pip -n 2 "$work/mpi/pip_thread_loop"
    # tasks that outnumber their cores yield too (threads of one host)
    pip_run rank-yield 120 "$ok" -pip -n $(( $(nproc) + 2 )) "$work/mpi/rank_yield" yield 1000 4
    t_run mpi/pip/env-var-4 120 bash -c 'out=$(HYDRA_PIP=1 "$@" 2>&1); echo "$out"
        grep -qx "No Errors" <<<"$out" && [ "$(grep -c "of a host with 4 ranks" <<<"$out")" = 4 ]' \
        _ "${launch[@]}" -n 4 "$work/mpi/pip_basic"
    # 16 local ranks: two hosts (15 + 1), PiP inside, POSIX shared memory between
    pip_run two-hosts 300 "$ok"' && [ "$(grep -c "of a host with 15 ranks" <<<"$out")" = 15 ] &&
        [ "$(grep -c "of a host with 1 ranks" <<<"$out")" = 1 ]' -pip -n 16 "$work/mpi/pip_basic"
    stealing=", throughput stealing from 262144 bytes"
    [ $cx_steal_built = 1 ] || stealing=
    pip_run extensions-line 120 '[ $rc = 0 ] &&
        grep -q "^MPICH-CX Extensions:.*, pip (task 1 of 2 in this process, single copy from 32768 bytes'"$stealing"', collectives by posted addresses with 1 peer tasks)$" <<<"$out"' \
        -pip -n 2 "$work/mpi/library_version" -v
    # (stdout is unbuffered after MPI_Init, with or without -pip, so puts()
    # writes a line in two pieces, and Hydra may label the second one too)
    pip_run labels 120 '[ $rc = 0 ] && grep -q "^\[0\] No Errors" <<<"$out" &&
        grep -q "^\[1\] rank 1: task 1 of a host with 2 ranks" <<<"$out"' \
        -pip -l -n 2 "$work/mpi/pip_basic"
    pip_run exit-code 120 '[ $rc = 3 ] && grep -qx "No Errors" <<<"$out"' \
        -pip -n 2 "$work/mpi/pip_basic" exit 3
    # exit reached inside a library ends that rank only, with its code: rank 1
    # calls exit(3) in a shared library of its own (its atexit handler runs,
    # its stdout is flushed), or a Fortran STOP 3 (exit in libgfortran); the
    # other ranks finish after it (and as processes, the same)
    lib_exit='[ $rc = 3 ] && grep -qx "No Errors" <<<"$out" &&
        grep -qx "rank 1: buffered line before exit(3)" <<<"$out" &&
        grep -qx "rank 1: atexit handler ran" <<<"$out" &&
        [ "$(grep -c "^rank [023]: done after rank 1.s exit$" <<<"$out")" = 3 ]'
    pip_run exit-in-library 120 "$lib_exit" -pip -n 4 "$work/mpi/pip_exit"
    pip_run exit-in-library-processes 120 "$lib_exit" -n 4 "$work/mpi/pip_exit"
    if [ -x "$work/mpi/pip_stop" ]; then
        stop='[ $rc = 3 ] && grep -q "^STOP 3$" <<<"$out" &&
            [ "$(grep -c "^ *rank [023]: done after rank 1.s STOP$" <<<"$out")" = 3 ]'
        pip_run fortran-stop 120 "$stop" -pip -n 4 "$work/mpi/pip_stop"
        pip_run fortran-stop-processes 120 "$stop" -n 4 "$work/mpi/pip_stop"
    elif [ -x "$prefix/bin/mpifort" ]; then
        t_result FAIL mpi/pip/fortran-stop "$prefix/bin/mpifort did not build pip_stop.f90; log: $T_LOGDIR/build-test-mpi.log"
    else
        t_result SKIP mpi/pip/fortran-stop "no $prefix/bin/mpifort (MPICH-CX built without Fortran)"
    fi
    pip_run crash 120 '[ $rc != 0 ] && grep -q "task 1 (rank 1, .*pip_basic) crashed: signal SIGSEGV" <<<"$out"' \
        -pip -n 2 "$work/mpi/pip_basic" crash
    pip_run abort 120 '[ $rc = 7 ] && grep -q "MPI_Abort(MPI_COMM_WORLD, 7)" <<<"$out"' \
        -pip -n 2 "$work/mpi/pip_basic" abort
    pip_run abort-output 120 '[ $rc = 7 ] && grep -q "MPI_Abort(MPI_COMM_WORLD, 7)" <<<"$out" &&
        [ "$(grep -c "before MPI_Abort" <<<"$out")" = 2000 ]' -pip -n 2 "$work/mpi/abort_output"
    pip_run bind-to-core 120 "$ok"' && grep -q "^rank 0: .*; cpus: 0$" <<<"$out" &&
        grep -q "^rank 1: .*; cpus: 1$" <<<"$out"' -pip -bind-to core -n 2 "$work/mpi/pip_basic"
    pip_run mpmd 120 "$ok"' && [ "$(grep -c "of a host with 2 ranks" <<<"$out")" = 4 ]' \
        -pip -n 2 "$work/mpi/pip_basic" : -n 2 "$work/mpi/pip_basic"
    pip_run threads 180 "$ok" -pip -n 2 "$work/mpi/thread_exchange"
    # the CX models' inline paths inside dlmopen namespaces (their thread id
    # is the thread pointer, checked against pthread_self() at MPI_Init)
    if t_runtime_build "$prefix"; then
        pip_run lockq-ordering 180 "$ok" -pip -genv MPIR_CVAR_CH4_MT_MODEL lockq \
            -genv MPIR_CVAR_CH4_CX_FORCE_TRYLOCK_FAIL 50 -n 2 "$work/mpi/mt_ordering"
        pip_run csync-stress 180 "$ok" -pip -genv MPIR_CVAR_CH4_MT_MODEL csync -n 2 \
            "$work/mpi/mt_stress" 8
    fi
    pip_run matching 180 "$ok" -pip -n 2 "$work/mpi/match_order"
    # single copy (pip_copy.c works out from the kernel's process ids which
    # peers are tasks of its process, and checks the pvars count exactly those);
    # with 2 tasks on 2 cores a blocking sender has a core to steal chunks of
    # its receiver's copy with (CAB-MPI; more in steal.sh)
    if [ $cx_steal_built = 1 ]; then
        pip_run single-copy 180 "$ok"' && grep -q "^single copies on rank 0: [1-9].*, [1-9][0-9]* copy tasks" <<<"$out" &&
            grep -q "^rank 0 stole [1-9][0-9]* bytes while waiting in its own sends" <<<"$out"' \
            -pip -n 2 "$work/mpi/pip_copy"
        pip_run single-copy-stream 180 "$ok"' && grep -q "^rank 0 stole [1-9][0-9]* bytes" <<<"$out"' \
            -pip -n 2 -genv MPIR_CVAR_CH4_CX_STEAL_STREAM 1 "$work/mpi/pip_copy"
    else
        t_result SKIP mpi/pip/single-copy "MPICH-CX was configured with --disable-cx-steal (single-copy-unstolen covers it)"
    fi
    pip_run single-copy-unstolen 180 "$ok"' && grep -q "^single copies on rank 0: [1-9].*, 0 copy tasks" <<<"$out" &&
        grep -q "^rank 0 stole 0 bytes" <<<"$out"' \
        -pip -n 2 -genv MPIR_CVAR_CH4_CX_STEAL off "$work/mpi/pip_copy"
    pip_run single-copy-4 180 "$ok"' && grep -qx "windows with direct access on rank 0: 2, 0 of them split" <<<"$out"' \
        -pip -n 4 "$work/mpi/pip_copy"
    # two hosts (15 + 1 ranks) and MPMD (a host per executable): windows reach
    # the peers of their host directly, the others by active messages
    split='[ $rc = 0 ] && grep -qx "No Errors" <<<"$out" &&
        grep -qx "windows with direct access on rank 0: 2, 2 of them split" <<<"$out"'
    pip_run single-copy-two-hosts 300 "$split" -pip -n 16 "$work/mpi/pip_copy"
    pip_run single-copy-mpmd 180 "$split" -pip -n 2 "$work/mpi/pip_copy" : -n 2 "$work/mpi/pip_copy"
    pip_run pair-types 180 "$ok" -pip -n 4 "$work/mpi/pair_types"
    pip_run single-copy-all-sizes 180 "$ok" -pip -n 2 -genv MPIR_CVAR_CH4_CX_PIP_P2P_THRESHOLD 0 \
        "$work/mpi/pip_copy"
    pip_run single-copy-off 180 "$ok"' && grep -q "^single copies on rank 0: 0 " <<<"$out"' \
        -pip -n 2 -genv MPIR_CVAR_CH4_CX_PIP_ENABLE 0 "$work/mpi/pip_copy"
    pip_run single-copy-processes 180 "$ok"' && grep -q "^single copies on rank 0: 0 " <<<"$out" &&
        grep -qx "windows with direct access on rank 0: 0, 0 of them split" <<<"$out"' \
        -n 2 "$work/mpi/pip_copy"
    # windows MPICH allocates in shared memory, which it first tries to map at
    # one address in every rank (a symmetric heap): never possible for tasks
    # of one process, so they must skip it; with a million retries allowed,
    # nothing else ends in time (and as processes, where it succeeds)
    pip_run win-allocate-noncontig 120 "$ok" -pip -n 4 \
        -genv MPIR_CVAR_SHM_SYMHEAP_RETRY 1000000 "$work/mpi/pip_win_alloc"
    pip_run win-allocate-noncontig-processes 120 "$ok" -n 4 "$work/mpi/pip_win_alloc"
    # through libfabric: tcp, and shm, whose names derive from getpid() (one
    # per task under PiP, or the two ranks would open the same region)
    for p in tcp shm; do
        pip_run netmod-$p 180 "$ok" -pip -n 2 -genv MPIR_CVAR_NOLOCAL 1 -genv FI_PROVIDER $p \
            "$work/mpi/thread_exchange"
    done
    # without -pip the same program runs as processes, and says it is not a task
    pip_run off 120 '[ $rc != 0 ] && grep -q "rank 0 is not a PiP task" <<<"$out"' \
        -n 2 "$work/mpi/pip_basic"
    # a program compiled -fPIE (not -fPIC) has copy relocations: refused, nothing runs
    if "$prefix/bin/mpicc" -fPIE -o "$work/mpi/pip_basic_fpie" "$here/pip_basic.c" \
            > "$T_LOGDIR/build-pip-fpie.log" 2>&1; then
        pip_run refuse-fpie 120 '[ $rc != 0 ] && grep -q "has copy relocations" <<<"$out" &&
            grep -q "rebuild it with mpich-cx.s mpicc" <<<"$out" && ! grep -q "^rank" <<<"$out"' \
            -pip -n 2 "$work/mpi/pip_basic_fpie"
    else
        t_result FAIL mpi/pip/refuse-fpie "could not build the -fPIE program; log: $T_LOGDIR/build-pip-fpie.log"
    fi
    # the wrappers add PiP's flags when linking programs, not libraries
    t_check mpi/pip/mpicc-flags "mpicc -show lacks -fPIC/-pie -rdynamic, or adds -pie to -shared" \
        bash -c 'c=$("$1" -show -o x x.c); s=$("$1" -show -shared -o x.so x.c)
            [[ " $c " == *" -fPIC "* && " $c " == *" -pie -rdynamic "* ]] &&
            [[ " $s " == *" -fPIC "* && " $s " != *" -pie "* ]]' _ "$prefix/bin/mpicc"
elif "$prefix/bin/mpichversion" | grep -q -- "--disable-pip"; then
    t_result SKIP mpi/pip "MPICH-CX was configured with --disable-pip"
else
    t_result FAIL mpi/pip "$prefix/bin/mpich-cx-piphost missing, though PiP was not disabled"
fi
