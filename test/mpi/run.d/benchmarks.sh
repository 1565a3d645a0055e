# Copyright (C) MPICH-CX contributors. See COPYRIGHT in top-level directory.
# Sourced by test/mpi/run: the benchmarks the installed MPICH-CX carries
# (libexec/mpich-cx), in smoke-test mode.

# The lock microbenchmark (no MPI): every lock, CSV rows, mutual exclusion
# checked by the program itself (it exits 1 if the shared counter is off).
for l in mutex futex ticket mcs clh clhub hclhub; do
    t_run "bench/lockbench-$l" 60 bash -c 'l=$1; shift; out=$("$@") || exit 1; echo "$out";
        echo "$out" | grep -Eq "^lockbench,$l,2,throughput,[0-9.e+-]+,Macq/s$" || { echo "no throughput row"; exit 1; }' \
        _ "$l" "$prefix/libexec/mpich-cx/lockbench" --lock "$l" --threads 1,2 --seconds 0.2
done

# The memory-latency probe (no MPI): one positive latency row per size, and
# a size too small refused.
t_run bench/mem_latency 60 bash -c 'out=$("$@" --sizes 4096,1048576 --loads 100000) || exit 1; echo "$out";
    [ "$(echo "$out" | grep -Ec "^mem_latency,random,(4096|1048576),latency,[0-9.e+]+,ns$")" = 2 ] || { echo "no latency rows"; exit 1; }
    ! echo "$out" | grep -Eq ",(0|-[0-9.e+-]*|nan|inf),ns$" || { echo "non-positive value"; exit 1; }
    ! "$@" --sizes 64 2>/dev/null || { echo "64 bytes accepted"; exit 1; }' _ "$prefix/libexec/mpich-cx/mem_latency"
# Benchmarks, smoke mode: they run, print CSV rows, and report the MPICH-CX library.
bench=$prefix/libexec/mpich-cx
for b in pingpong mt_msgrate latency_mt match_burst match_shuffle; do
    extra=()
    case $b in mt_msgrate|latency_mt) extra=(--threads 2) ;; match_shuffle) extra=(--wildcard any-tag) ;; esac
    t_run "bench/$b" 120 bash -c 'out=$("$@") || exit 1; echo "$out";
        echo "$out" | grep -q "^# library: MPICH-CX Version:" || { echo "no MPICH-CX library line"; exit 1; }
        echo "$out" | grep -Eq "^[a-z_]+,[^,]+,[0-9]+,[a-z_]+,[0-9.e+-]+,[^,]+$" || { echo "no CSV rows"; exit 1; }
        ! echo "$out" | grep -Eq ",(0|-[0-9.e+-]*|nan|inf),[^,]+$" || { echo "non-positive value"; exit 1; }' \
        _ "${launch[@]}" -n 2 "$bench/$b" --quick "${extra[@]}"
done
# CAB-MPI's benchmark in each mode on 3 ranks (one idle), as PiP tasks when
# PiP is built, and a bad mode refused; the memcpy saturation probe (no MPI)
# names its N_saturate.
cab_launch=("${launch[@]}")
[ -x "$prefix/bin/mpich-cx-piphost" ] && cab_launch+=(-pip)
for m in pingpong third-party noncontig accumulate; do
    t_run "bench/cab_bench-$m" 120 bash -c 'm=$1; shift; out=$("$@") || exit 1; echo "$out";
        echo "$out" | grep -q "^# library: MPICH-CX Version:" || { echo "no MPICH-CX library line"; exit 1; }
        echo "$out" | grep -Eq "^cab_bench,$m idle=1,[0-9]+,time,[0-9.e+-]+,us$" || { echo "no $m rows"; exit 1; }
        ! echo "$out" | grep -Eq ",(0|-[0-9.e+-]*|nan|inf),us$" || { echo "non-positive value"; exit 1; }' \
        _ "$m" "${cab_launch[@]}" -n 3 "$bench/cab_bench" --quick --mode "$m"
