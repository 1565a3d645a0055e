#!/usr/bin/env bash
# Copyright (C) MPICH-CX contributors. See COPYRIGHT in top-level directory.
# Unit tests of the build scripts' behaviour and error paths, on small fake
# MPICH tarballs: no network, no MPI, a few seconds.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
. "$here/../lib.sh"
scripts=$repo/scripts
w=$(mktemp -d); trap '[ -n "${KEEP:-}" ] || rm -rf "$w"' EXIT; [ -n "${KEEP:-}" ] && echo "work dir: $w" >&2
export MPICH_CX_CACHE=$w/cache MPICH_CX_NO_CCACHE=1

# expect_fail NAME PATTERN COMMAND...: the command must fail and its error
# output must match PATTERN (the message that tells the user what to do).
expect_fail() {
    local name=$1 pat=$2; shift 2
    local out rc
    out=$("$@" 2>&1) && rc=0 || rc=$?
    if [ $rc = 0 ]; then
        t_result FAIL "$name" "succeeded, expected a failure"
    elif ! grep -Eq -- "$pat" <<<"$out"; then
        t_result FAIL "$name" "message lacks /$pat/: $(head -c 300 <<<"$out")"
    else
        t_result PASS "$name"
    fi
}

# A fake MPICH 4.0.2 tarball: a few files and an autogen.sh that "generates".
mkfake() {
    local d=$w/fake/mpich-4.0.2
    rm -rf "$w/fake"; mkdir -p "$d/src/util"
    printf 'line one\nline two\nline three\n' > "$d/README"
    printf 'mpi_core_sources += src/util/a.c\n' > "$d/src/util/Makefile.mk"
    printf '#!/bin/sh\n[ "$1" = -quick ] || exit 3\necho generated > configure\necho regenerated >> README.in\n' > "$d/autogen.sh"
    printf 'template\n' > "$d/README.in"
    chmod +x "$d/autogen.sh"
    tar -C "$w/fake" -cJf "$w/fake.tar.xz" mpich-4.0.2
    sha256sum "$w/fake.tar.xz" | awk '{print $1}'
}
fake_sha=$(mkfake)

# ---- fetch-mpich ----------------------------------------------------------
expect_fail unit/fetch-bad-checksum 'checksum mismatch.*' \
    env MPICH_TARBALL="$w/fake.tar.xz" "$scripts/fetch-mpich"
expect_fail unit/fetch-missing-file 'does not exist' \
    env MPICH_TARBALL="$w/nonexistent.tar.xz" "$scripts/fetch-mpich"
out=$(MPICH_TARBALL="$w/fake.tar.xz" MPICH_TARBALL_SHA256=$fake_sha "$scripts/fetch-mpich" 2>&1)
t_check unit/fetch-explicit-tarball "an explicit tarball with its checksum is not used: $out" \
    test "$out" = "$w/fake.tar.xz"
t_check unit/fetch-explicit-not-cached "a non-pinned tarball was put in the cache" \
    test ! -e "$w/cache/mpich_4.0.2.orig.tar.xz"

# No network, no tarball: apt sources point at a closed loopback port.
mkdir -p "$w/apt/sources.list.d"
echo "deb http://127.0.0.1:9/debian bookworm main" > "$w/apt/sources.list"
expect_fail unit/fetch-no-network 'could not obtain the MPICH 4.0.2.*|MPICH_TARBALL=' \
    env MPICH_CX_APT_ETC="$w/apt" timeout 120 "$scripts/fetch-mpich"
expect_fail unit/fetch-no-sources 'MPICH_TARBALL=/path' \
    env MPICH_CX_APT_ETC="$w/empty" "$scripts/fetch-mpich"

# A corrupt cached tarball is discarded, not used.
mkdir -p "$w/cache"; echo junk > "$w/cache/mpich_4.0.2.orig.tar.xz"
out=$(MPICH_CX_NO_APT=1 "$scripts/fetch-mpich" 2>&1)
t_check unit/fetch-corrupt-cache "a corrupt cache entry was not discarded: $out" \
    bash -c '[ ! -e "$1" ] && grep -q "wrong checksum" <<<"$2"' _ "$w/cache/mpich_4.0.2.orig.tar.xz" "$out"

