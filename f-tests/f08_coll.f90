! oxmpi-test: ranks=1,3 timeout=60
! Collectives and objects with `use mpi_f08`: Bcast, Allreduce (also MPI_IN_PLACE), Gather with
! MPI_IN_PLACE at the root, a user MPI_Op, a derived datatype (a matrix column), communicator
! split/compare/free and its name, attributes with MPI_COMM_DUP_FN, and an error under
! MPI_ERRORS_RETURN returned in ierror.
program f08_coll
    use mpi_f08
    implicit none
    integer :: rank, nprocs, i, x, y, ierr, cls, res, key, color, srank, keyval, len
    integer :: v(4), gat(64)
    double precision :: m(3, 4), col(3)
    type(MPI_Comm) :: half, dup
    type(MPI_Datatype) :: column
    type(MPI_Op) :: op
    logical :: flag
    integer(kind=MPI_ADDRESS_KIND) :: attr
    character(len=MPI_MAX_OBJECT_NAME) :: name

    call MPI_Init()
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs)

    x = rank + 1
    call MPI_Allreduce(x, y, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
    call check(y == nprocs * (nprocs + 1) / 2, 'allreduce')
    v = [rank, 1, 2, rank * rank]
    call MPI_Allreduce(MPI_IN_PLACE, v, 4, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD)
    call check(all(v == [nprocs - 1, 1, 2, (nprocs - 1)**2]), 'allreduce in place')

    v = -1
    if (rank == 0) v = [4, 3, 2, 1]
    call MPI_Bcast(v, 4, MPI_INTEGER, 0, MPI_COMM_WORLD)
    call check(all(v == [4, 3, 2, 1]), 'bcast')

    gat = -1
    gat(rank + 1) = 10 * rank
    if (rank == 0) then
        call MPI_Gather(MPI_IN_PLACE, 1, MPI_INTEGER, gat, 1, MPI_INTEGER, 0, MPI_COMM_WORLD)
        call check(all(gat(1:nprocs) == [(10 * i, i = 0, nprocs - 1)]), 'gather in place')
    else
        call MPI_Gather(gat(rank + 1), 1, MPI_INTEGER, gat, 1, MPI_INTEGER, 0, MPI_COMM_WORLD)
    end if

    ! A user operation (MPI_User_function: TYPE(C_PTR) vectors) that multiplies.
    call MPI_Op_create(times, .true., op)
    x = 2
    call MPI_Allreduce(x, y, 1, MPI_INTEGER, op, MPI_COMM_WORLD)
    call check(y == 2**nprocs, 'user op')
    call MPI_Op_free(op)
    call check(op == MPI_OP_NULL, 'op_free')

    ! Column 2 of a 3x4 matrix, sent as one element of a vector type.
    call MPI_Type_vector(3, 1, 1, MPI_DOUBLE_PRECISION, column)
    call MPI_Type_commit(column)
    m = reshape([(dble(i), i = 1, 12)], [3, 4])
    col = 0
    call MPI_Sendrecv(m(1, 2), 1, column, rank, 3, col, 3, MPI_DOUBLE_PRECISION, rank, 3, &
                      MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    call check(all(col == [4d0, 5d0, 6d0]), 'derived type')
    call MPI_Type_free(column)
    call check(column == MPI_DATATYPE_NULL, 'type_free')

    ! Split by parity, key = -rank (reversed order).
    color = modulo(rank, 2)
    key = -rank
    call MPI_Comm_split(MPI_COMM_WORLD, color, key, half)
    call MPI_Comm_rank(half, srank)
    call MPI_Comm_size(half, x)
    call check(x == (nprocs - color + 1) / 2, 'split size')
    call check(srank == x - 1 - rank / 2, 'split rank order')
    call MPI_Comm_compare(half, MPI_COMM_WORLD, res)
    if (nprocs == 1) then
        call check(res == MPI_CONGRUENT, 'compare 1')
    else
        call check(res == MPI_UNEQUAL, 'compare')
    end if
    call MPI_Comm_set_name(half, 'half')
    call MPI_Comm_get_name(half, name, len)
    call check(name == 'half' .and. len == 4, 'comm name')

    ! An attribute copied by MPI_COMM_DUP_FN into a duplicate.
    call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, keyval, 0_MPI_ADDRESS_KIND)
    call MPI_Comm_set_attr(half, keyval, 4242_MPI_ADDRESS_KIND)
    call MPI_Comm_dup(half, dup)
    call MPI_Comm_get_attr(dup, keyval, attr, flag)
    call check(flag .and. attr == 4242, 'dup_fn attribute')
    call MPI_Comm_free(dup)
    call MPI_Comm_free_keyval(keyval)
    call MPI_Comm_free(half)
    call check(half == MPI_COMM_NULL, 'comm_free')

    ! Errors return to the caller in ierror.
    call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)
    call MPI_Send(x, 1, MPI_INTEGER, nprocs + 5, 0, MPI_COMM_WORLD, ierr)
    call check(ierr /= MPI_SUCCESS, 'invalid rank is an error')
    call MPI_Error_class(ierr, cls)
    call check(cls == MPI_ERR_RANK, 'error class MPI_ERR_RANK')

    call MPI_Finalize()
contains
    subroutine times(invec, inoutvec, n, datatype)
        use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
        type(c_ptr), value :: invec, inoutvec
        integer :: n
        type(MPI_Datatype) :: datatype
        integer, pointer :: a(:), b(:)
        call c_f_pointer(invec, a, [n])
        call c_f_pointer(inoutvec, b, [n])
        if (datatype == MPI_INTEGER) b = a * b
    end subroutine
    include 'f08_check.inc'
end program
