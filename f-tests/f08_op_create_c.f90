! oxmpi-test: ranks=1,3 timeout=60 mpich=skip mpich-built=skip
! MPI_Op_create_c of `use mpi_f08`: a user operation with an INTEGER(KIND=MPI_COUNT_KIND) length.
! mpich=skip, mpich-built=skip: MPICH 4.0.2's module declares it but its library lacks it.
! A module procedure: an internal one passed as a C function pointer needs a trampoline on the
! (executable) stack, which threads mode's rank stacks are not.
module f08_op_create_c_ops
    use mpi_f08
    implicit none
contains
    subroutine imax(invec, inoutvec, len, datatype)
        use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
        type(c_ptr), value :: invec, inoutvec
        integer(kind=MPI_COUNT_KIND) :: len
        type(MPI_Datatype) :: datatype
        integer, pointer :: x(:), y(:)
        call c_f_pointer(invec, x, [len])
        call c_f_pointer(inoutvec, y, [len])
        if (datatype == MPI_INTEGER) y = max(x, y)
    end subroutine
end module

program f08_op_create_c
    use mpi_f08
    use f08_op_create_c_ops
    implicit none
    integer :: rank, nprocs
    integer :: a(4), b(4)
    type(MPI_Op) :: op

    call MPI_Init()
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
    call MPI_Op_create_c(imax, .true., op)
    a = [rank, -rank, 1, 2]
    call MPI_Allreduce(a, b, 4_MPI_COUNT_KIND, MPI_INTEGER, op, MPI_COMM_WORLD)
    if (any(b /= [nprocs - 1, 0, 1, 2])) then
        print *, 'rank', rank, 'FAILED: op_create_c', b
        call MPI_Abort(MPI_COMM_WORLD, 1)
    end if
    call MPI_Op_free(op)
    call MPI_Finalize()
end program