done
t_run bench/cab_bench-bad-mode 60 bash -c 'out=$("$@" 2>&1) && { echo "$out"; echo "accepted"; exit 1; }; echo "$out";
    grep -q "bad value .sideways. for --mode" <<<"$out"' \
    _ "${launch[@]}" -n 3 "$bench/cab_bench" --quick --mode sideways
t_run bench/memcpy_saturation 120 bash -c 'out=$("$@") || exit 1; echo "$out";
    echo "$out" | grep -Eq "^N_saturate: [1-9][0-9]* " || { echo "no N_saturate line"; exit 1; }' \
    _ "$bench/memcpy_saturation"
# pingpong's latency with one buffer for send and receive (OSU's separate
# buffers are the default), and the option refused by a benchmark without it.
t_run bench/pingpong-one-buffer 120 bash -c 'out=$("$@") || exit 1; echo "$out";
    echo "$out" | grep -q "^# params: .* buffers=one$" || { echo "no buffers=one in the parameters"; exit 1; }
    echo "$out" | grep -Eq "^pingpong,latency,[0-9]+,latency,[0-9.e+-]+,us$" || { echo "no latency rows"; exit 1; }' \
    _ "${launch[@]}" -n 2 "$bench/pingpong" --quick --buffers one
t_run bench/buffers-refused 60 bash -c 'out=$("$@" 2>&1) && { echo "$out"; echo "accepted"; exit 1; }; echo "$out";
    grep -q "buffers is not an option of mt_msgrate" <<<"$out"' \
    _ "${launch[@]}" -n 1 "$bench/mt_msgrate" --quick --buffers one
# PiP-MColl's collective benchmark in each mode on 3 ranks, as PiP tasks
# when PiP is built (it checks each size's result itself).
for m in bcast gather scatter reduce allreduce allgather; do
    t_run "bench/mcoll_bench-$m" 120 bash -c 'm=$1; shift; out=$("$@") || exit 1; echo "$out";
        echo "$out" | grep -q "^# library: MPICH-CX Version:" || { echo "no MPICH-CX library line"; exit 1; }
        [ "$(echo "$out" | grep -Ec "^mcoll_bench,$m,[0-9]+,latency,[0-9.e+-]+,us$")" = 6 ] || { echo "not 6 $m rows"; exit 1; }
        ! echo "$out" | grep -Eq ",(0|-[0-9.e+-]*|nan|inf),us$" || { echo "non-positive value"; exit 1; }' \
        _ "$m" "${cab_launch[@]}" -n 3 "$bench/mcoll_bench" --quick --mode "$m"
done
# PAPI where the kernel exposes no counters (these VMs): mt_msgrate built
# with PAPI says so on stderr and prints no instruction rows rather than a
# made-up count; where counters exist, it prints them.
if [ -e /usr/include/papi.h ]; then
    t_run bench/papi-counters 120 bash -c 'mpicc=$1 src=$2 out_dir=$3; shift 3
        "$mpicc" -O2 -DCX_HAVE_PAPI -I"$src" -o "$out_dir/mt_msgrate-papi" \
            "$src/mt_msgrate.c" "$src/bench_common.c" -lpapi -lm -pthread || exit 1
        out=$("$@" -n 2 "$out_dir/mt_msgrate-papi" --quick --threads 1 2>&1) || exit 1; echo "$out"
        echo "$out" | grep -q "^# counters: PAPI" || { echo "not built with PAPI"; exit 1; }
        if echo "$out" | grep -q "^# papi: .*unavailable"; then
            ! echo "$out" | grep -q ",instructions," || { echo "instruction rows without counters"; exit 1; }
        else
            echo "$out" | grep -Eq ",instructions,[0-9.e+]+," || { echo "counters but no instruction rows"; exit 1; }
        fi' _ "$prefix/bin/mpicc" "$here/../../benchmarks" "$work" "${launch[@]}"
else
    t_result SKIP bench/papi-counters "no papi.h (libpapi-dev)"
fi
