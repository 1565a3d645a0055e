/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * The shared library of pip_exit.c (built by test/mpi/Makefile as
 * libpip_exit_lib.so): ends the process from inside itself, through this
 * object's own GOT slot of exit, as a Fortran STOP does through libgfortran.
 */
#include <stdlib.h>

void pip_exit_lib_end(int code)
{
    exit(code);
}