# deb-src entries derived from both formats of apt sources.
mkdir -p "$w/apt2/sources.list.d"
cat > "$w/apt2/sources.list" <<'L'
# a comment
deb [signed-by=/k.gpg] http://mirror.example/debian bookworm main contrib
deb-src http://mirror.example/debian bookworm main
L
cat > "$w/apt2/sources.list.d/debian.sources" <<'L'
Types: deb
URIs: http://mirror.example/debian
Suites: bookworm bookworm-updates
Components: main

Types: deb-src
URIs: http://other.example/debian
Suites: sid
Components: main

Types: deb deb-src
URIs: http://mirror.example/security
Suites: bookworm-security
Components: main
L
out=$(MPICH_CX_APT_ETC="$w/apt2" "$scripts/fetch-mpich" --print-deb-src 2>&1)
t_check unit/deb-src-one-line "one-line sources.list entry not converted: $out" \
    grep -qxF 'deb-src [signed-by=/k.gpg] http://mirror.example/debian bookworm main contrib' <<<"$out"
t_check unit/deb-src-deb822 "deb822 stanzas not converted (expected 2 deb-src stanzas): $out" \
    bash -c '[ "$(grep -c "^Types: deb-src$" <<<"$1")" = 2 ] && grep -q "Suites: bookworm-security" <<<"$1" && ! grep -q "Suites: sid" <<<"$1"' _ "$out"

# ---- assemble ---------------------------------------------------------------
mkdir -p "$w/p_ok" "$w/p_bad" "$w/src_ok/util/cx" "$w/src_clash/util"
cat > "$w/p_ok/0001-readme.patch" <<'L'
--- a/README
+++ b/README
@@ -1,3 +1,3 @@
 line one
-line two
+line two, patched
 line three
L
printf '0001-readme.patch\n' > "$w/p_ok/series"
cp "$w/p_ok/0001-readme.patch" "$w/p_bad/0001-readme.patch"
sed 's/line three/line 3/' "$w/p_ok/0001-readme.patch" > "$w/p_bad/0002-conflict.patch"
printf '0001-readme.patch\n0002-conflict.patch\n' > "$w/p_bad/series"
echo 'new file' > "$w/src_ok/util/cx/new.c"
echo 'clash' > "$w/src_clash/util/Makefile.mk"
# assemble checks only the name of the top directory, so the fake tarball works.
expect_fail unit/assemble-bad-patch "patch '0002-conflict.patch' does not apply" \
    env MPICH_CX_PATCH_DIR="$w/p_bad" MPICH_CX_SRC_DIR="$w/src_ok" \
    "$scripts/assemble" --tarball "$w/fake.tar.xz" --dest "$w/t_bad"
t_check unit/assemble-bad-patch-nothing-left "a failed assembly left a tree behind" \
    bash -c '[ ! -e "$1" ] && [ ! -e "$1.tmp" ]' _ "$w/t_bad"
mkdir -p "$w/p_missing"
expect_fail unit/assemble-series-missing-patch "names 'nope.patch', which does not exist" \
    bash -c 'printf "nope.patch\n" > "$1/series"; MPICH_CX_PATCH_DIR="$1" "$2" --tarball "$3" --dest "$4"' \
    _ "$w/p_missing" "$scripts/assemble" "$w/fake.tar.xz" "$w/t_missing"
expect_fail unit/assemble-src-clash "src/util/Makefile.mk exists in pristine MPICH" \
    env MPICH_CX_PATCH_DIR="$w/p_ok" MPICH_CX_SRC_DIR="$w/src_clash" \
    "$scripts/assemble" --tarball "$w/fake.tar.xz" --dest "$w/t_clash"
expect_fail unit/assemble-not-a-tarball "could not unpack" \
    bash -c 'echo x > "$1"; "$2" --tarball "$1" --dest "$3"' _ "$w/junk.tar.xz" "$scripts/assemble" "$w/t_junk"
