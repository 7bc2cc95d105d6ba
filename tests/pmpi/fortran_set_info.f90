! MPI_COMM_SET_INFO from Fortran (`use mpi`): a duplicate of MPI_COMM_WORLD opted in with
! the hints zcoll_enable=true, zcoll_eb=2e-3 (argument 1) and zcoll_eb_mode=abs, under
! ZCOLL_COMMS=hinted and no ZCOLL_EB, so that the hints alone opt it in. MPI_ALLREDUCE
! (SUM) of REAL*8 on it must be within ranks x eb plus the rounding of the sum; the same
! call on MPI_COMM_WORLD (not hinted) must be exact to the rounding. Prints, per rank, how
! many elements of the two results differ (0 without the layer: the same call on
! congruent communicators; > 0 when the hinted one was compressed) and the worst errors
! over their allowances; exits with status 1 if an error is over its allowance.
program fortran_set_info
  use mpi
  implicit none
  integer, parameter :: n = 20000
  real(8) :: x(n), y(n), z(n), want(n), mag(n), eb, worst, wworst
  integer :: ierr, rank, nranks, i, q, differ, wdiffer, info, hinted
  character(len=32) :: arg

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nranks, ierr)
  eb = 2d-3
  if (command_argument_count() > 0) then
    call get_command_argument(1, arg)
    read (arg, *) eb
  end if
  want = 0
  mag = 0
  do q = 0, nranks - 1
    do i = 1, n
      want(i) = want(i) + val(q, i)
      mag(i) = mag(i) + abs(val(q, i))
    end do
  end do
  do i = 1, n
    x(i) = val(rank, i)
  end do

  call MPI_COMM_DUP(MPI_COMM_WORLD, hinted, ierr)
  call MPI_INFO_CREATE(info, ierr)
  call MPI_INFO_SET(info, 'zcoll_enable', 'true', ierr)
  write (arg, '(es12.5)') eb
  call MPI_INFO_SET(info, 'zcoll_eb', trim(adjustl(arg)), ierr)
  call MPI_INFO_SET(info, 'zcoll_eb_mode', 'abs', ierr)
  call MPI_COMM_SET_INFO(hinted, info, ierr)
  call MPI_INFO_FREE(info, ierr)

  call MPI_ALLREDUCE(x, y, n, MPI_DOUBLE_PRECISION, MPI_SUM, hinted, ierr)
  call compare(y, eb, differ, worst)
  call MPI_ALLREDUCE(x, z, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  call compare(z, 0d0, wdiffer, wworst)
  differ = count(y /= z)

  print '(a,i0,a,i0,a,f8.4,a,f8.4)', 'set_info rank ', rank, ' hinted_vs_world ', differ, ' hinted_worst ', &
    worst, ' world_worst ', wworst
  call MPI_COMM_FREE(hinted, ierr)
  call MPI_FINALIZE(ierr)
  if (worst > 1 .or. wworst > 1) stop 1

contains

  real(8) function val(r, i)
    integer, intent(in) :: r, i
    val = 100d0 * sin(0.001d0 * i + r) + 0.5d0 * r
  end function val

  ! got against the exact sum: how many differ, and the worst error over nranks x bound
  ! plus the rounding of the sum (a few ulps of the terms, as in fortran_allreduce.f90).
  subroutine compare(got, bound, nd, w)
    real(8), intent(in) :: got(n), bound
    integer, intent(out) :: nd
    real(8), intent(out) :: w
    real(8) :: e
    integer :: j
    nd = 0
    w = 0
    do j = 1, n
      e = abs(got(j) - want(j))
      if (e == 0) cycle
      nd = nd + 1
      w = max(w, e / (nranks * bound + nranks * epsilon(1d0) * (mag(j) + 200d0 * nranks)))
    end do
  end subroutine compare
end program fortran_set_info
