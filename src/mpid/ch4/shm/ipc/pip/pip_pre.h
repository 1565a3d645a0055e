/*
 * MPICH-CX: PiP single-copy transfers, a type of CH4's shm/ipc framework.
 * Types that ipc_pre.h and ipc_types.h need before the framework's own.
 */
#ifndef PIP_PRE_H_INCLUDED
#define PIP_PRE_H_INCLUDED

#include <stdint.h>

/* Under PiP a peer's buffer is reachable at the very address the peer uses,
 * so the "handle" is that address. */
typedef struct {
    uintptr_t addr;
} MPIDI_PIP_ipc_handle_t;

/* Identifies one address space on the node: the process id seen by the
 * kernel (not the per-task getpid() of PiP) and its PID namespace. */
typedef struct {
    uint64_t tgid;
    uint64_t pidns;
} MPIDI_PIP_space_t;

#endif /* PIP_PRE_H_INCLUDED */
