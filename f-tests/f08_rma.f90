! oxmpi-test: ranks=2,4 timeout=60
! One-sided basics with `use mpi_f08`: MPI_Win_create, fences, MPI_Put, MPI_Get, MPI_Accumulate,
! MPI_Win_allocate (TYPE(C_PTR) base), MPI_Win_free.
program f08_rma
    use mpi_f08
    use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
    implicit none
    integer :: rank, nprocs, right, left, i
    integer, target :: buf(4)
    integer :: got(4)
    integer, pointer :: mem(:)
    type(MPI_Win) :: win, win2
    type(c_ptr) :: base
    integer(kind=MPI_ADDRESS_KIND) :: sz

    call MPI_Init()
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
    right = modulo(rank + 1, nprocs)
    left = modulo(rank - 1, nprocs)

    buf = -1
    sz = 4 * 4
    call MPI_Win_create(buf, sz, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win)
    call MPI_Win_fence(0, win)
    call MPI_Put([(rank * 10 + i, i = 1, 4)], 4, MPI_INTEGER, right, 0_MPI_ADDRESS_KIND, 4, MPI_INTEGER, win)
    call MPI_Win_fence(0, win)
    call check(all(buf == [(left * 10 + i, i = 1, 4)]), 'put')
    got = 0
    call MPI_Get(got, 2, MPI_INTEGER, right, 2_MPI_ADDRESS_KIND, 2, MPI_INTEGER, win)
    call MPI_Win_fence(0, win)
    call check(all(got(1:2) == [rank * 10 + 3, rank * 10 + 4]), 'get')
    call MPI_Accumulate(1, 1, MPI_INTEGER, right, 0_MPI_ADDRESS_KIND, 1, MPI_INTEGER, MPI_SUM, win)
    call MPI_Win_fence(0, win)
    call check(buf(1) == left * 10 + 2, 'accumulate')
    call MPI_Win_free(win)
    call check(win == MPI_WIN_NULL, 'win_free')

    call MPI_Win_allocate(sz, 4, MPI_INFO_NULL, MPI_COMM_WORLD, base, win2)
    call c_f_pointer(base, mem, [4])
    mem = 0
    call MPI_Win_fence(0, win2)
    call MPI_Put(rank, 1, MPI_INTEGER, right, 3_MPI_ADDRESS_KIND, 1, MPI_INTEGER, win2)
    call MPI_Win_fence(0, win2)
    call check(mem(4) == left .and. all(mem(1:3) == 0), 'win_allocate put')
    call MPI_Win_free(win2)

    call MPI_Finalize()
contains
    include 'f08_check.inc'
end program
