#!/usr/bin/env bash
# Copyright (C) MPICH-CX contributors. See COPYRIGHT in top-level directory.
# Unit tests of PiP-MColl's meetings and partition
# (src/mpid/ch4/shm/ipc/pip/pip_mcoll_sync.h), no MPI: threads as ranks.
# Built and run normally, under ThreadSanitizer and under AddressSanitizer
# + UBSan (unit/mcoll/[tsan/|asan/]NAME). Builds into
# ${T_WORKDIR:-/tmp/cx-mcoll-tests}.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
work=${T_WORKDIR:-/tmp/cx-mcoll-tests}
tests=(posts reuse parts)

for v in "normal|-O2 -g -Wall -Wextra -std=c11" \
         "tsan|-O1 -g -Wall -Wextra -std=c11 -fsanitize=thread" \
         "asan|-O1 -g -Wall -Wextra -std=c11 -fsanitize=address,undefined -fno-sanitize-recover"; do
    name=${v%%|*} cflags=${v#*|}
    log=$T_LOGDIR/mcoll-build-$name.log
    sub=; [ "$name" = normal ] || sub=$name/
    if ! make -B -C "$here/mcoll" O="$work/$name" CFLAGS="$cflags" all > "$log" 2>&1; then
        for t in "${tests[@]}"; do
            t_result FAIL "unit/mcoll/${sub}$t" "build failed; log: $log"
        done
        continue
    fi
    for t in "${tests[@]}"; do
        t_run "unit/mcoll/${sub}$t" 120 "$work/$name/test_mcoll_sync" "$t"
    done
done
