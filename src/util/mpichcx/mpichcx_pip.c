/*
 * MPICH-CX: what any part of MPICH may ask about PiP (mpiexec -pip).
 */

#include <stdlib.h>
#include "mpichcx_pip.h"

/* The PiP host (src/pm/pip) tells each task how many tasks it runs.  Used by
 * MPIDIG's window allocation: whatever one task maps at an address is in
 * the others' way there, so every attempt at a symmetric heap would fail,
 * after MPIR_CVAR_SHM_SYMHEAP_RETRY rounds of collectives. */
int MPIR_CX_pip_shares_process(void)
{
    const char *ntasks = getenv("MPICH_CX_PIP_NTASKS");
    return ntasks != NULL && atoi(ntasks) > 1;
}
