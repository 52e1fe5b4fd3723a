! oxmpi-test: ranks=1,2,4 timeout=60
! mpif.h in free form: communicators (split, dup, names), string-returning calls
! (MPI_Get_processor_name, MPI_Error_string, MPI_Comm_get_name: blank padding, lengths),
! attributes (predefined MPI_TAG_UB in its Fortran value; user keyvals with MPI_COMM_DUP_FN and
! with Fortran callbacks), a user reduction op, a vector datatype, info keys with blanks.
module cb
    implicit none
    integer :: ncopy = 0, ndelete = 0
contains
    subroutine copy_fn(oldcomm, keyval, extra, vin, vout, flag, ierr)
        integer :: oldcomm, keyval, ierr
        integer(kind=8) :: extra, vin, vout
        logical :: flag
        ncopy = ncopy + 1
        vout = vin + extra
        flag = .true.
        ierr = 0
    end subroutine copy_fn
    subroutine delete_fn(comm, keyval, val, extra, ierr)
        integer :: comm, keyval, ierr
        integer(kind=8) :: val, extra
        ndelete = ndelete + 1
        ierr = 0
    end subroutine delete_fn
    subroutine absmax(invec, inoutvec, len, datatype)
        include 'mpif.h'
        integer :: len, datatype, i
        integer :: invec(len), inoutvec(len)
        do i = 1, len
            inoutvec(i) = max(abs(invec(i)), abs(inoutvec(i)))
        end do
        ! the datatype is this library's Fortran handle (Open MPI's index under its ABI)
        if (datatype /= MPI_INTEGER) inoutvec = -999
    end subroutine absmax
end module cb

program comm_strings
    use cb
    implicit none
    include 'mpif.h'
    integer :: ierr, rank, nprocs, sub, dup, n, key1, key2, op, vec, i, info, vlen
    character(len=MPI_MAX_PROCESSOR_NAME) :: host
    character(len=MPI_MAX_ERROR_STRING) :: msg
    character(len=MPI_MAX_OBJECT_NAME) :: cname
    character(len=8) :: short
    character(len=40) :: val
    integer(kind=MPI_ADDRESS_KIND) :: aval
    logical :: flag
    integer :: m(4, 3), col(3), v(2)

    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)

    call MPI_Get_processor_name(host, n, ierr)
    call check(ierr == MPI_SUCCESS .and. n > 0 .and. n <= MPI_MAX_PROCESSOR_NAME, 'processor name length')
    call check(len_trim(host) == n, 'processor name blank padded')

    call MPI_Error_string(MPI_ERR_TRUNCATE, msg, n, ierr)
    call check(n > 0 .and. len_trim(msg) == n, 'error string')
    call MPI_Error_string(MPI_ERR_TRUNCATE, short, n, ierr)
    call check(short == msg(1:8), 'error string truncated to the Fortran length')

    call MPI_Comm_get_name(MPI_COMM_WORLD, cname, n, ierr)
    call check(cname == 'MPI_COMM_WORLD' .and. n == 14, 'world name')
    call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), -rank, sub, ierr)
    call MPI_Comm_set_name(sub, 'my sub comm   ', ierr)
    call MPI_Comm_get_name(sub, cname, n, ierr)
    call check(cname == 'my sub comm' .and. n == 11, 'set_name trims trailing blanks')
    call MPI_Comm_rank(sub, n, ierr)
    call check(n == (nprocs - 1 - rank) / 2, 'split key order')

    ! Predefined attribute: the Fortran key value, an INTEGER(KIND=MPI_ADDRESS_KIND) value.
    call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, aval, flag, ierr)
    call check(flag .and. aval >= 32767, 'MPI_TAG_UB')

    ! User keyvals: copied on dup by MPI_COMM_DUP_FN and by a Fortran callback.
    call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, key1, 0_MPI_ADDRESS_KIND, ierr)
    call MPI_Comm_create_keyval(copy_fn, delete_fn, key2, 1000_MPI_ADDRESS_KIND, ierr)
    call MPI_Comm_set_attr(sub, key1, 77_MPI_ADDRESS_KIND, ierr)
    call MPI_Comm_set_attr(sub, key2, 5_MPI_ADDRESS_KIND, ierr)
    call MPI_Comm_dup(sub, dup, ierr)
    call MPI_Comm_get_attr(dup, key1, aval, flag, ierr)
    call check(flag .and. aval == 77, 'MPI_COMM_DUP_FN copy')
    call MPI_Comm_get_attr(dup, key2, aval, flag, ierr)
    call check(flag .and. aval == 1005 .and. ncopy == 1, 'Fortran copy callback')
    call MPI_Comm_free(dup, ierr)
    call check(ndelete == 1, 'Fortran delete callback')
    call MPI_Comm_free(sub, ierr)
    call check(ndelete == 2 .and. sub == MPI_COMM_NULL, 'delete on free')
    call MPI_Comm_free_keyval(key1, ierr)
    call MPI_Comm_free_keyval(key2, ierr)

    ! A Fortran user op.
    call MPI_Op_create(absmax, .true., op, ierr)
    v = [rank + 1, -rank]  ! a single rank never calls the op: keep the result right then too
    call MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_INTEGER, op, MPI_COMM_WORLD, ierr)
    call check(v(1) == nprocs .and. v(2) == nprocs - 1, 'user op')
    call MPI_Op_free(op, ierr)

    ! A row of a column-major matrix as a vector type, sent to self.
    m = reshape([(i, i = 1, 12)], [4, 3])
    call MPI_Type_vector(3, 1, 4, MPI_INTEGER, vec, ierr)
    call MPI_Type_commit(vec, ierr)
    call MPI_Sendrecv(m(2, 1), 1, vec, rank, 0, col, 3, MPI_INTEGER, rank, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call check(all(col == [2, 6, 10]), 'vector type')
    call MPI_Type_free(vec, ierr)

    ! Info: keys and values lose surrounding blanks.
    call MPI_Info_create(info, ierr)
    call MPI_Info_set(info, '  mykey ', ' some value  ', ierr)
    call MPI_Info_get_valuelen(info, 'mykey', vlen, flag, ierr)
    call check(flag .and. vlen == 10, 'info valuelen')
    call MPI_Info_get(info, 'mykey', 40, val, flag, ierr)
    call check(flag .and. val == 'some value', 'info get')
    call MPI_Info_get_nkeys(info, n, ierr)
    call MPI_Info_get_nthkey(info, 0, val, ierr)
    call check(n == 1 .and. val == 'mykey', 'info nthkey')
    call MPI_Info_free(info, ierr)

    ! Errors come back in IERROR with MPI_ERRORS_RETURN.
    call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
    call MPI_Send(n, 1, MPI_INTEGER, nprocs, 0, MPI_COMM_WORLD, ierr)
    call MPI_Error_class(ierr, n, i)
    call check(n == MPI_ERR_RANK, 'error class of a bad rank')

    call MPI_Finalize(ierr)
    if (rank == 0) print '(a)', 'comm_strings: ok'
contains
    include 'mpif_check.inc'
end program comm_strings
