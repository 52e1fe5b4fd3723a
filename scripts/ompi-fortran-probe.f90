! scripts/check-ompi-abi.sh (g): built with Open MPI's mpif90 (include 'mpif.h'), run on oxmpi's
! libmpi_mpifh.so.40 at 2 ranks; prints "fprobe ok" on rank 0 when every check holds.
program fprobe
    implicit none
    include 'mpif.h'
    integer :: ierr, r, n, s, cnt, idx, dup, g, vec, cls, ln
    logical :: flag
    integer :: reqs(2), st(MPI_STATUS_SIZE), sts(MPI_STATUS_SIZE, 2), buf(3), inb(3)
    integer(kind=MPI_ADDRESS_KIND) :: ub, addr(1)
    character(len=MPI_MAX_PROCESSOR_NAME) :: host
    logical :: bad
    bad = .false.
    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, r, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, n, ierr)
    s = r
    call MPI_Allreduce(MPI_IN_PLACE, s, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call want(s == n * (n - 1) / 2, 'MPI_IN_PLACE allreduce')
    buf = r + 1
    inb = -1
    call MPI_Irecv(inb, 3, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, reqs(1), ierr)
    call MPI_Send(buf, 2, MPI_INTEGER, mod(r + 1, n), 40 + r, MPI_COMM_WORLD, ierr)
    call MPI_Wait(reqs(1), st, ierr)
    call MPI_Get_count(st, MPI_INTEGER, cnt, ierr)
    call want(reqs(1) == MPI_REQUEST_NULL, 'MPI_Wait leaves MPI_REQUEST_NULL')
    call want(cnt == 2 .and. st(MPI_SOURCE) == mod(r + n - 1, n) .and. st(MPI_TAG) == 40 + st(MPI_SOURCE), 'status')
    call want(inb(1) == st(MPI_SOURCE) + 1 .and. inb(3) == -1, 'received data')
    call MPI_Recv(inb, 1, MPI_INTEGER, MPI_PROC_NULL, 0, MPI_COMM_WORLD, st, ierr)
    call want(st(MPI_SOURCE) == MPI_PROC_NULL .and. st(MPI_TAG) == MPI_ANY_TAG, 'MPI_PROC_NULL status')
    ! MPI_Waitany's index is 1-based; MPI_STATUS_IGNORE / MPI_STATUSES_IGNORE
    call MPI_Irecv(inb, 1, MPI_INTEGER, MPI_PROC_NULL, 0, MPI_COMM_WORLD, reqs(2), ierr)
    reqs(1) = MPI_REQUEST_NULL
    call MPI_Waitany(2, reqs, idx, MPI_STATUS_IGNORE, ierr)
    call want(idx == 2 .and. reqs(2) == MPI_REQUEST_NULL, 'MPI_Waitany index')
    call MPI_Irecv(inb, 1, MPI_INTEGER, MPI_PROC_NULL, 0, MPI_COMM_WORLD, reqs(1), ierr)
    call MPI_Irecv(inb(2), 1, MPI_INTEGER, MPI_PROC_NULL, 0, MPI_COMM_WORLD, reqs(2), ierr)
    call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE, ierr)
    call want(all(reqs == MPI_REQUEST_NULL) .and. ierr == MPI_SUCCESS, 'MPI_Waitall, MPI_STATUSES_IGNORE')
    call MPI_Irecv(inb, 1, MPI_INTEGER, MPI_PROC_NULL, 5, MPI_COMM_WORLD, reqs(1), ierr)
    call MPI_Irecv(inb, 1, MPI_INTEGER, MPI_PROC_NULL, 6, MPI_COMM_WORLD, reqs(2), ierr)
    call MPI_Waitall(2, reqs, sts, ierr)
    call want(sts(MPI_SOURCE, 2) == MPI_PROC_NULL .and. sts(MPI_TAG, 1) == MPI_ANY_TAG, 'MPI_Waitall statuses')
    ! MPI_BOTTOM with an absolute address
    buf = r
    call MPI_Get_address(buf, addr(1), ierr)
    call MPI_Type_create_hindexed(1, [3], addr, MPI_INTEGER, vec, ierr)
    call MPI_Type_commit(vec, ierr)
    call MPI_Bcast(MPI_BOTTOM, 1, vec, 0, MPI_COMM_WORLD, ierr)
    call want(all(buf == 0) .and. ierr == MPI_SUCCESS, 'MPI_BOTTOM')
    call MPI_Type_free(vec, ierr)
    call want(vec == MPI_DATATYPE_NULL, 'MPI_Type_free leaves MPI_DATATYPE_NULL')
    call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
    call MPI_Comm_compare(MPI_COMM_WORLD, dup, s, ierr)
    call want(s == MPI_CONGRUENT, 'MPI_Comm_compare')
    call MPI_Comm_free(dup, ierr)
    call want(dup == MPI_COMM_NULL, 'MPI_Comm_free leaves MPI_COMM_NULL')
    call MPI_Comm_group(MPI_COMM_SELF, g, ierr)
    call MPI_Group_size(g, s, ierr)
    call want(s == 1, 'group of MPI_COMM_SELF')
    call MPI_Group_free(g, ierr)
    call want(g == MPI_GROUP_NULL, 'MPI_Group_free leaves MPI_GROUP_NULL')
    call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, ub, flag, ierr)
    call want(flag .and. ub >= 32767, 'MPI_TAG_UB')
    call MPI_Type_size(MPI_DOUBLE_PRECISION, s, ierr)
    call want(s == 8, 'MPI_DOUBLE_PRECISION size')
    call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
    call MPI_Send(buf, 1, MPI_INTEGER, n + 5, 0, MPI_COMM_WORLD, ierr)
    call MPI_Error_class(ierr, cls, ierr)
    call want(cls == MPI_ERR_RANK, 'MPI_ERR_RANK')
    call MPI_Get_processor_name(host, ln, ierr)
    call want(ln > 0 .and. len_trim(host) == ln, 'MPI_Get_processor_name')
    call MPI_Finalize(ierr)
    if (r == 0 .and. .not. bad) print '(a)', 'fprobe ok'
contains
    subroutine want(c, what)
        logical, intent(in) :: c
        character(len=*), intent(in) :: what
        if (.not. c) then
            print '(a, i0, a, a)', 'FAIL rank ', r, ': ', what
            bad = .true.
        end if
    end subroutine
end program
