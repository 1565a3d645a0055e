#!/usr/bin/env bash
# Copyright (C) MPICH-CX contributors. See COPYRIGHT in top-level directory.
# Unit tests of the shared PiP single copy (src/mpid/ch4/shm/ipc/pip/
# pip_share.h), no MPI: a receiver and a helping sender as two threads.
# Built and run normally, under ThreadSanitizer and under AddressSanitizer
# + UBSan (unit/pipshare/[tsan/|asan/]NAME). Builds into
# ${T_WORKDIR:-/tmp/cx-pipshare-tests}.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
work=${T_WORKDIR:-/tmp/cx-pipshare-tests}
tests=(alone help window stream)

# VARIANT CFLAGS
for v in "normal|-O2 -g -Wall -Wextra -std=c11" \
         "tsan|-O1 -g -Wall -Wextra -std=c11 -fsanitize=thread" \
         "asan|-O1 -g -Wall -Wextra -std=c11 -fsanitize=address,undefined -fno-sanitize-recover"; do
    name=${v%%|*} cflags=${v#*|}
    log=$T_LOGDIR/pipshare-build-$name.log
    sub=; [ "$name" = normal ] || sub=$name/
    if ! make -B -C "$here/pipshare" O="$work/$name" CFLAGS="$cflags" > "$log" 2>&1; then
        for t in "${tests[@]}"; do
            t_result FAIL "unit/pipshare/${sub}$t" "build failed; log: $log"
        done
        continue
    fi
    for t in "${tests[@]}"; do
        t_run "unit/pipshare/${sub}$t" 120 "$work/$name/test_share" "$t"
    done
done
