/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * MPICH-CX PiP-MColl in a build without CH4 shared memory (ch4:ucx's
 * default), where its algorithms (src/mpid/ch4/shm/ipc/pip) are not
 * compiled: MPICH's collective selection still names the pip_mcoll
 * algorithm, so its restrictions say no, and MPIR_CVAR_COLLECTIVE_FALLBACK
 * decides what a forced pip_mcoll does, as for any algorithm that does not
 * apply. Nothing else reaches the entry points; an error says why if
 * something does.
 */

#include "mpiimpl.h"
#include "mpichcx_mcoll.h"

int MPIR_CX_mcoll_comm_ok(MPIR_Comm * comm_ptr)
{
    return 0;
}

int MPIR_CX_mcoll_comm_nodes(MPIR_Comm * comm_ptr)
{
    return 0;
}

int MPIR_CX_mcoll_contig(MPI_Datatype datatype)
{
    return 0;
}

/* "Function ... not implemented", naming the algorithm and why */
static int absent(const char *name)
{
    char what[160];
    int mpi_errno = MPI_SUCCESS;
    snprintf(what, sizeof(what), "%s (PiP-MColl: this build has no CH4 shared memory)", name);
    MPIR_ERR_SET1(mpi_errno, MPI_ERR_OTHER, "**notimpl", "**notimpl %s", what);
    return mpi_errno;
}

int MPIR_Bcast_intra_pip_mcoll(void *buffer, MPI_Aint count, MPI_Datatype datatype, int root,
                               MPIR_Comm * comm_ptr, MPIR_Errflag_t * errflag)
{
    return absent(__func__);
}

int MPIR_Gather_intra_pip_mcoll(const void *sendbuf, MPI_Aint sendcount, MPI_Datatype sendtype,
                                void *recvbuf, MPI_Aint recvcount, MPI_Datatype recvtype,
                                int root, MPIR_Comm * comm_ptr, MPIR_Errflag_t * errflag)
{
    return absent(__func__);
}

int MPIR_Scatter_intra_pip_mcoll(const void *sendbuf, MPI_Aint sendcount, MPI_Datatype sendtype,
                                 void *recvbuf, MPI_Aint recvcount, MPI_Datatype recvtype,
                                 int root, MPIR_Comm * comm_ptr, MPIR_Errflag_t * errflag)
{
    return absent(__func__);
}

int MPIR_Reduce_intra_pip_mcoll(const void *sendbuf, void *recvbuf, MPI_Aint count,
                                MPI_Datatype datatype, MPI_Op op, int root,
                                MPIR_Comm * comm_ptr, MPIR_Errflag_t * errflag)
{
    return absent(__func__);
}

int MPIR_Allreduce_intra_pip_mcoll(const void *sendbuf, void *recvbuf, MPI_Aint count,
                                   MPI_Datatype datatype, MPI_Op op, MPIR_Comm * comm_ptr,
                                   MPIR_Errflag_t * errflag)
{
    return absent(__func__);
}

int MPIR_Allgather_intra_pip_mcoll(const void *sendbuf, MPI_Aint sendcount,
                                   MPI_Datatype sendtype, void *recvbuf, MPI_Aint recvcount,
                                   MPI_Datatype recvtype, MPIR_Comm * comm_ptr,
                                   MPIR_Errflag_t * errflag)
{
    return absent(__func__);
}
