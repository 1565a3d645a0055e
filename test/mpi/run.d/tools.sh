# Copyright (C) MPICH-CX contributors. See COPYRIGHT in top-level directory.
# Sourced by test/mpi/run: what the installed MPICH-CX says about itself, and
# the libfabric it links.

# The extensions line says what is active in this run.
t_run mpi/extensions-line 60 env w="$work/mpi" p="$prefix" bash -c '
    out=$("$@" -n 1 "$w/library_version" -v) || exit 1; echo "$out"
    grep -q "^MPICH-CX Extensions:.*matching (hash, lists up to 64)" <<<"$out" || exit 1
    [ ! -x "$p/bin/mpich-cx-piphost" ] || grep -q "pip (inactive)$" <<<"$out" || exit 1
    out=$(MPIR_CVAR_CH4_CX_MATCHING=list "$@" -n 1 "$w/library_version" -v) || exit 1; echo "$out"
    grep -q "matching (inactive)" <<<"$out"' _ "${launch[@]}"

# mpichversion names MPICH-CX; -cx prints only our lines.
t_check mpi/mpichversion "mpichversion does not report MPICH-CX" \
    bash -c '"$1/bin/mpichversion" | grep -qxF "MPICH-CX Version:	$2"' _ "$prefix" "$CX_VERSION"
t_check mpi/mpichversion-cx "mpichversion -cx does not print exactly the MPICH-CX lines" \
    bash -c '[ "$("$1/bin/mpichversion" -cx | grep -vc "^MPICH-CX ")" = 0 ] &&
             [ "$("$1/bin/mpichversion" -cx | wc -l)" = 3 ]' _ "$prefix"

# libmpi uses the system libfabric, whose PSM2 provider Omni-Path users select
# with FI_PROVIDER=psm2 (no Omni-Path hardware here, so only the linkage is checked).
if needs_ofi mpi/libfabric; then
    t_check mpi/libfabric-system "libmpi is not linked against the system libfabric" \
        bash -c 'ldd "$1/lib/libmpi.so" | grep -Eq "libfabric.so.1 => /(usr/)?lib/" && ! ls "$1"/lib/libfabric* 2>/dev/null' _ "$prefix"
    if command -v fi_info >/dev/null; then
        t_check mpi/libfabric-psm2 "the system libfabric has no psm2 provider" \
            bash -c 'fi_info -l | grep -q "^psm2:"'
    else
        t_result SKIP mpi/libfabric-psm2 "fi_info not installed (package libfabric-bin)"
    fi
fi
# ch4:ucx: libmpi uses the system UCX
case $(t_device "$prefix") in
ch4:ucx*) t_check mpi/ucx-system "libmpi is not linked against the system UCX" \
    bash -c 'ldd "$1/lib/libmpi.so" | grep -Eq "libucp.so.0 => /(usr/)?lib/"' _ "$prefix" ;;
esac