expect_fail unit/assemble-bad-version "does not start with a version: 'v1 beta'" \
    bash -c 'echo "v1 beta" > "$1"; MPICH_CX_VERSION_FILE="$1" MPICH_CX_PATCH_DIR="$2" MPICH_CX_SRC_DIR="$3" \
        "$4" --tarball "$5" --dest "$6"' _ "$w/VERSION.bad" "$w/p_ok" "$w/src_ok" "$scripts/assemble" \
    "$w/fake.tar.xz" "$w/t_badversion"
mkdir -p "$w/src_version/include"; echo '#define MPICHCX_VERSION "0"' > "$w/src_version/include/mpichcx_version.h"
expect_fail unit/assemble-version-header-in-src "src/include/mpichcx_version.h is generated by scripts/assemble" \
    env MPICH_CX_PATCH_DIR="$w/p_ok" MPICH_CX_SRC_DIR="$w/src_version" \
    "$scripts/assemble" --tarball "$w/fake.tar.xz" --dest "$w/t_version"

t=$w/tree
MPICH_CX_PATCH_DIR="$w/p_ok" MPICH_CX_SRC_DIR="$w/src_ok" \
    "$scripts/assemble" --tarball "$w/fake.tar.xz" --dest "$t" > "$w/asm.log" 2>&1
t_check unit/assemble-ok "assembly failed: $(tail -n 3 "$w/asm.log")" test -f "$t/configure"
t_check unit/assemble-patch-applied "0001-readme.patch not applied" grep -qx 'line two, patched' "$t/README"
t_check unit/assemble-overlay "src/ not overlaid at MPICH's src/" test -f "$t/src/util/cx/new.c"
t_check unit/assemble-version-header "src/include/mpichcx_version.h does not hold VERSION's $CX_VERSION" \
    grep -qx "#define MPICHCX_VERSION \"$CX_VERSION\"" "$t/src/include/mpichcx_version.h"
t_check unit/assemble-history "tree history is not pristine, overlay, one commit per patch" \
    bash -c '[ "$(git -C "$1" log --format=%s | head -n 2 | tr "\n" "|")" = "0001-readme.patch|mpich-cx: overlay src/|" ] && git -C "$1" rev-parse -q --verify mpich-4.0.2' _ "$t"
t_check unit/tree-edits-clean "a fresh tree reports edits" "$scripts/tree-edits" "$t"

# ---- regen-patches round trip -----------------------------------------------
cp -r "$w/p_ok" "$w/p_rt"; cp -r "$w/src_ok" "$w/src_rt"
echo "line four" >> "$t/README"
t_check unit/tree-edits-dirty "an uncommitted edit is not reported" \
    bash -c '! "$1" "$2" >/dev/null' _ "$scripts/tree-edits" "$t"
expect_fail unit/assemble-keeps-edits "holds edits not saved to this repository" \
    env MPICH_CX_PATCH_DIR="$w/p_ok" MPICH_CX_SRC_DIR="$w/src_ok" \
    "$scripts/assemble" --tarball "$w/fake.tar.xz" --dest "$t"
t_check unit/assemble-keeps-edits-intact "the refused assembly touched the edited tree" \
    grep -qx "line four" "$t/README"
expect_fail unit/regen-refuses-dirty "uncommitted edits" \
    env MPICH_CX_PATCH_DIR="$w/p_rt" MPICH_CX_SRC_DIR="$w/src_rt" "$scripts/regen-patches" "$t"
git -C "$t" -c user.name=t -c user.email=t@t commit -qam 0002-readme-four.patch
echo "line five" >> "$t/README"     # a second, adjacent commit of the same patch
git -C "$t" -c user.name=t -c user.email=t@t commit -qm 0002-readme-four.patch README
echo "/* edited */" >> "$t/src/util/cx/new.c"
git -C "$t" -c user.name=t -c user.email=t@t commit -qam "edit an overlay file"
MPICH_CX_PATCH_DIR="$w/p_rt" MPICH_CX_SRC_DIR="$w/src_rt" "$scripts/regen-patches" "$t" > "$w/regen.log" 2>&1
t_check unit/regen-series "series is not 0001 then 0002: $(cat "$w/p_rt/series" 2>/dev/null | grep -v '^#' | tr '\n' ' ')" \
    bash -c '[ "$(grep -v "^#" "$1" | tr "\n" " ")" = "0001-readme.patch 0002-readme-four.patch " ]' _ "$w/p_rt/series"
