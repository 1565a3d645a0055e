# Copyright (C) MPICH-CX contributors. See COPYRIGHT in top-level directory.
# Sourced by test/mpi/run: MPI_Get_library_version, and threads exchanging
# messages in order, over shared memory and through the network module; the
# built-in pair types in large messages; output written just before
# MPI_Abort.
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
