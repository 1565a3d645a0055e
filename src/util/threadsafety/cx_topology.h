/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * MPICH-CX thread synchronization library: NUMA topology for HCLHub's cohort
 * lock, from hwloc once per process; a thread's node is cached per thread.
 * MPICH_CX_FAKE_NUMA_NODES=n fakes n nodes on one-node machines (tests).
 * Design: doc/design/reactivation.md.
 */
#ifndef CX_TOPOLOGY_H_INCLUDED
#define CX_TOPOLOGY_H_INCLUDED

int MPIR_CX_topology_init(void);
int MPIR_CX_topology_num_numa_nodes(void);
int MPIR_CX_numa_node_self(void);

#endif /* CX_TOPOLOGY_H_INCLUDED */
