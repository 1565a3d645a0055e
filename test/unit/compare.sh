#!/usr/bin/env bash
# Copyright (C) MPICH-CX contributors. See COPYRIGHT in top-level directory.
# Runs the comparison runner's unit tests; one result line per test.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
out=$(cd "$here" && python3 -m unittest -v test_compare 2>&1)
while read -r line; do
    # "test_name (module.Class.test_name) ... ok|FAIL|ERROR|skipped 'why'"
    name=$(sed -E 's/^([a-z_0-9]+) .*/\1/' <<<"$line")
    case $line in
        *"... ok") t_result PASS "unit/compare/$name" ;;
        *"... skipped"*) t_result SKIP "unit/compare/$name" "${line##*skipped }" ;;
        *"... FAIL"|*"... ERROR") t_result FAIL "unit/compare/$name" "see $T_LOGDIR/compare.log" ;;
    esac
done < <(grep -E '^test_[a-z_0-9]+ .*\.\.\. ' <<<"$out")
printf '%s\n' "$out" > "$T_LOGDIR/compare.log"
grep -q '^OK' <<<"$out" || t_result FAIL unit/compare "unittest did not end OK; see $T_LOGDIR/compare.log"
