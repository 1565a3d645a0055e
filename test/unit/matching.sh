#!/usr/bin/env bash
# Unit tests of the constant-time matcher (src/util/matching), no MPI: each
# test with the real hash (unit/matching/NAME) and with every key in one
# bucket (unit/matching/collide/NAME); the differential fuzzer runs a million
# operations against a linear reference matcher. Builds into
# ${T_WORKDIR:-/tmp/cx-matching-tests}; also run under AddressSanitizer.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
work=${T_WORKDIR:-/tmp/cx-matching-tests}
tests=(orders unexpected cancel contexts reclaim rehash fuzz)

# VARIANT CFLAGS
for v in "normal|-O2 -g -Wall -Wextra -std=c11" \
         "asan|-O1 -g -Wall -Wextra -std=c11 -fsanitize=address,undefined -fno-sanitize-recover"; do
    name=${v%%|*} cflags=${v#*|}
    log=$T_LOGDIR/matching-build-$name.log
    sub=; [ "$name" = normal ] || sub=$name/
    if ! make -B -C "$here/matching" O="$work/$name" CFLAGS="$cflags" > "$log" 2>&1; then
        for t in "${tests[@]}"; do
            t_result FAIL "unit/matching/${sub}$t" "build failed; log: $log"
        done
        continue
    fi
    for t in "${tests[@]}"; do
        t_run "unit/matching/${sub}$t" 120 "$work/$name/test_match" "$t"
        t_run "unit/matching/${sub}collide/$t" 120 "$work/$name/test_match_collide" "$t"
    done
done
