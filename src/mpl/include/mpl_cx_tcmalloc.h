/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * MPICH-CX --with-tcmalloc: MPL's allocation calls (every allocation MPICH
 * and MPICH-CX make: requests' extra state, LockQ's descriptors and queue
 * nodes, unexpected buffers, communicators, ...) go to tcmalloc's own entry
 * points (tc_malloc, ...), not to the symbol malloc. Linking libtcmalloc
 * into libmpi alone does not do it: the program's own dependencies come
 * first in symbol lookup, so `malloc` binds to libc's and tcmalloc serves
 * nothing. Calling tc_* binds libmpi to tcmalloc and leaves the
 * application's malloc alone. Included by mpl_trmem.h (patch
 * cx-tcmalloc) in place of its native branch, which it mirrors; not with
 * memory tracing (that branch is MPL's own allocator).
 *
 * Every pointer MPL_free gets must come from these (MPICH's rule already:
 * memory tracing checks it); memory from or for other libraries goes
 * through MPL_direct_*, which stay libc's.
 */
#ifndef MPL_CX_TCMALLOC_H_INCLUDED
#define MPL_CX_TCMALLOC_H_INCLUDED

#include <string.h>
#include <gperftools/tcmalloc.h>

static inline void *MPL_malloc(size_t size, MPL_memory_class memclass)
{
    return size <= PTRDIFF_MAX ? tc_malloc(size) : NULL;
}

static inline void *MPL_calloc(size_t nmemb, size_t size, MPL_memory_class memclass)
{
    return size <= PTRDIFF_MAX ? tc_calloc(nmemb, size) : NULL;
}

static inline void *MPL_realloc(void *ptr, size_t size, MPL_memory_class memclass)
{
    return size <= PTRDIFF_MAX ? tc_realloc(ptr, size) : NULL;
}

/* MPL_strdup (mpl_trmem.h maps it here under MPL_CX_TCMALLOC) */
static inline char *MPL_cx_tc_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = (char *) tc_malloc(n);
    if (p)
        memcpy(p, s, n);
    return p;
}

#define MPL_free(a)      tc_free((void *)(a))
#define MPL_mmap(a,b,c,d,e,f,g) mmap((void *)(a),(size_t)(b),(int)(c),(int)(d),(int)(e),(off_t)(f))
#define MPL_munmap(a,b,c)  munmap((void *)(a),(size_t)(b))

#define MPL_direct_malloc   malloc
#define MPL_direct_calloc   calloc
#define MPL_direct_realloc  realloc
#define MPL_direct_strdup   strdup
#define MPL_direct_free     free

#ifdef MPL_DEFINE_ALIGNED_ALLOC
MPL_STATIC_INLINE_PREFIX void *MPL_aligned_alloc(size_t alignment, size_t size,
                                                 MPL_memory_class class)
{
    void *ptr;
    return tc_posix_memalign(&ptr, alignment, size) ? NULL : ptr;
}
#endif /* MPL_DEFINE_ALIGNED_ALLOC */

#endif /* MPL_CX_TCMALLOC_H_INCLUDED */
