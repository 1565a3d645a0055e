#!/usr/bin/env bash
# Copyright (C) MPICH-CX contributors. See COPYRIGHT in top-level directory.
# Unit tests of the top-level configure's error paths (seconds; no MPICH build).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
. "$here/../lib.sh"
w=$(mktemp -d); trap 'rm -rf "$w"' EXIT
if [ ! -x "$repo/configure" ]; then
    t_result FAIL unit/configure-exists "no ./configure: run ./autogen.sh first"
    exit 0
fi
# A private copy of what configure reads: the checkout may be configured in
# place, and automake refuses VPATH builds of a configured source directory.
mkdir -p "$w/src"
cp -r "$repo/configure" "$repo/Makefile.in" "$repo/cx-build.conf.in" "$repo/build-aux" \
    "$repo/scripts" "$w/src/"
repo=$w/src

# expect_configure_fail NAME PATTERN [ENV=VAL...] -- [ARGS...]
expect_configure_fail() {
    local name=$1 pat=$2; shift 2
    local envs=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    local d=$w/$name; mkdir -p "$d"
    local out rc
    out=$(cd "$d" && env "${envs[@]}" "$repo/configure" --prefix="$w/prefix" "$@" 2>&1) && rc=0 || rc=$?
    if [ $rc = 0 ]; then t_result FAIL "unit/$name" "configure succeeded"
    elif grep -Eq -- "$pat" <<<"$out"; then t_result PASS "unit/$name"
    else t_result FAIL "unit/$name" "message lacks /$pat/: $(tail -n 3 <<<"$out")"; fi
    [ ! -e "$d/Makefile" ] || t_result FAIL "unit/$name-nothing-written" "a Makefile was written"
}

expect_configure_fail configure-unknown-extension "unknown MPICH-CX extension option '--enable-cx-lockq'" -- --enable-cx-lockq
expect_configure_fail configure-unknown-extension-with "unknown MPICH-CX extension option '--with-cx-pip=yes'" -- --with-cx-pip=yes
expect_configure_fail configure-missing-libfabric "libfabric development files not found.*|install-deps" \
    PKG_CONFIG_LIBDIR="$w/none" -- 
expect_configure_fail configure-missing-ucx "UCX development files not found" \
    PKG_CONFIG_LIBDIR="$w/none" -- --with-device=ch4:ucx --with-hwloc=/usr

expect_configure_fail configure-relative-baseline-prefix "needs an absolute directory" -- --with-baseline-prefix=rel/dir

# The version and the model names come from their one sources (VERSION,
# cx_mt_models.def) when autoconf runs: a configure older than them fails here.
t_check unit/configure-version "configure --version does not report VERSION's $CX_VERSION (rerun ./autogen.sh)" \
    bash -c '"$1" --version | sed -n 1p | grep -qxF "MPICH-CX configure $2"' _ "$repo/configure" "$CX_VERSION"
t_check unit/configure-mt-models "configure's model names are not cx_mt_models.def's: $(cx_mt_models | tr '\n' ' ')(rerun ./autogen.sh)" \
    grep -qxF "cx_mt_models=\"$(cx_mt_models | paste -sd ' ' -)\"" "$repo/configure"

# Thread-safety models and VCI locks: bad values and a conflicting granularity.
expect_configure_fail configure-bad-mt-model "--enable-ch4-mt=lockfree is not a thread-safety model" -- --enable-ch4-mt=lockfree
expect_configure_fail configure-handoff "--enable-ch4-mt=handoff cannot work on MPICH 4.0.2" -- --enable-ch4-mt=handoff
expect_configure_fail configure-bad-matching "--with-ch4-matching=tree is not a matching scheme" -- --with-ch4-matching=tree
expect_configure_fail configure-bad-pip "--enable-pip=maybe: give --enable-pip or --disable-pip" -- --enable-pip=maybe
expect_configure_fail configure-bad-steal "--enable-cx-steal=maybe: give --enable-cx-steal or --disable-cx-steal" -- --enable-cx-steal=maybe
expect_configure_fail configure-steal-needs-pip "--enable-cx-steal needs PiP" -- --enable-cx-steal --disable-pip
expect_configure_fail configure-bad-daps "--enable-cx-daps=maybe: give --enable-cx-daps or --disable-cx-daps" -- --enable-cx-daps=maybe
expect_configure_fail configure-daps-needs-pip "--enable-cx-daps needs PiP" -- --enable-cx-daps --disable-pip
expect_configure_fail configure-bad-mcoll "--enable-cx-mcoll=maybe: give --enable-cx-mcoll or --disable-cx-mcoll" -- --enable-cx-mcoll=maybe
expect_configure_fail configure-mcoll-needs-pip "--enable-cx-mcoll needs PiP" -- --enable-cx-mcoll --disable-pip
expect_configure_fail configure-daps-needs-shm "--enable-cx-daps needs CH4 shared memory, but --with-device=ch4:ucx builds no" \
    -- --with-device=ch4:ucx --enable-cx-daps
