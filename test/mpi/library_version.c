/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * MPI_Get_library_version identifies MPICH-CX, its version and its base, and
 * keeps MPICH's own lines first (tools parse them).
 */
#include "mpitest.h"
#include <string.h>

/* The version the library must report, from VERSION (test/mpi/Makefile). */
#ifndef CX_EXPECTED_VERSION
#error "build with -DCX_EXPECTED_VERSION='\"X.Y.Z\"' (test/mpi/Makefile passes VERSION's)"
#endif
_Static_assert(sizeof(CX_EXPECTED_VERSION) > 1, "CX_EXPECTED_VERSION is empty: no VERSION file?");

int main(int argc, char **argv)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = -1, major, minor;

    MPI_Init(&argc, &argv);
    MPI_Get_library_version(v, &len);
    MT_CHECK(len == (int) strlen(v), "resultlen %d, strlen %zu", len, strlen(v));
    MT_CHECK(strncmp(v, "MPICH Version:\t4.0.2\n", 21) == 0, "first line: %.40s", v);
    MT_CHECK(strstr(v, "\nMPICH-CX Version:\t" CX_EXPECTED_VERSION "\n") != NULL,
             "no MPICH-CX version line (" CX_EXPECTED_VERSION ") in:\n%s", v);
    MT_CHECK(strstr(v, "\nMPICH-CX Base:\tMPICH 4.0.2\n") != NULL, "no MPICH-CX base line");
    MT_CHECK(strstr(v, "\nMPICH-CX Extensions:\t") != NULL, "no MPICH-CX extensions line");
    /* The string ends with a newline and fits the MPI limit. */
    MT_CHECK(len > 0 && len < MPI_MAX_LIBRARY_VERSION_STRING && v[len - 1] == '\n', "bad end");
    MPI_Get_version(&major, &minor);
    MT_CHECK(major == 4 && minor == 0, "MPI version %d.%d", major, minor);
    if (argc > 1 && strcmp(argv[1], "-v") == 0)
        fputs(v, stdout);
    return mt_finish();
}
