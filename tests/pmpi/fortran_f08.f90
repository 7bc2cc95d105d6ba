! fortran_allreduce.f90 with `use mpi_f08` (the Fortran 2008 bindings): the same calls,
! bounds and output. Under MPICH the f08 bindings (libmpichfort's mpi_*_f08ts_) call the C
! MPI_* functions; under Open MPI (libmpi_usempif08's mpi_*_f08_) they call the mpif.h
! implementations ompi_*_f, which the layer defines (src/pmpi/fortran.cc).
program fortran_f08
  use mpi_f08
  implicit none
  integer, parameter :: n = 20000
  real(8) :: x(n), y(n), want(n), mag(n), eb, worst, m1
  real(8), allocatable :: s(:), g(:), t(:)
  integer :: ierr, rank, nranks, i, q, differ
  character(len=32) :: arg

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nranks, ierr)
  eb = 0
  if (command_argument_count() > 0) then
    call get_command_argument(1, arg)
    read (arg, *) eb
  end if
  worst = 0
  differ = 0
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

  call MPI_ALLREDUCE(x, y, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(y, dble(nranks))
  y = x
  call MPI_ALLREDUCE(MPI_IN_PLACE, y, n, MPI_REAL8, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(y, dble(nranks))
  y = 0
  call MPI_REDUCE(x, y, n, MPI_DOUBLE_PRECISION, MPI_SUM, nranks - 1, MPI_COMM_WORLD, ierr)
  if (rank == nranks - 1) call check(y, dble(nranks))
  if (rank == 0) y = want
  call MPI_BCAST(y, n, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, ierr)
  call check(y, 1d0)

  ! Blocks of n values: rank q's block for rank d is val(q, d*n + i).
  allocate(s(n * nranks), g(n * nranks), t(n * nranks))
  do q = 0, nranks - 1
    do i = 1, n
      s(q * n + i) = val(rank, q * n + i)
    end do
  end do
  call MPI_REDUCE_SCATTER_BLOCK(s, y, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  do i = 1, n
    t(i) = 0
    m1 = 0
    do q = 0, nranks - 1
      t(i) = t(i) + val(q, rank * n + i)
      m1 = m1 + abs(val(q, rank * n + i))
    end do
    call check1(y(i), t(i), dble(nranks), m1 + 200d0 * nranks)
  end do
  call MPI_ALLGATHER(x, n, MPI_DOUBLE_PRECISION, g, n, MPI_DOUBLE_PRECISION, MPI_COMM_WORLD, ierr)
  do q = 0, nranks - 1
    do i = 1, n
      call check1(g(q * n + i), val(q, i), 1d0, 200d0)
    end do
  end do
  call MPI_ALLTOALL(s, n, MPI_DOUBLE_PRECISION, g, n, MPI_DOUBLE_PRECISION, MPI_COMM_WORLD, ierr)
  do q = 0, nranks - 1
    do i = 1, n
      call check1(g(q * n + i), val(q, rank * n + i), 1d0, 200d0)
    end do
  end do

  print '(a,i0,a,i0,a,f8.4)', 'fortran_f08 rank ', rank, ' differ ', differ, ' worst ', worst
  call MPI_FINALIZE(ierr)
  if (worst > 1) stop 1

contains

  real(8) function val(r, i)
    integer, intent(in) :: r, i
    val = 100d0 * sin(0.001d0 * i + r) + 0.5d0 * r
  end function val

  ! One value against what was sent (k = 1), or against the sum over the ranks (k = ranks).
  ! m scales the rounding allowance: val's terms are up to 100 in magnitude and may round
  ! differently on another rank (vectorized or scalar sin), by a few ulps of that.
  subroutine check1(got, exact, k, m)
    real(8), intent(in) :: got, exact, k, m
    real(8) :: e
    e = abs(got - exact)
    if (e == 0) return
    differ = differ + 1
    worst = max(worst, e / (k * eb + nranks * epsilon(1d0) * m))
  end subroutine check1

  subroutine check(got, k)
    real(8), intent(in) :: got(n), k
    real(8) :: e, allow
    integer :: j
    do j = 1, n
      e = abs(got(j) - want(j))
      if (e == 0) cycle
      differ = differ + 1
      allow = k * eb + nranks * epsilon(1d0) * mag(j)
      worst = max(worst, e / allow)
    end do
  end subroutine check
end program fortran_f08
