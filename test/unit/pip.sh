#!/usr/bin/env bash
# Copyright (C) MPICH-CX contributors. See COPYRIGHT in top-level directory.
# Unit tests of the PiP runtime (src/pm/pip: mpich-cx-piphost), no MPI: a
# test program loaded as several tasks of one process (private globals,
# per-task exit codes, exit/_exit/_Exit/quick_exit/return ending one task only,
# also called in a library of the task or in its C library, environments,
# streams, a pointer dereferenced across tasks, threads inside a task, CPU
# binding, a crash reported with its task) and the binaries PiP must refuse.
# Builds into ${T_WORKDIR:-/tmp/cx-pip-tests}.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
work=${T_WORKDIR:-/tmp/cx-pip-tests}
log=$T_LOGDIR/pip-build.log
if ! make -B -C "$here/pip" O="$work" > "$log" 2>&1; then
    t_result FAIL unit/pip/build "log: $log"
    exit 0
fi
H=$work/mpich-cx-piphost P=$work/task_prog
export H P work

# NAME SCRIPT: the script runs under bash -e with $H, $P and a scratch $d.
pip_test() {
    t_run "unit/pip/$1" 60 bash -ec 'd=$(mktemp -d); trap "rm -rf $d" EXIT; '"$2"
}

pip_test private-globals '
    out=$($H -n 3 $P info); echo "$out"
    for i in 0 1 2; do grep -q "^task $i of 3: counter $((i + 1)) at " <<<"$out"; done
    [ "$(grep -o "at 0x[0-9a-f]*" <<<"$out" | sort -u | wc -l)" = 3 ]'

pip_test return-codes '
    rc=0; $H $P return 0 : $P return 7 2>$d/err || rc=$?; cat $d/err
    [ $rc = 7 ] && grep -q "task 1 (.*task_prog) exited with code 7" $d/err
    ! grep -q "task 0" $d/err'

pip_test exit-ends-one-task '
    rc=0; out=$($H $P exit 3 : $P late-exit 0) || rc=$?; echo "$out"
    [ $rc = 3 ]
    grep -q "task 0: buffered line before exit" <<<"$out"   # exit flushes
    grep -q "task 0: atexit handler ran" <<<"$out"
    grep -q "task 1: still running after the others" <<<"$out"'

pip_test _exit-ends-one-task '
    rc=0; out=$($H $P _exit 4 : $P late-exit 0) || rc=$?; echo "$out"
    [ $rc = 4 ]
    ! grep -q "task 0" <<<"$out"        # _exit: no flush, no atexit handlers
    grep -q "task 1: still running after the others" <<<"$out"'

pip_test return-runs-atexit '
    out=$($H $P return 0); echo "$out"
    grep -q "task 0: atexit handler ran" <<<"$out"'

# NAME "ACTION CODE [ARG]" HANDLER [SETTING]: task 0 ends that way, with its
# status reported, while task 1 goes on; HANDLER: which of its handlers ran
# (atexit: also its buffered line flushed; none: nothing printed at all)
ends_one() {
    local code=${2#* }
    pip_test "$1" "${4:-}"'
        rc=0; out=$($H --status-fd 3 $P '"$2"' : $P late-exit 0 3>$d/st) || rc=$?
        echo "$out"; cat $d/st; code='"${code%% *}"'
        [ $rc = $code ]; grep -qx "0 exit $code" $d/st; grep -qx "1 exit 0" $d/st
        grep -q "task 1: still running after the others" <<<"$out"
        case '"$3"' in
            atexit) grep -q "task 0: buffered line before" <<<"$out"
                    grep -q "task 0: atexit handler ran" <<<"$out" ;;
            at_quick_exit) grep -q "task 0: at_quick_exit handler ran" <<<"$out"
                           ! grep -q "task 0: atexit" <<<"$out" ;;
            none) ! grep -q "task 0" <<<"$out" ;;
        esac'
}
ends_one quick_exit-ends-one-task "quick_exit 5" at_quick_exit
ends_one errx-ends-one-task "errx 6" atexit     # exit called by the C library itself
# called in a library of the task (as libgfortran's STOP calls exit)
ends_one library-exit-ends-one-task "lib-exit 3" atexit
ends_one library-_exit-ends-one-task "lib-_exit 4" none
ends_one library-quick_exit-ends-one-task "lib-quick_exit 5" at_quick_exit
ends_one dlopened-library-exit-ends-one-task "dlopen-exit 7 $work/libtask_late.so" atexit
# where the C library's code cannot be changed: the GOT slots of every object
for a in "exit 3|atexit" "_exit 4|none" "lib-exit 3|atexit" "lib-_exit 4|none"; do
    n=${a%%|*}; ends_one "got-fallback/${n% *}-ends-one-task" "$n" "${a#*|}" \
        "export MPICH_CX_PIP_EXIT_HOOK=got; "
done
ends_one got-fallback/quick_exit-ends-one-task "lib-quick_exit 5" none "export MPICH_CX_PIP_EXIT_HOOK=got; "

# a child process of a task ends itself only; a thread a task created ends the host
pip_test fork-child-exit '
    out=$($H --status-fd 3 $P fork-exit 9 : $P late-exit 0 3>$d/st); echo "$out"; cat $d/st
    grep -qx "task 0: child exited with 9" <<<"$out"
    [ "$(grep -c "^0 exit" $d/st)" = 1 ]; grep -qx "0 exit 0" $d/st'
pip_test thread-exit-ends-host '
    rc=0; $H $P thread-exit 9 : $P late-exit 0 >$d/out 2>$d/err || rc=$?; cat $d/out $d/err
    [ $rc = 9 ]; grep -q "exit(9) called on a thread a task created: ending every task" $d/err
    ! grep -q "task 1" $d/out'

