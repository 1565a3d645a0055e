/*
 * MPICH-CX: what any part of MPICH may ask about PiP (mpiexec -pip).
 */

#ifndef MPICHCX_PIP_H_INCLUDED
#define MPICHCX_PIP_H_INCLUDED

/* Whether this rank is a PiP task that shares its process (and address
 * space) with other tasks. */
int MPIR_CX_pip_shares_process(void);

#endif /* MPICHCX_PIP_H_INCLUDED */
