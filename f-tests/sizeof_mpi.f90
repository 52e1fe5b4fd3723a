! oxmpi-test: ranks=1 timeout=60
! MPI_SIZEOF through `use mpi` (MPI 4.1 section 19.1.9): the size in bytes of a variable of a
! numeric intrinsic type, scalar or array, for every kind a program commonly uses. Only the kinds
! and ranks MPICH's `use mpi` has (scalars and 1-D arrays, no double complex), so that the
! MPICH-built binary runs too; f08_file checks more through mpi_f08.
program sizeof_mpi
    use mpi
    implicit none
    integer :: ierr, sz, rank
    integer :: i, ia(3)
    integer(kind=selected_int_kind(2)) :: i1
    integer(kind=selected_int_kind(4)) :: i2(5)
    integer(kind=selected_int_kind(15)) :: i8
    real :: r(2)
    double precision :: d
    complex :: c
    complex :: z(4)
    logical :: l
    character(len=1) :: ch

    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_SIZEOF(i, sz, ierr)
    call check(sz == 4 .and. ierr == MPI_SUCCESS, 'integer')
    call MPI_SIZEOF(ia, sz, ierr)
    call check(sz == 4, 'integer array')
    call MPI_SIZEOF(i1, sz, ierr)
    call check(sz == 1, 'integer(1)')
    call MPI_SIZEOF(i2, sz, ierr)
    call check(sz == 2, 'integer(2) array')
    call MPI_SIZEOF(i8, sz, ierr)
    call check(sz == 8, 'integer(8)')
    call MPI_SIZEOF(r, sz, ierr)
    call check(sz == 4, 'real array')
    call MPI_SIZEOF(d, sz, ierr)
    call check(sz == 8, 'double precision')
    call MPI_SIZEOF(c, sz, ierr)
    call check(sz == 8, 'complex')
    call MPI_SIZEOF(z, sz, ierr)
    call check(sz == 8, 'complex array')
    call MPI_SIZEOF(l, sz, ierr)
    call check(sz == 4, 'logical')
    call MPI_SIZEOF(ch, sz, ierr)
    call check(sz == 1, 'character')
    if (rank == 0) print *, 'sizeof_mpi: OK'
    call MPI_Finalize(ierr)
contains
    subroutine check(ok, what)
        logical, intent(in) :: ok
        character(len=*), intent(in) :: what
        integer :: e
        if (.not. ok) then
            print *, 'FAILED: ', what, ' size ', sz
            call MPI_Abort(MPI_COMM_WORLD, 1, e)
        end if
    end subroutine
end program
