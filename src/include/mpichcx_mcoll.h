/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * MPICH-CX PiP-MColl: the pip_mcoll value of MPICH's per-collective
 * algorithm CVARs (MPIR_CVAR_<COLL>_INTRA_ALGORITHM). The algorithms are in
 * src/mpid/ch4/shm/ipc/pip/pip_mcoll_*.c; doc/user/pip-mcoll.md.
 */
#ifndef MPICHCX_MCOLL_H_INCLUDED
#define MPICHCX_MCOLL_H_INCLUDED

/* The restrictions of the pip_mcoll entries in coll_algorithms.txt (the
 * generated code falls back as MPIR_CVAR_COLLECTIVE_FALLBACK says when
 * they do not hold). comm: every rank is a PiP task of this process.
 * contig: reductions need a layout every rank can read in a peer's buffer. */
int MPIR_CX_mcoll_comm_ok(MPIR_Comm * comm_ptr);
/* comm (where comm_ok holds) spans nodes: pip_mcoll_nodes.c's algorithms. */
int MPIR_CX_mcoll_comm_nodes(MPIR_Comm * comm_ptr);
int MPIR_CX_mcoll_contig(MPI_Datatype datatype);

int MPIR_Bcast_intra_pip_mcoll(void *buffer, MPI_Aint count, MPI_Datatype datatype, int root,
                               MPIR_Comm * comm_ptr, MPIR_Errflag_t * errflag);
int MPIR_Gather_intra_pip_mcoll(const void *sendbuf, MPI_Aint sendcount, MPI_Datatype sendtype,
                                void *recvbuf, MPI_Aint recvcount, MPI_Datatype recvtype,
                                int root, MPIR_Comm * comm_ptr, MPIR_Errflag_t * errflag);
int MPIR_Scatter_intra_pip_mcoll(const void *sendbuf, MPI_Aint sendcount, MPI_Datatype sendtype,
                                 void *recvbuf, MPI_Aint recvcount, MPI_Datatype recvtype,
                                 int root, MPIR_Comm * comm_ptr, MPIR_Errflag_t * errflag);
int MPIR_Reduce_intra_pip_mcoll(const void *sendbuf, void *recvbuf, MPI_Aint count,
                                MPI_Datatype datatype, MPI_Op op, int root,
                                MPIR_Comm * comm_ptr, MPIR_Errflag_t * errflag);
int MPIR_Allreduce_intra_pip_mcoll(const void *sendbuf, void *recvbuf, MPI_Aint count,
                                   MPI_Datatype datatype, MPI_Op op, MPIR_Comm * comm_ptr,
                                   MPIR_Errflag_t * errflag);
int MPIR_Allgather_intra_pip_mcoll(const void *sendbuf, MPI_Aint sendcount,
                                   MPI_Datatype sendtype, void *recvbuf, MPI_Aint recvcount,
                                   MPI_Datatype recvtype, MPIR_Comm * comm_ptr,
                                   MPIR_Errflag_t * errflag);

#endif /* MPICHCX_MCOLL_H_INCLUDED */
