# Shared definitions for the MPICH-CX build scripts. Sourced, never run.

# The pinned base: MPICH 4.0.2 as Debian ships it (mpich_4.0.2.orig.tar.xz).
CX_MPICH_VERSION=4.0.2
CX_MPICH_DEBIAN_VERSION=4.0.2-3
CX_MPICH_TARBALL_NAME=mpich_4.0.2.orig.tar.xz
CX_MPICH_TARBALL_SIZE=21800484
CX_MPICH_TARBALL_SHA256=b27039f964afeb6b8a3e009c56b441cbe368c26d6d6476ad3bb7190996875860
CX_MPICH_TOPDIR=mpich-4.0.2          # the directory the tarball unpacks into

CX_VERSION=0.1.0

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
