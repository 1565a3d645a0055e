#!/usr/bin/env bash
# Copyright (C) MPICH-CX contributors. See COPYRIGHT in top-level directory.
# Unit tests of the constant-time matcher (src/util/matching), no MPI: each
# test with the real hash (unit/matching/NAME) and with every key in one
# bucket (unit/matching/collide/NAME), with the tables always in use and again
# with short mode up to 2 elements and a return to it after one calm post
# (unit/matching/moves/...: the queues move into the tables and back all the
# time); the differential fuzzer runs a
# million operations against a linear reference matcher, also in short mode
# only (list max 1000). Builds into ${T_WORKDIR:-/tmp/cx-matching-tests}; also
# run under AddressSanitizer+UBSan.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
work=${T_WORKDIR:-/tmp/cx-matching-tests}
tests=(orders unexpected cancel contexts reclaim rehash fuzz)
once=(short oom)        # they choose their own list max

# VARIANT CFLAGS
for v in "normal|-O2 -g -Wall -Wextra -std=c11" \
         "asan|-O1 -g -Wall -Wextra -std=c11 -fsanitize=address,undefined -fno-sanitize-recover"; do
    name=${v%%|*} cflags=${v#*|}
    log=$T_LOGDIR/matching-build-$name.log
    sub=; [ "$name" = normal ] || sub=$name/
    if ! make -B -C "$here/matching" O="$work/$name" CFLAGS="$cflags" > "$log" 2>&1; then
        for t in "${tests[@]}" "${once[@]}"; do
            t_result FAIL "unit/matching/${sub}$t" "build failed; log: $log"
        done
        continue
    fi
    for t in "${tests[@]}"; do
        for lm in 0 "2 -c 1"; do
            m=; [ "$lm" = 0 ] || m=moves/
            t_run "unit/matching/${sub}$m$t" 120 "$work/$name/test_match" -l $lm "$t"
            t_run "unit/matching/${sub}${m}collide/$t" 120 "$work/$name/test_match_collide" -l $lm "$t"
        done
    done
    for t in "${once[@]}"; do
        t_run "unit/matching/${sub}$t" 120 "$work/$name/test_match" "$t"
        t_run "unit/matching/${sub}collide/$t" 120 "$work/$name/test_match_collide" "$t"
    done
    t_run "unit/matching/${sub}short-only/fuzz" 120 "$work/$name/test_match" -l 1000 fuzz
done
