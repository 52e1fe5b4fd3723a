! oxmpi-test: ranks=1,2,4 timeout=60 mpich=skip
! The ULFM MPIX_ calls from Fortran (the names MPICH's libmpichfort exports), without a failure:
! MPIX_Comm_agree ANDs a flag over all ranks, MPIX_Comm_failure_ack / get_acked report an empty
! group, MPIX_Comm_shrink gives a communicator of every rank, MPIX_Comm_revoke on a duplicate.
! Skipped on MPICH: 4.0.2 aborts in MPIX_Comm_failure_ack (an internal assertion).
program ulfm_calls
    use mpi
    implicit none
    integer :: ierr, rank, nprocs, flag, expect, g, gsize, shrunk, ssize, dup, x, total
    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
    flag = 1
    if (rank == 0) flag = 3
    ! the bitwise AND of 3 (rank 0) and 1 (the others)
    expect = 1
    if (nprocs == 1) expect = 3
    call MPIX_Comm_agree(MPI_COMM_WORLD, flag, ierr)
    if (ierr /= MPI_SUCCESS .or. flag /= expect) call fail('MPIX_Comm_agree', flag)
    call MPIX_Comm_failure_ack(MPI_COMM_WORLD, ierr)
    if (ierr /= MPI_SUCCESS) call fail('MPIX_Comm_failure_ack', ierr)
    call MPIX_Comm_failure_get_acked(MPI_COMM_WORLD, g, ierr)
    call MPI_Group_size(g, gsize, ierr)
    if (gsize /= 0) call fail('failed group size', gsize)
    call MPI_Group_free(g, ierr)
    call MPIX_Comm_shrink(MPI_COMM_WORLD, shrunk, ierr)
    call MPI_Comm_size(shrunk, ssize, ierr)
    if (ssize /= nprocs) call fail('shrunk size', ssize)
    x = rank + 1
    call MPI_Allreduce(x, total, 1, MPI_INTEGER, MPI_SUM, shrunk, ierr)
    if (total /= nprocs * (nprocs + 1) / 2) call fail('allreduce on the shrunk communicator', total)
    call MPI_Comm_free(shrunk, ierr)
    call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
    call MPIX_Comm_revoke(dup, ierr)
    if (ierr /= MPI_SUCCESS) call fail('MPIX_Comm_revoke', ierr)
    call MPI_Comm_free(dup, ierr)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    if (rank == 0) print '(a)', 'ulfm_calls: OK'
    call MPI_Finalize(ierr)
contains
    subroutine fail(what, v)
        character(*), intent(in) :: what
        integer, intent(in) :: v
        print '(a,a,i0)', 'TEST FAILED: ', what, v
        call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
    end subroutine
end program