t_check unit/regen-src-copied-back "an edit to an overlay file did not reach src/" \
    grep -q 'edited' "$w/src_rt/util/cx/new.c"
t_check unit/regen-patch-content "0002 does not add lines four and five (both commits)" \
    bash -c 'grep -qx "+line four" "$1" && grep -qx "+line five" "$1"' _ "$w/p_rt/0002-readme-four.patch"
t_check unit/regen-no-generated "a generated file leaked into the patches" \
    bash -c '! grep -q "configure\|README.in" "$1"/*.patch' _ "$w/p_rt"
MPICH_CX_PATCH_DIR="$w/p_rt" MPICH_CX_SRC_DIR="$w/src_rt" \
    "$scripts/assemble" --tarball "$w/fake.tar.xz" --dest "$w/tree2" > "$w/asm2.log" 2>&1
t_check unit/regen-reassembles "the regenerated patches do not rebuild the same tree" \
    bash -c 'diff -q "$1/README" "$2/README" && diff -q "$1/src/util/cx/new.c" "$2/src/util/cx/new.c"' _ "$t" "$w/tree2"
t_check unit/tree-edits-saved "saved commits still reported as unsaved" "$scripts/tree-edits" "$t"

# ---- one source for the version and the model names --------------------------
# VERSION holds a version; the model names of cx_mt_models.def are read, and
# every one is among the configurations the tests run (test/lib.sh T_MODELS:
# direct as the default, the others through MPIR_CVAR_CH4_MT_MODEL).
t_check unit/version-file "VERSION's first line is no version: '$CX_VERSION'" \
    bash -c '[[ $1 =~ ^[0-9][0-9A-Za-z.+~-]*$ ]]' _ "$CX_VERSION"
mapfile -t mt_models < <(cx_mt_models)
t_check unit/mt-models-read "no model names read from src/mpid/ch4/src/cx_mt_models.def" \
    test "${#mt_models[@]}" -ge 2 -a "${mt_models[0]:-}" = direct
untested=()
for m in "${mt_models[@]:1}"; do
    grep -Eq "(^| )MPIR_CVAR_CH4_MT_MODEL=$m( |$)" < <(printf '%s\n' "${T_MODELS[@]#*|}") || untested+=("$m")
done
t_check unit/mt-models-tested "models of cx_mt_models.def without a configuration in test/lib.sh T_MODELS: ${untested[*]}" \
    test ${#untested[@]} = 0

# ---- MPICH's configure knows every model (cx_mt.m4's own shell, m4 quoting
# undone, run on cx_mt_models.def): a fixed-model build once failed there
# with "model lockq is unknown" while the runtime build worked ------------------
m4sh=$w/cx_mt_check.sh
{ echo 'srcdir=$1 enable_ch4_mt=$2'
  sed -n '/^cx_mt_models=/,/^esac$/p' "$repo/src/mpid/ch4/cx_mt.m4" | sed '/^dnl/d' |
      sed 's/\[\[/[/g; s/\]\]/]/g; s/AC_MSG_ERROR(\[\(.*\)\])/{ echo "\1"; exit 1; }/'
} > "$m4sh"
for m in "${mt_models[@]}" lockless runtime; do
    t_check "unit/configure-mt-$m" "cx_mt.m4 calls --enable-ch4-mt=$m unknown: $(bash "$m4sh" "$repo" "$m" 2>&1 | head -c 200)" \
        bash "$m4sh" "$repo" "$m"
done
t_check unit/configure-mt-unknown "cx_mt.m4 accepts --enable-ch4-mt=bogus" \
    bash -c '! bash "$1" "$2" bogus && bash "$1" "$2" bogus | grep -q "bogus is unknown: use direct, lockq"' _ "$m4sh" "$repo"
