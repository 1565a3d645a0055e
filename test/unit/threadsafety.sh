#!/usr/bin/env bash
# Copyright (C) MPICH-CX contributors. See COPYRIGHT in top-level directory.
# Unit tests of the synchronization library (src/util/threadsafety): every
# test built and run normally, then again under ThreadSanitizer
# (unit/threadsafety/NAME and unit/threadsafety/tsan/NAME). Standalone: needs
# gcc, make and libhwloc-dev, not an MPICH build. Builds into
# ${T_WORKDIR:-/tmp/cx-threadsafety-tests}.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
src=$here/threadsafety
work=${T_WORKDIR:-/tmp/cx-threadsafety-tests}
mkdir -p "$work"

# NAME PROGRAM ARGS...
tests=(
    "backoff_test_budget test_backoff test_backoff"
    "ticket_mutex test_locks ticket mutex"
    "ticket_nested test_locks ticket nested"
    "ticket_fifo test_locks ticket fifo"
    "ticket_try test_locks ticket try"
    "mcs_mutex test_locks mcs mutex"
    "mcs_nested test_locks mcs nested"
    "mcs_fifo test_locks mcs fifo"
    "mcs_try test_locks mcs try"
    "clh_mutex test_locks clh mutex"
    "clh_nested test_locks clh nested"
    "clh_fifo test_locks clh fifo"
    "clh_try test_locks clh try"
    "futex_mutex test_locks futex mutex"
    "futex_nested test_locks futex nested"
    "futex_try test_locks futex try"
    "futex_sleepers test_locks futex sleepers"
    "clhub_mutex test_clhub mutex"
    "clhub_nested test_clhub nested"
    "clhub_priority test_clhub priority"
    "clhub_lowlive test_clhub lowlive"
    "hclhub_mutex test_hclhub mutex"
    "hclhub_nested test_hclhub nested"
    "hclhub_cohort test_hclhub cohort"
    "hclhub_handoff test_hclhub handoff"
    "topology_fake test_hclhub topology_fake"
    "topology_real test_hclhub topology_real"
    "swpq_basic test_swpq basic"
    "swpq_mpsc test_swpq mpsc"
    "swpq_hook test_swpq hook"
    "dsmsync_scripted test_dsmsync scripted"
    "dsmsync_stress test_dsmsync stress"
    "lockq_fifo test_lockq fifo"
    "lockq_protocol test_lockq protocol"
    "lockq_group test_lockq group"
    "lockq_group_hook test_lockq group_hook"
    "reactivation_unit test_reactivation unit"
    "reactivation_usc test_reactivation usc"
    "reactivation_ksc test_reactivation ksc"
    "reactivation_idle test_reactivation idle"
    "park_ring test_park ring"
    "park_busy test_park busy"
    "park_backoff test_park backoff"
    "park_affinity test_park affinity"
    "park_restart test_park restart"
    "poll_skip_rules test_poll_skip rules"
    "poll_skip_delay test_poll_skip delay"
    "poll_skip_quiet test_poll_skip quiet"
    "poll_skip_concurrent test_poll_skip concurrent"
    "poll_skip_pause test_poll_skip pause"
    "yield_rules test_yield rules"
    "yield_sibling test_yield sibling"
    "yield_oversub test_yield oversub"
    "offload_q_basic test_offload_q basic"
    "offload_q_dynamic test_offload_q dynamic"
    "offload_q_stopped test_offload_q stopped"
    "offload_q_race test_offload_q race"
    "offload_q_static test_offload_q static"
    "offload_q_waiters test_offload_q waiters"
    "issued_scan test_issued scan"
    "issued_race test_issued race"
)

# build VARIANT MAKE-ARGS...: 0 when built; the log is kept
build() {
    local variant=$1; shift
    local log="$T_LOGDIR/threadsafety-build-$variant.log"
    if make -C "$src" -j2 O="$work/$variant" "$@" > "$log" 2>&1; then
        return 0
    fi
    echo "build failed; log: $log"
    tail -n 15 "$log" | sed 's/^/    | /' >&2
    return 1
}

# run_all PREFIX DIR TIMEOUT FAIL-REASON [ENV...]: one result per test
run_all() {
    local prefix=$1 dir=$2 limit=$3 reason=$4; shift 4
    local entry name prog args
    for entry in "${tests[@]}"; do
        read -r name prog args <<<"$entry"
        if [ -n "$reason" ]; then
            t_result FAIL "$prefix$name" "$reason"
            continue
        fi
        # shellcheck disable=SC2086
        t_run "$prefix$name" "$limit" env "$@" "$dir/$prog" $args
    done
}

# Normal build and run.
reason=
build normal >/dev/null || reason="build failed; log: $T_LOGDIR/threadsafety-build-normal.log"
run_all unit/threadsafety/ "$work/normal" 60 "$reason" MPICH_CX_FAKE_NUMA_NODES=2

# ThreadSanitizer: check that its runtime works here first (it fails on some
# kernels, e.g. with too much mmap randomisation); if not, every tsan test
# fails with the reason rather than being skipped.
reason=
probe_dir=$work/tsan-probe
mkdir -p "$probe_dir"
cat > "$probe_dir/probe.c" <<'EOF'
#include <pthread.h>
static int x;
static void *f(void *a) { (void) a; x++; return 0; }
int main(void) { pthread_t t; pthread_create(&t, 0, f, 0); pthread_join(t, 0); return x != 1; }
EOF
if ! out=$(gcc -fsanitize=thread -O1 -pthread -o "$probe_dir/probe" "$probe_dir/probe.c" 2>&1); then
    reason="ThreadSanitizer cannot build here: $(tail -n 1 <<<"$out")"
elif ! out=$("$probe_dir/probe" 2>&1); then
    reason="ThreadSanitizer runtime does not work here: $(head -n 1 <<<"$out")"
elif ! build tsan SANITIZE=thread >/dev/null; then
    reason="tsan build failed; log: $T_LOGDIR/threadsafety-build-tsan.log"
fi
run_all unit/threadsafety/tsan/ "$work/tsan" 120 "$reason" MPICH_CX_FAKE_NUMA_NODES=2 \
    TSAN_OPTIONS=halt_on_error=1:exitcode=66
