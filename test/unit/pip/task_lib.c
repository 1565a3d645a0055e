/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * A shared library of task_prog (test/unit/pip.sh) that ends the process
 * from inside itself, as libgfortran does for a Fortran STOP: its own calls
 * to exit, _exit and quick_exit (GOT slots of this object, not the program's).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void task_lib_end(const char *how, int code)
{
    fflush(stderr);
    if (!strcmp(how, "_exit"))
        _exit(code);
    if (!strcmp(how, "quick_exit"))
        quick_exit(code);
    exit(code);
}
