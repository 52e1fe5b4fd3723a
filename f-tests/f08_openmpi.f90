! oxmpi-test: ranks=1,2 timeout=60 openmpi-built=f08
! 'use mpi_f08' with only what Open MPI 4.1's module has, so that an Open MPI-built binary
! (mpifort.openmpi, libmpi_usempif08.so.40) runs it on oxmpi too: IERROR absent and present,
! MPI_IN_PLACE, TYPE(MPI_Status) fields of a status array and of one status, MPI_Get_count,
! handle comparison (== and /=, the module's operators), CHARACTER arguments, a derived type.
program f08_openmpi
    use mpi_f08
    implicit none
    integer :: rank, nprocs, ierr, buf(4), got, cnt, vals(3), i
    type(MPI_Comm) :: dup
    type(MPI_Request) :: rq(2)
    type(MPI_Status) :: sts(2), st
    type(MPI_Datatype) :: three
    type(MPI_Info) :: info
    character(len=20) :: val
    logical :: flag

    call MPI_Init()
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
    call check(ierr == MPI_SUCCESS .and. nprocs >= 1, 'MPI_Comm_size with IERROR')

    buf = rank + 1
    call MPI_Allreduce(MPI_IN_PLACE, buf, 4, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
    call check(all(buf == nprocs * (nprocs + 1) / 2), 'MPI_Allreduce in place')

    call MPI_Irecv(got, 1, MPI_INTEGER, MPI_ANY_SOURCE, 7, MPI_COMM_SELF, rq(1))
    call MPI_Isend(rank + 40, 1, MPI_INTEGER, 0, 7, MPI_COMM_SELF, rq(2))
    call MPI_Waitall(2, rq, sts)
    call check(got == rank + 40 .and. sts(1)%MPI_SOURCE == 0 .and. sts(1)%MPI_TAG == 7, 'MPI_Waitall statuses')
    call MPI_Get_count(sts(1), MPI_INTEGER, cnt)
    call check(cnt == 1, 'MPI_Get_count')
    call check(rq(1) == MPI_REQUEST_NULL .and. rq(2) == MPI_REQUEST_NULL, 'requests freed')

    call MPI_Sendrecv(rank, 1, MPI_INTEGER, 0, 3, got, 1, MPI_INTEGER, 0, 3, MPI_COMM_SELF, st)
    call check(got == rank .and. st%MPI_SOURCE == 0 .and. st%MPI_TAG == 3, 'MPI_Sendrecv status')
    call MPI_Sendrecv(rank, 1, MPI_INTEGER, 0, 4, got, 1, MPI_INTEGER, 0, 4, MPI_COMM_SELF, MPI_STATUS_IGNORE)

    call MPI_Comm_dup(MPI_COMM_WORLD, dup)
    call check(dup /= MPI_COMM_WORLD .and. .not. (dup == MPI_COMM_NULL), 'handle comparison')
    call MPI_Type_contiguous(3, MPI_INTEGER, three)
    call MPI_Type_commit(three)
    vals = [1, 2, 3] * (rank + 1)
    call MPI_Bcast(vals, 1, three, 0, dup)
    call check(all(vals == [1, 2, 3]), 'MPI_Bcast of a derived type on a duplicate')
    call MPI_Type_free(three)
    call check(three == MPI_DATATYPE_NULL, 'MPI_Type_free')
    call MPI_Comm_free(dup)

    call MPI_Info_create(info)
    call MPI_Info_set(info, 'colour', 'blue', ierr)
    call MPI_Info_get(info, 'colour', 20, val, flag)
    call check(flag .and. val == 'blue', 'MPI_Info_get')
    call MPI_Info_free(info)

    do i = 1, 2
        call MPI_Barrier(MPI_COMM_WORLD)
    end do
    call check(MPI_Wtime() > 0.0d0, 'MPI_Wtime')
    call MPI_Finalize(ierr)
    if (rank == 0) print '(a)', 'f08_openmpi: ok'
contains
    subroutine check(cond, what)
        logical, intent(in) :: cond
        character(*), intent(in) :: what
        if (.not. cond) then
            print '(2a)', 'FAIL: ', what
            flush(6)
            call MPI_Abort(MPI_COMM_WORLD, 1)
        end if
    end subroutine check
end program f08_openmpi
