! What a Fortran program does with files (gfortran's runtime): formatted
! and unformatted sequential records, direct access, stream access,
! BACKSPACE, REWIND, APPEND, INQUIRE, CLOSE with STATUS='DELETE'.  Run with
! a directory; every line is the same on Linux.
program fortio
  implicit none
  character(len=512) :: dir, f1, f2, f3
  integer :: i, n, u, ios, rec(5), total
  real(8) :: x(100), y(100)
  logical :: there
  character(len=32) :: line
  integer(8) :: sz

  call get_command_argument(1, dir)
  f1 = trim(dir) // '/formatted.txt'
  f2 = trim(dir) // '/unformatted.bin'
  f3 = trim(dir) // '/direct.bin'

  open(newunit=u, file=f1, status='replace', action='write')
  do i = 1, 10
    write(u, '(a,i0)') 'line ', i
  end do
  close(u)
  open(newunit=u, file=f1, position='append', action='write')
  write(u, '(a)') 'appended'
  close(u)
  open(newunit=u, file=f1, status='old', action='read')
  n = 0
  do
    read(u, '(a)', iostat=ios) line
    if (ios /= 0) exit
    n = n + 1
  end do
  backspace(u)
  backspace(u)
  read(u, '(a)') line
  print '(a,i0,a,a)', 'formatted: ', n, ' lines; the last again after BACKSPACE: ', trim(line)
  rewind(u)
  read(u, '(a)') line
  print '(a,a)', 'after REWIND: ', trim(line)
  close(u)

  x = [(real(i, 8) / 3.0d0, i = 1, 100)]
  open(newunit=u, file=f2, form='unformatted', status='replace')
  write(u) x
  write(u) 42
  close(u)
  open(newunit=u, file=f2, form='unformatted', status='old')
  read(u) y
  read(u) n
  close(u)
  print '(a,l1,a,i0)', 'unformatted: the same values ', all(x == y), ', then ', n

  open(newunit=u, file=f3, access='direct', recl=4, form='unformatted', status='replace')
  do i = 5, 1, -1
    write(u, rec=i) i * 11
  end do
  close(u)
  open(newunit=u, file=f3, access='direct', recl=4, form='unformatted', status='old')
  do i = 1, 5
    read(u, rec=i) rec(i)
  end do
  close(u)
  print '(a,5(1x,i0))', 'direct access records:', rec

  open(newunit=u, file=f3, access='stream', form='unformatted', status='old')
  read(u, pos=9) n
  inquire(unit=u, size=sz)
  close(u)
  print '(a,i0,a,i0)', 'stream at byte 9: ', n, ', size ', sz

  inquire(file=f1, exist=there)
  print '(a,l1)', 'inquire exist: ', there
  open(newunit=u, file=f1, status='old')
  close(u, status='delete')
  inquire(file=f1, exist=there)
  print '(a,l1)', 'after CLOSE STATUS=DELETE: ', there
  open(newunit=u, file=trim(dir) // '/none', status='old', iostat=ios)
  print '(a,l1)', 'open of a missing file fails: ', ios /= 0
  open(newunit=u, file=f2, status='old')
  close(u, status='delete')
  open(newunit=u, file=f3, status='old')
  close(u, status='delete')
  total = 0
  print '(a,i0)', 'done ', total
end program fortio
