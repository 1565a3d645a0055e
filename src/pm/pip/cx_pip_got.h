/*
 * MPICH-CX PiP: redirecting a task's calls to a C library function in every
 * object of its namespace (the program, libmpi, libfabric, ...), by
 * rewriting the GOT slots the dynamic loader filled in.  The C library and
 * the dynamic loader themselves are left alone (their own calls do not go
 * through GOT slots of these names).  Or, for every caller at once (the C
 * library itself and objects loaded later included), by a jump written over
 * the start of the namespace's own copy of the function.
 */
#ifndef CX_PIP_GOT_H_INCLUDED
#define CX_PIP_GOT_H_INCLUDED

#include <stddef.h>

/* Points every GOT slot for `symbol` in the objects of the namespace that
 * `handle` (from dlmopen) belongs to at `fn`.  Returns the number of slots
 * rewritten, or -1 with a message in err. */
int cx_pip_got_redirect(void *handle, const char *symbol, void *fn, char *err, size_t errlen);

/* Writes a jump to `hook` over the first instructions of the function at
 * `fn` (a namespace's private copy: the C library's _exit of one task), so
 * that every call of it runs `hook` instead.  0, or -1 with a message in
 * err (the function is unchanged then). */
int cx_pip_code_divert(void *fn, void *hook, char *err, size_t errlen);

#endif /* CX_PIP_GOT_H_INCLUDED */
