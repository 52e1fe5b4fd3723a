! oxmpi-test: ranks=2,4 timeout=60
! The mpi_f08 profiling interface (MPI 4.1 sections 15.2 and 19.1.5): every procedure is also
! reachable under its PMPI_ name (generic PMPI_Send, specific PMPI_Send_f08ts; the large-count and
! function forms too), and a tool that defines a specific MPI_ procedure (here MPI_Send_f08ts,
! MPI_Recv_f08ts and MPI_Barrier_f08, below the program) intercepts the program's calls of the
! generic MPI_ name and reaches the library through PMPI_. Calls made through PMPI_ are not
! intercepted. Built with our mpifort and with MPICH's (whose PMPI_ specifics are pmpir_*_).
module f08_profiling_counts
    implicit none
    integer :: sends = 0, send_elems = 0, recvs = 0, barriers = 0
end module

program f08_profiling
    use mpi_f08
    use f08_profiling_counts
    implicit none
    integer :: rank, nprocs, prank, pnprocs, ierr, n, next, prev, i, total
    integer :: sbuf(8), rbuf(8)
    integer(kind=MPI_COUNT_KIND) :: big
    type(MPI_Status) :: status
    double precision :: t0, t1

    call MPI_Init()
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
    call PMPI_Comm_rank(MPI_COMM_WORLD, prank, ierr)
    call check(ierr == MPI_SUCCESS .and. prank == rank, 'PMPI_Comm_rank')
    call PMPI_Comm_size(MPI_COMM_WORLD, pnprocs)
    call check(pnprocs == nprocs, 'PMPI_Comm_size without ierror')
    next = mod(rank + 1, nprocs)
    prev = mod(rank + nprocs - 1, nprocs)

    ! A ring through the generic MPI_ names (even ranks send first; the messages are small):
    ! each call goes through the tool's procedures below.
    sbuf = [(rank * 100 + i, i = 1, 8)]
    rbuf = -1
    if (mod(rank, 2) == 0) then
        call MPI_Send(sbuf, 5, MPI_INTEGER, next, 1, MPI_COMM_WORLD, ierr)
        call check(ierr == MPI_SUCCESS, 'intercepted MPI_Send ierror')
        call MPI_Recv(rbuf, 8, MPI_INTEGER, prev, 1, MPI_COMM_WORLD, status)
    else
        call MPI_Recv(rbuf, 8, MPI_INTEGER, prev, 1, MPI_COMM_WORLD, status, ierr)
        call check(ierr == MPI_SUCCESS, 'intercepted MPI_Recv ierror')
        call MPI_Send(sbuf, 5, MPI_INTEGER, next, 1, MPI_COMM_WORLD)
    end if
    call MPI_Get_count(status, MPI_INTEGER, n)
    call check(n == 5 .and. status%MPI_SOURCE == prev .and. status%MPI_TAG == 1, 'ring status')
    call check(all(rbuf(1:5) == [(prev * 100 + i, i = 1, 5)]) .and. all(rbuf(6:8) == -1), 'ring data')
    call check(sends == 1 .and. send_elems == 5 .and. recvs == 1, 'the tool saw one send of 5 and one receive')
    call MPI_Barrier(MPI_COMM_WORLD)
    call check(barriers == 1, 'the tool saw MPI_Barrier')

    ! PMPI_ directly, also the large-count form (INTEGER(KIND=MPI_COUNT_KIND) count): not seen
    ! by the tool.
    big = 3
    rbuf = -1
    if (mod(rank, 2) == 0) then
        call PMPI_Send(sbuf, big, MPI_INTEGER, next, 2, MPI_COMM_WORLD)
        call PMPI_Recv(rbuf, 8, MPI_INTEGER, prev, 2, MPI_COMM_WORLD, status, ierr)
    else
        call PMPI_Recv(rbuf, 8, MPI_INTEGER, prev, 2, MPI_COMM_WORLD, status, ierr)
        call PMPI_Send(sbuf, big, MPI_INTEGER, next, 2, MPI_COMM_WORLD)
    end if
    call check(ierr == MPI_SUCCESS, 'PMPI_Recv ierror')
    call PMPI_Get_count(status, MPI_INTEGER, n)
    call check(n == 3 .and. all(rbuf(1:3) == [(prev * 100 + i, i = 1, 3)]), 'PMPI_ ring data')
    call PMPI_Barrier(MPI_COMM_WORLD)
    call check(sends == 1 .and. recvs == 1 .and. barriers == 1, 'PMPI_ calls were intercepted')

    ! A collective with MPI_IN_PLACE and a function, through PMPI_.
    total = rank
    call PMPI_Allreduce(MPI_IN_PLACE, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check(ierr == MPI_SUCCESS .and. total == nprocs * (nprocs - 1) / 2, 'PMPI_Allreduce in place')
    t0 = PMPI_Wtime()
    t1 = MPI_Wtime()
    call check(t1 >= t0 .and. PMPI_Wtick() > 0.0d0, 'PMPI_Wtime, PMPI_Wtick')

    call PMPI_Finalize(ierr)
    call check(ierr == MPI_SUCCESS, 'PMPI_Finalize')

contains

    include 'f08_check.inc'
end program

! The tool: specific procedures with the standard's names and interfaces, calling PMPI_.
subroutine MPI_Send_f08ts(buf, count, datatype, dest, tag, comm, ierror)
    use mpi_f08, tool_hides => MPI_Send_f08ts
    use f08_profiling_counts
    implicit none
    type(*), dimension(..), intent(in) :: buf
    integer, intent(in) :: count, dest, tag
    type(MPI_Datatype), intent(in) :: datatype
    type(MPI_Comm), intent(in) :: comm
    integer, optional, intent(out) :: ierror
    sends = sends + 1
    send_elems = send_elems + count
    call PMPI_Send(buf, count, datatype, dest, tag, comm, ierror)
end subroutine

subroutine MPI_Recv_f08ts(buf, count, datatype, source, tag, comm, status, ierror)
    use mpi_f08, tool_hides => MPI_Recv_f08ts
    use f08_profiling_counts
    implicit none
    type(*), dimension(..) :: buf
    integer, intent(in) :: count, source, tag
    type(MPI_Datatype), intent(in) :: datatype
    type(MPI_Comm), intent(in) :: comm
    type(MPI_Status) :: status
    integer, optional, intent(out) :: ierror
    recvs = recvs + 1
    call PMPI_Recv(buf, count, datatype, source, tag, comm, status, ierror)
end subroutine

subroutine MPI_Barrier_f08(comm, ierror)
    use mpi_f08, tool_hides => MPI_Barrier_f08
    use f08_profiling_counts
    implicit none
    type(MPI_Comm), intent(in) :: comm
    integer, optional, intent(out) :: ierror
    barriers = barriers + 1
    call PMPI_Barrier(comm, ierror)
end subroutine
