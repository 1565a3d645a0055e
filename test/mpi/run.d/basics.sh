# Copyright (C) MPICH-CX contributors. See COPYRIGHT in top-level directory.
# Sourced by test/mpi/run: MPI_Get_library_version, and threads exchanging
# messages in order, over shared memory and through the network module; the
# built-in pair types in large messages; output written just before
# MPI_Abort; MPI_Init's error when libfabric offers no provider; who
# serves MPI's allocations with --with-tcmalloc.
run_ok mpi/library_version library_version
run_ok mpi/thread_exchange thread_exchange
run_ok mpi/message_order message_order
# The same through the network module: libfabric's tcp provider on loopback.
run_ok mpi/thread_exchange-netmod thread_exchange "${T_NETMOD_ENV[@]}"
run_ok mpi/message_order-netmod message_order "${T_NETMOD_ENV[@]}"
# the built-in pair types in large messages and MINLOC/MAXLOC reductions
run_np mpi/pair-types 4 pair_types
# every line a rank wrote before MPI_Abort, and the abort's own line
t_run mpi/abort-output 120 bash -c 'rc=0; out=$("$@" 2>&1) || rc=$?; echo "$out" | tail -3
    echo "exit status $rc"; [ $rc = 7 ] && grep -q "MPI_Abort(MPI_COMM_WORLD, 7)" <<<"$out" &&
    [ "$(grep -c "before MPI_Abort" <<<"$out")" = 2000 ]' _ "${launch[@]}" -n 2 "$work/mpi/abort_output"
# FI_PROVIDER naming a provider this machine cannot run: MPI_Init's error
# names it, what it lacks and the fix (psm2 without Omni-Path; a name
# libfabric does not have), here and under -pip
if needs_ofi mpi/ofi; then
    if ls /dev/hfi1_* >/dev/null 2>&1; then
        t_result SKIP mpi/ofi/psm2-no-hardware "this machine has an Omni-Path adapter (/dev/hfi1_*)"
    else
        bad_cvar mpi/ofi/psm2-no-hardware FI_PROVIDER psm2 \
            "FI_PROVIDER=psm2, but this machine lacks an Omni-Path adapter (no /dev/hfi1_* device"
        bad_cvar mpi/ofi/psm2-no-hardware-pip FI_PROVIDER psm2 "or set FI_PROVIDER=tcp" env HYDRA_PIP=1
    fi
    bad_cvar mpi/ofi/no-such-provider FI_PROVIDER nosuch \
        "FI_PROVIDER=nosuch: libfabric has no provider of that name that works here"
fi
# --with-tcmalloc: tcmalloc serves libmpi's allocations and not the
# program's; a program linked with tcmalloc has all of its own on it too
if readelf -d "$prefix/lib/libmpi.so" | grep -q 'NEEDED.*libtcmalloc'; then
    run_np mpi/tcmalloc/lib 2 tcmalloc_binding
    run_np mpi/tcmalloc/lib-pip 2 tcmalloc_binding -- -pip
else
    t_result SKIP mpi/tcmalloc/lib "libmpi was built without --with-tcmalloc (doc/user/configure.md: tcmalloc)"
fi
if [ -x "$work/mpi/tcmalloc_binding_whole" ]; then
    run_np mpi/tcmalloc/whole 2 tcmalloc_binding_whole
    run_np mpi/tcmalloc/whole-pip 2 tcmalloc_binding_whole -- -pip
else
    t_result SKIP mpi/tcmalloc/whole "no libtcmalloc to link the program with (libgoogle-perftools-dev)"
fi
