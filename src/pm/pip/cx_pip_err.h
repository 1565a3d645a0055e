/*
 * MPICH-CX PiP: error messages into the caller's buffer.
 */
#ifndef CX_PIP_ERR_H_INCLUDED
#define CX_PIP_ERR_H_INCLUDED

#include <stdarg.h>
#include <stdio.h>

/* Writes the message into err and returns -1 (for `return cx_pip_fail(...)`). */
__attribute__((format(printf, 3, 4)))
static inline int cx_pip_fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

#endif /* CX_PIP_ERR_H_INCLUDED */
