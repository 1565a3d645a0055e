/*
 * MPICH-CX PiP: redirecting a task's calls to a C library function in every
 * object of its namespace (the program, libmpi, libfabric, ...), by
 * rewriting the GOT slots the dynamic loader filled in.  The C library and
 * the dynamic loader themselves are left alone (their own calls do not go
 * through GOT slots of these names).
 */
#ifndef CX_PIP_GOT_H_INCLUDED
#define CX_PIP_GOT_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

/* Points every GOT slot for `symbol` in the objects of the namespace that
 * `handle` (from dlmopen) belongs to at `fn`.  Returns the number of slots
 * rewritten, or -1 with a message in err. */
int cx_pip_got_redirect(void *handle, const char *symbol, void *fn, char *err, size_t errlen);

/* Writes fn into one GOT slot; a slot inside [relro_start, relro_end) is
 * made writable for the write and read-only again after.  -1 (errno) when
 * that fails. */
int cx_pip_got_write(void **slot, void *fn, uintptr_t relro_start, uintptr_t relro_end);

#endif /* CX_PIP_GOT_H_INCLUDED */
