! Fortran through mpif.h (gfortran, static glibc on Tern): point to point
! with status arrays and MPI_STATUS_IGNORE, wildcards, nonblocking calls,
! collectives with MPI_IN_PLACE, a communicator split, a user operation,
! Fortran types (INTEGER, REAL, DOUBLE PRECISION, COMPLEX, LOGICAL,
! CHARACTER, 2DOUBLE_PRECISION with MAXLOC), MPI_WTIME, the processor name.
! Prints "fortran ok on N ranks".
program ftest
  implicit none
  include 'mpif.h'
  integer :: ierr, rank, nproc, i, right, left, sub, subrank, subsize, req(2)
  integer :: status(MPI_STATUS_SIZE), statuses(MPI_STATUS_SIZE, 2), cnt, isum
  double precision :: a(1000), b(1000), t0, pair(2), best(2)
  real :: r
  complex :: z, zs
  logical :: l, lall
  character(len=MPI_MAX_PROCESSOR_NAME) :: name
  character(len=12) :: word
  integer :: namelen, myop
  external :: maxabs

  call mpi_init(ierr)
  call mpi_comm_rank(MPI_COMM_WORLD, rank, ierr)
  call mpi_comm_size(MPI_COMM_WORLD, nproc, ierr)
  t0 = mpi_wtime()
  right = mod(rank + 1, nproc)
  left = mod(rank - 1 + nproc, nproc)

  ! ring with a rendezvous-sized message, status checked
  do i = 1, 1000
     a(i) = rank * 10000 + i
  end do
  call mpi_sendrecv(a, 1000, MPI_DOUBLE_PRECISION, right, 7, b, 1000, &
       MPI_DOUBLE_PRECISION, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, status, ierr)
  call mpi_get_count(status, MPI_DOUBLE_PRECISION, cnt, ierr)
  if (status(MPI_SOURCE) /= left .or. status(MPI_TAG) /= 7 .or. cnt /= 1000) stop 'status'
  do i = 1, 1000
     if (b(i) /= left * 10000 + i) stop 'ring data'
  end do

  ! nonblocking, statuses array
  call mpi_irecv(b, 10, MPI_DOUBLE_PRECISION, left, 8, MPI_COMM_WORLD, req(1), ierr)
  call mpi_isend(a, 10, MPI_DOUBLE_PRECISION, right, 8, MPI_COMM_WORLD, req(2), ierr)
  call mpi_waitall(2, req, statuses, ierr)
  if (statuses(MPI_SOURCE, 1) /= left .or. req(1) /= MPI_REQUEST_NULL) stop 'waitall'
  call mpi_send(rank, 1, MPI_INTEGER, rank, 9, MPI_COMM_WORLD, ierr)
  call mpi_recv(i, 1, MPI_INTEGER, rank, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  if (i /= rank) stop 'self'

  ! collectives
  isum = rank
  call mpi_allreduce(MPI_IN_PLACE, isum, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (isum /= nproc * (nproc - 1) / 2) stop 'allreduce in place'
  r = real(rank) + 0.5
  call mpi_allreduce(MPI_IN_PLACE, r, 1, MPI_REAL, MPI_MAX, MPI_COMM_WORLD, ierr)
  if (r /= real(nproc - 1) + 0.5) stop 'real max'
  z = cmplx(1.0, real(rank))
  call mpi_reduce(z, zs, 1, MPI_COMPLEX, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0 .and. zs /= cmplx(real(nproc), real(nproc * (nproc - 1) / 2))) stop 'complex'
  l = rank /= 1
  call mpi_allreduce(l, lall, 1, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD, ierr)
  if (lall .neqv. (nproc == 1)) stop 'logical'
  word = 'from rank 0 '
  if (rank /= 0) word = 'xxxxxxxxxxxx'
  call mpi_bcast(word, 12, MPI_CHARACTER, 0, MPI_COMM_WORLD, ierr)
  if (word /= 'from rank 0 ') stop 'character bcast'
  pair(1) = mod(rank * 7, 5)
  pair(2) = rank
  call mpi_allreduce(pair, best, 1, MPI_2DOUBLE_PRECISION, MPI_MAXLOC, MPI_COMM_WORLD, ierr)
  if (best(1) /= maxval((/ (dble(mod(i * 7, 5)), i = 0, nproc - 1) /))) stop 'maxloc'

  ! a user operation (Fortran function)
  call mpi_op_create(maxabs, .true., myop, ierr)
  a(1) = -rank
  call mpi_allreduce(a, b, 1, MPI_DOUBLE_PRECISION, myop, MPI_COMM_WORLD, ierr)
  if (b(1) /= -(nproc - 1)) stop 'user op'
  call mpi_op_free(myop, ierr)

  ! split into halves
  call mpi_comm_split(MPI_COMM_WORLD, mod(rank, 2), rank, sub, ierr)
  call mpi_comm_rank(sub, subrank, ierr)
  call mpi_comm_size(sub, subsize, ierr)
  if (subrank /= rank / 2) stop 'split rank'
  call mpi_barrier(sub, ierr)
  call mpi_comm_free(sub, ierr)
  if (sub /= MPI_COMM_NULL) stop 'comm_free'

  call mpi_get_processor_name(name, namelen, ierr)
  if (namelen < 1) stop 'processor name'
  if (mpi_wtime() < t0 .or. mpi_wtick() <= 0) stop 'wtime'
  if (rank == 0) print '(a,i0,a)', 'fortran ok on ', nproc, ' ranks'
  call mpi_finalize(ierr)
end program ftest

subroutine maxabs(invec, inoutvec, n, datatype)
  implicit none
  integer :: n, datatype, i
  double precision :: invec(n), inoutvec(n)
  do i = 1, n
     if (abs(invec(i)) > abs(inoutvec(i))) inoutvec(i) = invec(i)
  end do
end subroutine maxabs
