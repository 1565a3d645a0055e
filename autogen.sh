#!/bin/sh
# Copyright (C) MPICH-CX contributors. See COPYRIGHT in top-level directory.
# Generate the top-level configure (our own, not MPICH's: that one is
# regenerated inside the assembled tree by scripts/assemble).
set -e
cd "$(dirname "$0")"
for t in autoreconf automake libtoolize pkg-config; do
    command -v $t >/dev/null 2>&1 || {
        echo "autogen.sh: '$t' not found; install the build dependencies first: sudo scripts/install-deps" >&2
        exit 1
    }
done
autoreconf -fi
