/*
 * MPICH-CX thread synchronization library: NUMA topology for the cohort lock
 * of HCLHub.
 *
 * MPIR_CX_topology_init discovers the NUMA nodes with hwloc once per process
 * and returns their number (at least 1). MPIR_CX_numa_node_self maps the CPU
 * the calling thread runs on to its NUMA node index in [0, count); the answer
 * is cached per thread (threads are expected to be bound).
 *
 * Testing on one-node machines: with MPICH_CX_FAKE_NUMA_NODES=n (n >= 1)
 * the count is n and each thread gets node (per-thread sequence number % n),
 * in the order threads first ask.
 */
#ifndef CX_TOPOLOGY_H_INCLUDED
#define CX_TOPOLOGY_H_INCLUDED

int MPIR_CX_topology_init(void);
int MPIR_CX_topology_num_numa_nodes(void);
int MPIR_CX_numa_node_self(void);

#endif /* CX_TOPOLOGY_H_INCLUDED */
