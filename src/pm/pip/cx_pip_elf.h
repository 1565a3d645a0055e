/*
 * MPICH-CX PiP: reading a program before it is loaded as a task.
 *
 * A PiP task is the user's program loaded with dlmopen into a namespace of
 * its own inside one hosting process.  That works for a dynamically linked
 * position-independent executable without copy relocations (compiled -fPIC,
 * linked -pie -rdynamic: what mpich-cx's mpicc does), and glibc refuses to
 * dlopen one whose DT_FLAGS_1 has DF_1_PIE.  So the file is read into
 * memory, checked, and the bit is cleared in that copy; the user's file is
 * never modified.
 *
 * No MPI dependency (unit-tested standalone).
 */
#ifndef CX_PIP_ELF_H_INCLUDED
#define CX_PIP_ELF_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

typedef struct {
    char *data;                 /* the whole file, DF_1_PIE cleared */
    size_t size;
} cx_pip_image_t;

/* Reads and checks `path`.  0 on success; -1 with a message in err that
 * names the problem and how to fix it (nothing allocated then). */
int cx_pip_image_load(const char *path, cx_pip_image_t * img, char *err, size_t errlen);
void cx_pip_image_free(cx_pip_image_t * img);

#endif /* CX_PIP_ELF_H_INCLUDED */