pip_test status-fd '
    rc=0; $H --status-fd 3 $P return 0 : $P return 5 3>$d/status || rc=$?; cat $d/status
    [ $rc = 5 ] && grep -qx "0 exit 0" $d/status && grep -qx "1 exit 5" $d/status'

pip_test ctype-in-task '
    out=$($H $P ctype a1b22 : $P ctype 345); echo "$out"
    grep -qx "task 0: 3 digits, Q" <<<"$out" && grep -qx "task 1: 3 digits, Q" <<<"$out"'

pip_test environment '
    out=$(FOO=host GLIBC_TUNABLES= $H --env FOO=task $P env FOO : $P env FOO : \
          $P env GLIBC_TUNABLES : $P env MPICH_CX_PIP_TASK); echo "$out"
    grep -qx "task 0: FOO=task" <<<"$out" && grep -qx "task 1: FOO=host" <<<"$out"
    grep -qx "task 2: GLIBC_TUNABLES=" <<<"$out"     # the host'"'"'s own setting is not theirs
    grep -qx "task 3: MPICH_CX_PIP_TASK=3" <<<"$out"'

pip_test clean-env '
    out=$(FOO=host $H --clean-env --env BAR=1 $P env FOO : --env BAR=2 $P env BAR); echo "$out"
    grep -qx "task 0: FOO=(unset)" <<<"$out" && grep -qx "task 1: BAR=2" <<<"$out"'

pip_test task-fd-closed-at-task-end '
    out=$($H --task-fd 7 $P return 0 : $P fd-open 7 : $P fd-open 8 7>$d/f7 8>$d/f8); echo "$out"
    grep -qx "task 1: fd 7 closed" <<<"$out"     # task 0 ended: its fd with it
    grep -qx "task 2: fd 8 open" <<<"$out"'

pip_test streams '
    $H --stdout-fd 3 --stderr-fd 4 $P streams : --stdout-fd 5 --stderr-fd 6 $P streams \
        3>$d/o0 4>$d/e0 5>$d/o1 6>$d/e1
    head $d/*
    [ "$(cat $d/o0)" = "task 0: to stdout" ] && [ "$(cat $d/e0)" = "task 0: to stderr" ]
    [ "$(cat $d/o1)" = "task 1: to stdout" ] && [ "$(cat $d/e1)" = "task 1: to stderr" ]'

pip_test shared-address-space '
    out=$($H $P publish $d : $P deref $d); echo "$out"
    grep -q "^task 1 read through 0x[0-9a-f]*: written by task 0 " <<<"$out"'

pip_test threads-in-a-task '
    out=$($H -n 2 $P threads 8); echo "$out"
    [ "$(grep -c ": 8000 bumps" <<<"$out")" = 2 ]'

pip_test pid-per-task '
    out=$($H -n 3 $P pid); echo "$out"
    # three distinct pids (all the host'"'"'s without the hook), the same in a task'"'"'s threads
    [ "$(sed -n "s/.*: pid \([0-9]*\), in a thread \1$/\1/p" <<<"$out" | sort -u | wc -l)" = 3 ]'

# the same hooks in a read-only (RELRO, bound-now) GOT
pip_test read-only-got '
    P=$work/task_prog_now
    out=$($H -n 2 $P pid); echo "$out"
    [ "$(sed -n "s/.*: pid \([0-9]*\), in a thread \1$/\1/p" <<<"$out" | sort -u | wc -l)" = 2 ]
    rc=0; out=$($H $P exit 3 : $P late-exit 0) || rc=$?; echo "$out"
    [ $rc = 3 ] && grep -q "task 0: atexit handler ran" <<<"$out"'

pip_test cpu-binding '
    out=$($H --cpus 0 $P cpus : $P cpus); echo "$out"
    grep -qx "task 0 cpus: 0" <<<"$out"'

pip_test crash-names-task '
    rc=0; $H $P late-exit 0 : $P crash 2>$d/err || rc=$?; cat $d/err
    [ $rc = 139 ] && grep -q "task 1 (.*task_prog) crashed: signal SIGSEGV" $d/err'

pip_test fifteen-tasks '
    [ "$($H -n 15 $P info | wc -l)" = 15 ]'

pip_test sixteen-refused '
    rc=0; $H -n 8 $P info : -n 8 $P info >$d/out 2>$d/err || rc=$?; cat $d/err
    [ $rc = 2 ] && [ ! -s $d/out ] && grep -q "16 tasks asked for: a host runs at most 15" $d/err'

# NAME BINARY EXPECTED-TEXT: refused before anything runs, with the reason.
refuse() {
    pip_test "refuse-$1" '
        rc=0; $H $P info : '"$work/$2"' info >$d/out 2>$d/err || rc=$?; cat $d/err
        [ $rc = 1 ] && [ ! -s $d/out ] && grep -q "'"$3"'" $d/err
        $H --check '"$work/$2"' && exit 1; true'
}
refuse copy-relocations task_prog_fpie "has copy relocations (of '.*'): it was compiled without -fPIC.*rebuild it with mpich-cx's mpicc"
refuse not-pie task_prog_nopie "not a position-independent executable (linked without -pie).*rebuild it"
refuse static task_prog_static "statically linked; PiP loads every rank with the dynamic loader"
refuse no-rdynamic task_prog_nordynamic "does not export 'main' (linked without -rdynamic)"
refuse missing no-such-program "cannot open: No such file or directory"
pip_test check-accepts '$H --check $P | grep -q "can run as a PiP task"'
