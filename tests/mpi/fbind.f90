! The Fortran bindings of the calls ftest.f90 does not take, as a user sees
! them through mpif.h (issue 16): MPI_INIT_THREAD's level (MULTIPLE: the whole
! program runs under the library's lock), communicator names set and read back
! (blank-padded both ways, trailing blanks dropped, leading ones kept, a
! name longer than MPI_MAX_OBJECT_NAME truncated to it), a Fortran error
! handler called with its communicator and code by MPI_COMM_CALL_ERRHANDLER
! and by real errors (a send to a rank that does not exist, a bad tag),
! MPI_OP_COMMUTATIVE of MPI_SUM and of user operations (and a reduction
! with the non-commutative one keeping rank order), MPI_TYPE_LB, _UB and
! _SIZE_X (INTEGER(KIND=MPI_COUNT_KIND)) of vector, resized, struct and
! 8 GiB types; MPI_UNWEIGHTED and a neighbour allgather on a ring and a
! line; MPI_TYPE_CREATE_F90_REAL and _INTEGER; datatype attributes, a darray in
! Fortran order, Pack_external; MPI_AINT_DIFF/_ADD; a file written with a split
! collective, read with a nonblocking collective, and a file error handler; a
! dynamic window and the request-based one-sided calls; a session's process
! sets (names blank-padded, lengths without C's zero) and a communicator made
! from one with a string tag.  A failed check prints it and calls MPI_ABORT (status 2).
! Prints "fortran bindings ok on N ranks".
program fbind
  implicit none
  include 'mpif.h'
  integer :: ierr, rank, nproc, dup, eh, eh2, i, len, x, cls
  integer :: op_first, op_add, vec, rsz, st, c1, c2, lb, ub, fst
  integer :: blens(2), types(2)
  integer(kind=MPI_ADDRESS_KIND) :: disps(2), alb, aext
  integer(kind=MPI_COUNT_KIND) :: sx
  character(len=MPI_MAX_OBJECT_NAME) :: nm
  character(len=200) :: long
  character(len=5) :: short
  logical :: commute, ismain
  integer :: prov
  integer :: hcount, hcomm, hcode
  common /hstate/ hcount, hcomm, hcode
  integer :: kv, kv1, dup2, ival, ndel
  integer(kind=MPI_ADDRESS_KIND) :: aval
  logical :: found
  integer, parameter :: dk = selected_real_kind(15)
  real(kind=dk) :: dsend, drecv
  integer :: f90r, f90r2, f90i, tsize, ni, na, nt, comb
  common /dstate/ ndel
  integer :: dg, cart, indeg, outdeg, tsrc(1), tdst(1), tsb(1), trb(2), tdims(1)
  logical :: weighted, tper(1)
  integer :: da, tkv, tt, tt2, ga(4, 6), pk(12), gs(2), dist(2), dargs(2), ps(2), j, k, pos
  integer :: xv(2), xback(2)
  integer(kind=1) :: xb(8)
  integer(kind=MPI_ADDRESS_KIND) :: xpos, xsize
  integer :: fh, feh, freq, fpid, fcount, fbuf(4), fback(4), fstat(MPI_STATUS_SIZE)
  integer(kind=MPI_OFFSET_KIND) :: foff
  integer :: dwin, dreqs(4), dmem(8), dget(4), dold, dacc(2)
  integer(kind=MPI_ADDRESS_KIND) :: daddr, dsize
  integer(kind=MPI_ADDRESS_KIND) :: fa0, fa1
  character(len=64) :: fname
  integer :: ses, sgrp, scomm, snum, slen, ssum
  character(len=MPI_MAX_PSET_NAME_LEN) :: sname
  external :: onerr, first, addup, countdel

  ! MULTIPLE is asked for and given (the library's lock from then on).
  rank = -1
  call mpi_init_thread(MPI_THREAD_MULTIPLE, prov, ierr)
  call ck(ierr, 'init_thread')
  call mpi_comm_rank(MPI_COMM_WORLD, rank, ierr)
  call mpi_comm_size(MPI_COMM_WORLD, nproc, ierr)
  if (prov /= MPI_THREAD_MULTIPLE) call fail('init_thread did not provide MULTIPLE')
  prov = -1
  call mpi_query_thread(prov, ierr)
  if (prov /= MPI_THREAD_MULTIPLE) call fail('query_thread')
  ismain = .false.
  call mpi_is_thread_main(ismain, ierr)
  if (.not. ismain) call fail('is_thread_main')
  call mpi_comm_dup(MPI_COMM_WORLD, dup, ierr)

  ! ---- names ----
  nm = repeat('x', MPI_MAX_OBJECT_NAME)
  call mpi_comm_get_name(MPI_COMM_WORLD, nm, len, ierr)
  call ck(ierr, 'get_name world')
  if (nm /= 'MPI_COMM_WORLD' .or. len /= 14) call fail('world name: ' // trim(nm))
  nm = repeat('x', MPI_MAX_OBJECT_NAME)
  call mpi_comm_get_name(dup, nm, len, ierr)
  call ck(ierr, 'get_name unnamed')
  if (nm /= ' ' .or. len /= 0) call fail('a dup has no name: ' // trim(nm))
  call mpi_comm_set_name(dup, 'fortran comm      ', ierr)
  call ck(ierr, 'set_name')
  nm = repeat('x', MPI_MAX_OBJECT_NAME)
  call mpi_comm_get_name(dup, nm, len, ierr)
  ! '==' pads with blanks: every character past the name must be a blank
  if (nm /= 'fortran comm' .or. len /= 12) call fail('trailing blanks: ' // nm)
  short = 'xxxxx'
  call mpi_comm_get_name(dup, short, len, ierr)
  call ck(ierr, 'get_name short')
  if (short /= 'fortr' .or. len /= 5) call fail('short get_name: ' // short)
  call mpi_comm_set_name(dup, '  two leading', ierr)
  call mpi_comm_get_name(dup, nm, len, ierr)
  if (nm /= '  two leading' .or. len /= 13) call fail('leading blanks: ' // nm)
  do i = 1, 200
     long(i:i) = achar(iachar('a') + mod(i - 1, 26))
  end do
  call mpi_comm_set_name(dup, long, ierr)
  call ck(ierr, 'set_name long')
  nm = ' '
  call mpi_comm_get_name(dup, nm, len, ierr)
  if (len /= MPI_MAX_OBJECT_NAME .or. nm /= long(1:MPI_MAX_OBJECT_NAME)) &
       call fail('truncated to MPI_MAX_OBJECT_NAME: ' // nm)
  call mpi_comm_set_name(dup, '   ', ierr)
  nm = 'x'
  call mpi_comm_get_name(dup, nm, len, ierr)
  if (nm /= ' ' .or. len /= 0) call fail('blank name: ' // nm)
  call mpi_comm_set_name(dup, 'fortran comm', ierr)

  ! ---- a Fortran error handler ----
  call mpi_comm_create_errhandler(onerr, eh, ierr)
  call ck(ierr, 'create_errhandler')
  call mpi_comm_set_errhandler(dup, eh, ierr)
  call ck(ierr, 'set_errhandler')
  call mpi_comm_get_errhandler(dup, eh2, ierr)
  if (eh2 /= eh) call fail('get_errhandler')
  hcount = 0
  call mpi_comm_call_errhandler(dup, MPI_ERR_TAG, ierr)
  if (ierr /= MPI_SUCCESS) call fail('call_errhandler returns MPI_SUCCESS')
  if (hcount /= 1 .or. hcomm /= dup .or. hcode /= MPI_ERR_TAG) &
       call fail('call_errhandler called the handler with (dup, MPI_ERR_TAG)')
  x = rank
  call mpi_send(x, 1, MPI_INTEGER, nproc + 2, 0, dup, ierr)
  call mpi_error_class(hcode, cls, i)
  if (hcount /= 2 .or. hcomm /= dup .or. cls /= MPI_ERR_RANK .or. ierr /= hcode) &
       call fail('a send to rank nproc+2 called the handler with MPI_ERR_RANK')
  call mpi_send(x, 1, MPI_INTEGER, 0, -5, dup, ierr)
  call mpi_error_class(hcode, cls, i)
  if (hcount /= 3 .or. hcomm /= dup .or. cls /= MPI_ERR_TAG .or. ierr /= hcode) &
       call fail('a send with tag -5 called the handler with MPI_ERR_TAG')
  ! Freed, it stays the communicator's handler (MPI-3.1 8.3.4).
  call mpi_errhandler_free(eh, ierr)
  if (eh /= MPI_ERRHANDLER_NULL) call fail('errhandler_free')
  call mpi_comm_call_errhandler(dup, MPI_ERR_OTHER, ierr)
  if (hcount /= 4 .or. hcode /= MPI_ERR_OTHER) call fail('freed handler still called')
  ! A correct call does not call it.
  call mpi_sendrecv(x, 1, MPI_INTEGER, rank, 1, i, 1, MPI_INTEGER, rank, 1, dup, &
       MPI_STATUS_IGNORE, ierr)
  if (ierr /= MPI_SUCCESS .or. hcount /= 4 .or. i /= rank) call fail('no error, no call')

  ! ---- MPI_OP_COMMUTATIVE ----
  commute = .false.
  call mpi_op_commutative(MPI_SUM, commute, ierr)
  call ck(ierr, 'op_commutative')
  ! The LOGICAL's bits are gfortran's .TRUE., not any non-zero int.
  if (transfer(commute, 0) /= transfer(.true., 0)) call fail('MPI_SUM commutes')
  call mpi_op_create(first, .false., op_first, ierr)
  call mpi_op_create(addup, .true., op_add, ierr)
  commute = .true.
  call mpi_op_commutative(op_first, commute, ierr)
  if (ierr /= MPI_SUCCESS .or. transfer(commute, 0) /= transfer(.false., 0)) &
       call fail('user op made non-commutative')
  commute = .false.
  call mpi_op_commutative(op_add, commute, ierr)
  if (ierr /= MPI_SUCCESS .or. transfer(commute, 0) /= transfer(.true., 0)) &
       call fail('user op made commutative')
  ! "first" keeps the lower rank's value: in rank order the answer is
  ! rank 0's whatever the root.
  x = rank + 1
  fst = -1
  call mpi_reduce(x, fst, 1, MPI_INTEGER, op_first, nproc - 1, MPI_COMM_WORLD, ierr)
  if (rank == nproc - 1 .and. fst /= 1) call fail('non-commutative reduce kept rank order')
  call mpi_op_free(op_first, ierr)
  call mpi_op_free(op_add, ierr)

  ! ---- MPI_TYPE_LB, _UB, _SIZE_X ----
  ! 3 blocks of 2 INTEGERs, 4 apart: data 24 bytes, bounds 0..40
  call mpi_type_vector(3, 2, 4, MPI_INTEGER, vec, ierr)
  call bounds(vec, 0, 40, 24_MPI_COUNT_KIND, 'vector')
  alb = -8
  aext = 64
  call mpi_type_create_resized(vec, alb, aext, rsz, ierr)
  call ck(ierr, 'resized')
  call bounds(rsz, -8, 56, 24_MPI_COUNT_KIND, 'resized')
  ! a DOUBLE PRECISION at 8, 2 INTEGERs at 24: bounds 8..32, 16 bytes
  blens = (/ 1, 2 /)
  disps = (/ 8_MPI_ADDRESS_KIND, 24_MPI_ADDRESS_KIND /)
  types = (/ MPI_DOUBLE_PRECISION, MPI_INTEGER /)
  call mpi_type_create_struct(2, blens, disps, types, st, ierr)
  call ck(ierr, 'struct')
  call bounds(st, 8, 32, 16_MPI_COUNT_KIND, 'struct')
  ! 8 GiB: more than a default INTEGER holds (MPI_TYPE_SIZE's limit)
  call mpi_type_contiguous(1048576, MPI_DOUBLE_PRECISION, c1, ierr)
  call mpi_type_contiguous(1024, c1, c2, ierr)
  sx = -1
  call mpi_type_size_x(c2, sx, ierr)
  if (ierr /= MPI_SUCCESS .or. sx /= 8589934592_MPI_COUNT_KIND) call fail('size_x of 8 GiB')
  call mpi_type_free(vec, ierr)
  call mpi_type_free(rsz, ierr)
  call mpi_type_free(st, ierr)
  call mpi_type_free(c1, ierr)
  call mpi_type_free(c2, ierr)

  ! Attributes: MPI_COMM_DUP_FN copies the value to a duplicate, a Fortran
  ! delete callback (countdel) sees it go; MPI_NULL_COPY_FN (MPI-1) does not.
  call mpi_comm_create_keyval(MPI_COMM_DUP_FN, countdel, kv, 5_MPI_ADDRESS_KIND, ierr)
  call ck(ierr, 'comm_create_keyval')
  call mpi_keyval_create(MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, kv1, 0, ierr)
  call ck(ierr, 'keyval_create')
  call mpi_comm_set_attr(dup, kv, 12345_MPI_ADDRESS_KIND, ierr)
  call mpi_attr_put(dup, kv1, 77, ierr)
  call mpi_comm_dup(dup, dup2, ierr)
  aval = 0
  call mpi_comm_get_attr(dup2, kv, aval, found, ierr)
  if (ierr /= MPI_SUCCESS .or. .not. found .or. aval /= 12345) call fail('attribute copied')
  call mpi_attr_get(dup2, kv1, ival, found, ierr)
  if (ierr /= MPI_SUCCESS .or. found) call fail('MPI_NULL_COPY_FN copied')
  call mpi_attr_get(dup, kv1, ival, found, ierr)
  if (ierr /= MPI_SUCCESS .or. .not. found .or. ival /= 77) call fail('attr_get')
  ndel = 0
  call mpi_comm_free(dup2, ierr)
  call mpi_comm_delete_attr(dup, kv, ierr)
  if (ndel /= 2) call fail('the delete callback')
  call mpi_comm_free_keyval(kv, ierr)
  call mpi_keyval_free(kv1, ierr)

  ! Datatype attributes: MPI_TYPE_DUP_FN copies the value to Type_dup's
  ! duplicate, countdel sees it go at Type_free and Type_delete_attr.
  call mpi_type_create_keyval(MPI_TYPE_DUP_FN, countdel, tkv, 5_MPI_ADDRESS_KIND, ierr)
  call ck(ierr, 'type_create_keyval')
  call mpi_type_contiguous(2, MPI_INTEGER, tt, ierr)
  call mpi_type_set_attr(tt, tkv, 12345_MPI_ADDRESS_KIND, ierr)
  call ck(ierr, 'type_set_attr')
  call mpi_type_dup(tt, tt2, ierr)
  aval = 0
  call mpi_type_get_attr(tt2, tkv, aval, found, ierr)
  if (ierr /= MPI_SUCCESS .or. .not. found .or. aval /= 12345) call fail('type attribute copied')
  ndel = 0
  call mpi_type_free(tt2, ierr)
  call mpi_type_delete_attr(tt, tkv, ierr)
  if (ndel /= 2) call fail('the type delete callback')
  call mpi_type_free(tt, ierr)
  call mpi_type_free_keyval(tkv, ierr)
  call ck(ierr, 'type_free_keyval')

  ! A darray in Fortran order: 4 x 6, rows whole, columns cyclic on 2
  ! processes; process 1 of 2 has columns 2, 4 and 6, column by column.
  do j = 1, 6
    do i = 1, 4
      ga(i, j) = 10 * i + j
    end do
  end do
  gs = (/4, 6/)
  dist = (/MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC/)
  dargs = (/MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG/)
  ps = (/1, 2/)
  call mpi_type_create_darray(2, 1, 2, gs, dist, dargs, ps, MPI_ORDER_FORTRAN, MPI_INTEGER, &
       da, ierr)
  call ck(ierr, 'type_create_darray')
  call mpi_type_commit(da, ierr)
  pos = 0
  call mpi_pack(ga, 1, da, pk, 48, pos, MPI_COMM_WORLD, ierr)
  if (ierr /= 0 .or. pos /= 48) call fail('pack of a darray')
  k = 0
  do j = 2, 6, 2
    do i = 1, 4
      k = k + 1
      if (pk(k) /= 10 * i + j) call fail('darray element')
    end do
  end do
  call mpi_type_free(da, ierr)

  ! external32: big-endian INTEGERs, the representation a CHARACTER.
  xv = (/1, -2/)
  call mpi_pack_external_size('external32', 2, MPI_INTEGER, xsize, ierr)
  if (ierr /= 0 .or. xsize /= 8) call fail('pack_external_size')
  xpos = 0
  call mpi_pack_external('external32', xv, 2, MPI_INTEGER, xb, 8_MPI_ADDRESS_KIND, xpos, ierr)
  if (ierr /= 0 .or. xpos /= 8) call fail('pack_external')
  if (any(xb /= (/0_1, 0_1, 0_1, 1_1, -1_1, -1_1, -1_1, -2_1/))) call fail('external32 bytes')
  xpos = 0
  xback = 0
  call mpi_unpack_external('external32  ', xb, 8_MPI_ADDRESS_KIND, xpos, xback, 2, &
       MPI_INTEGER, ierr)
  if (ierr /= 0 .or. xpos /= 8 .or. any(xback /= xv)) call fail('unpack_external')

  ! Topologies: MPI_UNWEIGHTED through the common block, a ring's
  ! neighbour allgather, a Cartesian edge's MPI_PROC_NULL block untouched.
  tsrc(1) = mod(rank + nproc - 1, nproc)
  tdst(1) = mod(rank + 1, nproc)
  call mpi_dist_graph_create_adjacent(MPI_COMM_WORLD, 1, tsrc, MPI_UNWEIGHTED, 1, tdst, &
       MPI_UNWEIGHTED, MPI_INFO_NULL, .false., dg, ierr)
  call ck(ierr, 'dist_graph_create_adjacent')
  call mpi_dist_graph_neighbors_count(dg, indeg, outdeg, weighted, ierr)
  if (ierr /= 0 .or. indeg /= 1 .or. outdeg /= 1 .or. weighted) call fail('unweighted ring')
  tsb(1) = 100 + rank
  trb = -1
  call mpi_neighbor_allgather(tsb, 1, MPI_INTEGER, trb, 1, MPI_INTEGER, dg, ierr)
  if (ierr /= 0 .or. trb(1) /= 100 + tsrc(1)) call fail('neighbor_allgather on a ring')
  call mpi_comm_free(dg, ierr)
  tdims(1) = nproc
  tper(1) = .false.
  call mpi_cart_create(MPI_COMM_WORLD, 1, tdims, tper, .false., cart, ierr)
  trb = -1
  call mpi_neighbor_allgather(tsb, 1, MPI_INTEGER, trb, 1, MPI_INTEGER, cart, ierr)
  if (rank > 0 .and. trb(1) /= 99 + rank) call fail('neighbor_allgather from -1')
  if (rank == 0 .and. trb(1) /= -1) call fail('MPI_PROC_NULL block written')
  if (rank < nproc - 1 .and. trb(2) /= 101 + rank) call fail('neighbor_allgather from +1')
  call mpi_comm_free(cart, ierr)

  ! Kinds: MPI_TYPE_CREATE_F90_REAL for SELECTED_REAL_KIND(15) carries a
  ! real(kind=dk) whole, the same handle twice; F90_INTEGER(9) is 4 bytes.
  call mpi_type_create_f90_real(15, MPI_UNDEFINED, f90r, ierr)
  call mpi_type_create_f90_real(15, MPI_UNDEFINED, f90r2, ierr)
  call mpi_type_size(f90r, tsize, ierr)
  if (ierr /= 0 .or. f90r /= f90r2 .or. tsize /= 8) call fail('type_create_f90_real(15)')
  call mpi_type_create_f90_integer(9, f90i, ierr)
  call mpi_type_size(f90i, tsize, ierr)
  if (ierr /= 0 .or. tsize /= 4) call fail('type_create_f90_integer(9)')
  call mpi_type_get_envelope(f90r, ni, na, nt, comb, ierr)
  if (comb /= MPI_COMBINER_F90_REAL .or. ni /= 2) call fail('f90 real envelope')
  dsend = 1.0_dk / 3.0_dk + rank
  call mpi_allreduce(dsend, drecv, 1, f90r, MPI_MAX, MPI_COMM_WORLD, ierr)
  if (ierr /= 0 .or. drecv /= 1.0_dk / 3.0_dk + (nproc - 1)) call fail('f90 real allreduce')

  ! MPI_AINT_DIFF and MPI_AINT_ADD: two ints of an array are 4 bytes apart.
  call mpi_get_address(fbuf(1), fa0, ierr)
  call mpi_get_address(fbuf(2), fa1, ierr)
  if (mpi_aint_diff(fa1, fa0) /= 4 .or. mpi_aint_add(fa0, mpi_aint_diff(fa1, fa0)) /= fa1) &
       call fail('aint_diff/aint_add')

  ! ---- MPI-IO: each rank its own file under /tmp (MPI_COMM_SELF), written
  ! with a split collective, read back with a nonblocking collective; a
  ! Fortran file error handler called with its file and code ----
  fpid = getpid()
  call mpi_bcast(fpid, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  write (fname, '(a,i0,a,i0)') '/tmp/tern-fbind-', fpid, '-', rank
  call mpi_file_open(MPI_COMM_SELF, fname, MPI_MODE_CREATE + MPI_MODE_RDWR + &
       MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, fh, ierr)
  call ck(ierr, 'file_open')
  fbuf = (/ 11, 22, 33, 44 + rank /)
  foff = 8
  call mpi_file_write_at_all_begin(fh, foff, fbuf, 4, MPI_INTEGER, ierr)
  call ck(ierr, 'write_at_all_begin')
  call mpi_file_write_at_all_end(fh, fbuf, fstat, ierr)
  call ck(ierr, 'write_at_all_end')
  call mpi_get_count(fstat, MPI_INTEGER, fcount, ierr)
  if (fcount /= 4) call fail('write_at_all_end status')
  fback = 0
  call mpi_file_iread_at_all(fh, foff, fback, 4, MPI_INTEGER, freq, ierr)
  call ck(ierr, 'iread_at_all')
  call mpi_wait(freq, fstat, ierr)
  if (ierr /= 0 .or. any(fback /= fbuf)) call fail('iread_at_all read back what was written')
  hcount = 0 ! onerr serves files too: (handle, code)
  call mpi_file_create_errhandler(onerr, feh, ierr)
  call ck(ierr, 'file_create_errhandler')
  call mpi_file_set_errhandler(fh, feh, ierr)
  call ck(ierr, 'file_set_errhandler')
  ! An end with no begin: MPI_ERR_IO, through the handler.
  call mpi_file_write_at_all_end(fh, fbuf, fstat, ierr)
  call mpi_error_class(ierr, cls, i)
  if (cls /= MPI_ERR_IO .or. hcount /= 1 .or. hcomm /= fh .or. hcode /= ierr) &
       call fail('an end with no begin called the file handler with MPI_ERR_IO')
  call mpi_file_call_errhandler(fh, MPI_ERR_OTHER, ierr)
  if (ierr /= 0 .or. hcount /= 2 .or. hcode /= MPI_ERR_OTHER) &
       call fail('file_call_errhandler')
  call mpi_errhandler_free(feh, ierr)
  call mpi_file_close(fh, ierr)
  call ck(ierr, 'file_close')

  ! ---- a dynamic window of its own (MPI_COMM_SELF): its array attached, put
  ! to and read back by address with the request-based calls ----
  dmem = 0
  call mpi_win_create_dynamic(MPI_INFO_NULL, MPI_COMM_SELF, dwin, ierr)
  call ck(ierr, 'win_create_dynamic')
  dsize = 32
  call mpi_win_attach(dwin, dmem, dsize, ierr)
  call ck(ierr, 'win_attach')
  call mpi_get_address(dmem, daddr, ierr)
  call mpi_win_lock_all(0, dwin, ierr)
  fbuf = (/ 5, 6, 7, 8 + rank /)
  call mpi_rput(fbuf, 4, MPI_INTEGER, 0, daddr, 4, MPI_INTEGER, dwin, dreqs(1), ierr)
  call ck(ierr, 'rput')
  call mpi_wait(dreqs(1), fstat, ierr)
  call mpi_win_flush(0, dwin, ierr)
  dget = 0
  call mpi_rget(dget, 4, MPI_INTEGER, 0, daddr, 4, MPI_INTEGER, dwin, dreqs(2), ierr)
  call ck(ierr, 'rget')
  call mpi_wait(dreqs(2), fstat, ierr)
  if (any(dget /= fbuf)) call fail('rget read back what rput wrote')
  dacc = (/ 100, 1 /)
  call mpi_raccumulate(dacc(1), 1, MPI_INTEGER, 0, daddr + 16, 1, MPI_INTEGER, MPI_SUM, &
       dwin, dreqs(3), ierr)
  call mpi_rget_accumulate(dacc(2), 1, MPI_INTEGER, dold, 1, MPI_INTEGER, 0, daddr + 20, 1, &
       MPI_INTEGER, MPI_SUM, dwin, dreqs(4), ierr)
  call mpi_waitall(2, dreqs(3), MPI_STATUSES_IGNORE, ierr)
  call ck(ierr, 'raccumulate, rget_accumulate')
  call mpi_win_unlock_all(dwin, ierr)
  if (dold /= 0 .or. dmem(5) /= 100 .or. dmem(6) /= 1 .or. dmem(4) /= 8 + rank) &
       call fail('raccumulate/rget_accumulate on the attached array')
  call mpi_win_detach(dwin, dmem, ierr)
  call ck(ierr, 'win_detach')
  call mpi_win_free(dwin, ierr)

  ! A session: its process sets, and a communicator from mpi://WORLD.
  call mpi_session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, ses, ierr)
  call ck(ierr, 'session_init')
  call mpi_session_get_num_psets(ses, MPI_INFO_NULL, snum, ierr)
  if (snum /= 2) call fail('session_get_num_psets')
  slen = 0
  call mpi_session_get_nth_pset(ses, MPI_INFO_NULL, 1, slen, sname, ierr)
  if (slen /= 10) call fail('session_get_nth_pset: length of mpi://SELF')
  slen = MPI_MAX_PSET_NAME_LEN
  call mpi_session_get_nth_pset(ses, MPI_INFO_NULL, 0, slen, sname, ierr)
  if (sname /= 'mpi://WORLD' .or. slen /= 11) call fail('session_get_nth_pset: mpi://WORLD')
  call mpi_group_from_session_pset(ses, sname, sgrp, ierr)
  call ck(ierr, 'group_from_session_pset')
  call mpi_comm_create_from_group(sgrp, 'org.tern.fbind  ', MPI_INFO_NULL, MPI_ERRORS_RETURN, &
       scomm, ierr)
  call ck(ierr, 'comm_create_from_group')
  call mpi_allreduce(rank, ssum, 1, MPI_INTEGER, MPI_SUM, scomm, ierr)
  if (ssum /= nproc * (nproc - 1) / 2) call fail('allreduce on the session''s communicator')
  call mpi_group_from_session_pset(ses, 'mpi://nowhere', x, ierr)
  if (ierr /= MPI_ERR_ARG) call fail('group_from_session_pset of an unknown set')
  call mpi_comm_free(scomm, ierr)
  call mpi_group_free(sgrp, ierr)
  call mpi_session_finalize(ses, ierr)
  if (ses /= MPI_SESSION_NULL) call fail('session_finalize')

  call mpi_comm_free(dup, ierr)
  call mpi_barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a,i0,a)', 'fortran bindings ok on ', nproc, ' ranks'
  call mpi_finalize(ierr)

contains

  subroutine bounds(t, wantlb, wantub, wantsize, what)
    integer, intent(in) :: t, wantlb, wantub
    integer(kind=MPI_COUNT_KIND), intent(in) :: wantsize
    character(len=*), intent(in) :: what
    integer :: e
    character(len=80) :: got
    lb = 12345
    ub = 12345
    sx = -1   ! all 64 bits must be written
    call mpi_type_lb(t, lb, e)
    call ck(e, 'type_lb ' // what)
    call mpi_type_ub(t, ub, e)
    call ck(e, 'type_ub ' // what)
    call mpi_type_size_x(t, sx, e)
    call ck(e, 'type_size_x ' // what)
    if (lb /= wantlb .or. ub /= wantub .or. sx /= wantsize) then
       write (got, '(a,i0,a,i0,a,i0)') 'lb ', lb, ' ub ', ub, ' size ', sx
       call fail(what // ': ' // trim(got))
    end if
  end subroutine bounds

  subroutine ck(e, what)
    integer, intent(in) :: e
    character(len=*), intent(in) :: what
    if (e /= MPI_SUCCESS) call fail(what // ' returned an error')
  end subroutine ck

  subroutine fail(what)
    character(len=*), intent(in) :: what
    integer :: e
    print '(a,i0,a,a)', 'rank ', rank, ': FAILED ', what
    flush(6)   ! MPI_ABORT ends the rank without flushing Fortran's units
    call mpi_abort(MPI_COMM_WORLD, 2, e)
  end subroutine fail
end program fbind

! The error handler: (comm or file, error code), both INTEGERs by reference.
subroutine onerr(comm, code)
  implicit none
  integer :: comm, code
  integer :: hcount, hcomm, hcode
  common /hstate/ hcount, hcomm, hcode
  hcount = hcount + 1
  hcomm = comm
  hcode = code
end subroutine onerr

! a op b = a: associative, not commutative (inoutvec = invec op inoutvec).
subroutine first(invec, inoutvec, n, datatype)
  implicit none
  integer :: n, datatype, i
  integer :: invec(n), inoutvec(n)
  do i = 1, n
     inoutvec(i) = invec(i)
  end do
end subroutine first

subroutine addup(invec, inoutvec, n, datatype)
  implicit none
  integer :: n, datatype, i
  integer :: invec(n), inoutvec(n)
  do i = 1, n
     inoutvec(i) = inoutvec(i) + invec(i)
  end do
end subroutine addup

! A delete callback: counts the values it is given that are 12345 with
! extra state 5.
subroutine countdel(comm, keyval, val, extra, ierr)
  implicit none
  include 'mpif.h'
  integer :: comm, keyval, ierr, ndel
  integer(kind=MPI_ADDRESS_KIND) :: val, extra
  common /dstate/ ndel
  if (val == 12345 .and. extra == 5) ndel = ndel + 1
  ierr = MPI_SUCCESS
end subroutine countdel
