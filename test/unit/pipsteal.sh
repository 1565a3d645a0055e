#!/usr/bin/env bash
# Copyright (C) MPICH-CX contributors. See COPYRIGHT in top-level directory.
# Unit tests of CAB-MPI's core (src/mpid/ch4/shm/ipc/pip/pip_steal*.h), no
# MPI: an owner and workers as threads, victim choice on fake NUMA maps;
# which window peers PiP tasks reach directly (pip_win_reach.h); Daps's
# guard and steal protocol (mpichcx_daps.h, pip_daps.h); PiP-MColl's
# meetings and partition (pip_mcoll_sync.h) and SIMD reductions
# (pip_mcoll_vec.h).
# Built and run normally, under ThreadSanitizer and under AddressSanitizer
# + UBSan (unit/pipsteal/[tsan/|asan/]NAME). Builds into
# ${T_WORKDIR:-/tmp/cx-pipsteal-tests}.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
work=${T_WORKDIR:-/tmp/cx-pipsteal-tests}
tests=(segments alone steal waiter shared-waiter reduce window victims stream)
daps_tests=(exclusion nested disable pick threads slots)
mcoll_tests=(posts reuse parts oneway)

# VARIANT CFLAGS
for v in "normal|-O2 -g -Wall -Wextra -std=c11" \
         "tsan|-O1 -g -Wall -Wextra -std=c11 -fsanitize=thread" \
         "asan|-O1 -g -Wall -Wextra -std=c11 -fsanitize=address,undefined -fno-sanitize-recover"; do
    name=${v%%|*} cflags=${v#*|}
    log=$T_LOGDIR/pipsteal-build-$name.log
    sub=; [ "$name" = normal ] || sub=$name/
    if ! make -B -C "$here/pipsteal" O="$work/$name" CFLAGS="$cflags" all > "$log" 2>&1; then
        for t in "${tests[@]}"; do
            t_result FAIL "unit/pipsteal/${sub}$t" "build failed; log: $log"
        done
        t_result FAIL "unit/pipwin/${sub}reach" "build failed; log: $log"
        for t in "${daps_tests[@]}"; do
            t_result FAIL "unit/pipdaps/${sub}$t" "build failed; log: $log"
        done
        for t in "${mcoll_tests[@]}"; do
            t_result FAIL "unit/mcoll/${sub}$t" "build failed; log: $log"
        done
        t_result FAIL "unit/mcoll/${sub}vec" "build failed; log: $log"
        continue
    fi
    for t in "${tests[@]}"; do
        t_run "unit/pipsteal/${sub}$t" 120 "$work/$name/test_steal" "$t"
    done
    t_run "unit/pipwin/${sub}reach" 60 "$work/$name/test_win_reach"
    for t in "${daps_tests[@]}"; do
        t_run "unit/pipdaps/${sub}$t" 120 "$work/$name/test_daps" "$t"
    done
    for t in "${mcoll_tests[@]}"; do
        t_run "unit/mcoll/${sub}$t" 120 "$work/$name/test_mcoll_sync" "$t"
    done
    t_run "unit/mcoll/${sub}vec" 120 "$work/$name/test_mcoll_vec"
done
