! Fortran MPI hello (Debian's mpif90): in the image so that MPICH's Fortran
! library and gfortran's runtime are there for Fortran programs the nodes
! run from NFS (the NAS Parallel Benchmarks, bench/npb.py).
program hello
  implicit none
  include 'mpif.h'
  integer :: ierr, rank, nproc
  call mpi_init(ierr)
  call mpi_comm_rank(MPI_COMM_WORLD, rank, ierr)
  call mpi_comm_size(MPI_COMM_WORLD, nproc, ierr)
  print '(a,i0,a,i0)', 'hello from Fortran rank ', rank, ' of ', nproc
  call mpi_finalize(ierr)
end program hello
