# Copyright (C) MPICH-CX contributors. See COPYRIGHT in top-level directory.
# Shared definitions for the MPICH-CX build scripts (and test/lib.sh). Sourced, never run.

# The pinned base: MPICH 4.0.2 as Debian ships it (mpich_4.0.2.orig.tar.xz).
CX_MPICH_VERSION=4.0.2
CX_MPICH_DEBIAN_VERSION=4.0.2-3
CX_MPICH_TARBALL_NAME=mpich_4.0.2.orig.tar.xz
CX_MPICH_TARBALL_SIZE=21800484
CX_MPICH_TARBALL_SHA256=b27039f964afeb6b8a3e009c56b441cbe368c26d6d6476ad3bb7190996875860
CX_MPICH_TOPDIR=mpich-4.0.2          # the directory the tarball unpacks into

# MPICH-CX's version: the first line of VERSION (its one source; configure.ac
# reads it too, and scripts/assemble writes it into the tree's
# src/include/mpichcx_version.h). Empty when VERSION is missing.
cx_version_of() { sed -n '1{s/^[[:space:]]*//;s/[[:space:]]*$//;p;q;}' "$1" 2>/dev/null; }
CX_VERSION=$(cx_version_of "$(dirname "${BASH_SOURCE[0]}")/../VERSION" || true)

cx_prog=${0##*/}
cx_die() {
    printf '%s: error: %s\n' "$cx_prog" "$1" >&2
    shift
    local line
    for line in "$@"; do printf '%s:   %s\n' "$cx_prog" "$line" >&2; done
    exit 1
}
cx_info() { printf '%s: %s\n' "$cx_prog" "$*" >&2; }

cx_sha256() { sha256sum "$1" | awk '{print $1}'; }

# The repository root (scripts/..), absolute.
cx_repo_root() { (cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd); }

# The names of MPICH-CX's thread-safety models (the values of
# MPIR_CVAR_CH4_MT_MODEL and --enable-ch4-mt that are ours, MPICH's lockless
# and runtime aside), one per line, in their order in their one list,
# src/mpid/ch4/src/cx_mt_models.def: each of its lines that starts with
# CX_MT_MODEL("NAME" (after spaces) names one.
cx_mt_models() {
    sed -n 's/^[[:space:]]*CX_MT_MODEL("\([^"]*\)".*/\1/p' \
        "$(dirname "${BASH_SOURCE[0]}")/../src/mpid/ch4/src/cx_mt_models.def"
}
