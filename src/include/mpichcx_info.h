/*
 * MPICH-CX: identification of the fork, its base and its extensions.
 */

#ifndef MPICHCX_INFO_H_INCLUDED
#define MPICHCX_INFO_H_INCLUDED

#define MPICHCX_VERSION "0.1.0"
#define MPICHCX_BASE_VERSION "4.0.2"

/* Append the "MPICH-CX ..." lines of MPI_Get_library_version (version, base,
 * extensions compiled in and whether each is active) to buf, which has room
 * for len bytes. Returns the number of characters written (truncated output
 * stays NUL-terminated). */
int MPIR_CX_info_string(char *buf, int len);

#endif /* MPICHCX_INFO_H_INCLUDED */
