! Copyright (C) MPICH-CX contributors. See COPYRIGHT in top-level directory.
! Under `mpiexec -pip -n 4` (test/mpi/run): after MPI_Finalize, rank 1
! ends with `STOP 3`, which libgfortran turns into exit(3).  That must end
! rank 1 only: mpiexec reports code 3 and the other ranks, still running,
! finish normally (each prints a line a second after rank 1's STOP).
program pip_stop
    use mpi
    implicit none
    integer :: rank, ierr
    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    call MPI_Finalize(ierr)
    if (rank == 1) stop 3
    call sleep(1)
    print '(a,i0,a)', 'rank ', rank, ': done after rank 1''s STOP'
end program pip_stop