expect_configure_fail configure-mcoll-needs-shm "--enable-cx-mcoll needs CH4 shared memory, but --with-ch4-shmmods=none" \
    -- --with-ch4-shmmods=none --enable-cx-mcoll
expect_configure_fail configure-bad-vci-lock "--with-ch4-vci-lock=spin is not a lock" -- --with-ch4-vci-lock=spin
expect_configure_fail configure-mt-needs-per-vci "need per-VCI critical sections" \
    -- --enable-ch4-mt=lockq --enable-thread-cs=global
expect_configure_fail configure-usc-needs-per-vci "need per-VCI critical sections" \
    -- --enable-ch4-mt=hclhub-usc --enable-thread-cs=global
d=$w/mt; mkdir -p "$d"
if (cd "$d" && "$repo/configure" --prefix="$w/p" --enable-ch4-mt=runtime) > "$d/log" 2>&1; then
    t_check unit/configure-mt-adds-per-vci "--enable-ch4-mt=runtime did not add --enable-thread-cs=per-vci" \
        bash -c 'grep -qx -- "--enable-ch4-mt=runtime" "$1" && grep -qx -- "--enable-thread-cs=per-vci" "$1"' \
        _ "$d/mpich-configure.args"
else
    t_result FAIL unit/configure-mt-adds-per-vci "configure failed: $(tail -n 3 "$d/log")"
fi

# The MPICH argument list: our defaults first, the user's arguments after.
d=$w/ok; mkdir -p "$d"
if (cd "$d" && "$repo/configure" --prefix="$w/p" --with-device=ch4:ucx --enable-g=dbg 'CFLAGS=-O1 -g') \
        > "$d/log" 2>&1; then
    t_check unit/configure-ucx-args "ch4:ucx arguments wrong: $(tr '\n' ' ' < "$d/mpich-configure.args")" \
        bash -c 'grep -qx -- "--with-ucx=/usr" "$1" && grep -qx -- "--with-device=ch4:ucx" "$1" &&
                 grep -qx -- "CFLAGS=-O1 -g" "$1" && grep -qx -- "--enable-g=dbg" "$1" &&
                 ! grep -q -- "--with-libfabric" "$1" && grep -qx -- "--prefix=$2" "$1"' _ "$d/mpich-configure.args" "$w/p"
    t_check unit/configure-baseline-prefix "baseline prefix is not PREFIX-baseline" \
        grep -qx "CX_BASELINE_PREFIX='$w/p-baseline'" "$d/cx-build.conf"
else
    t_result FAIL unit/configure-ucx-args "configure failed: $(tail -n 3 "$d/log")"
fi
# --with-tcmalloc: MPL's allocations on tcmalloc (CPPFLAGS), libmpi linked
# with it (LIBS); the user's own CPPFLAGS and LIBS kept, once each
d=$w/tcmalloc; mkdir -p "$d"
if (cd "$d" && "$repo/configure" --prefix="$w/p" --with-tcmalloc CPPFLAGS=-DUSER_FLAG LIBS=-lm) \
        > "$d/log" 2>&1; then
    t_check unit/configure-tcmalloc-args "--with-tcmalloc arguments wrong: $(tr '\n' ' ' < "$d/mpich-configure.args")" \
        bash -c 'grep -qx -- "CPPFLAGS=-DMPL_CX_TCMALLOC -DUSER_FLAG" "$1" &&
                 grep -qx -- "LIBS=-ltcmalloc -lm" "$1" && [ "$(grep -c "^CPPFLAGS=" "$1")" = 1 ] &&
                 [ "$(grep -c "^LIBS=" "$1")" = 1 ]' _ "$d/mpich-configure.args"
elif ! [ -e /usr/include/gperftools/tcmalloc.h ]; then
    t_result SKIP unit/configure-tcmalloc-args "no gperftools/tcmalloc.h (libgoogle-perftools-dev)"
else
    t_result FAIL unit/configure-tcmalloc-args "configure failed: $(tail -n 3 "$d/log")"
fi
