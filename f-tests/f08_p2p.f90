! oxmpi-test: ranks=2,4 timeout=60
! Point-to-point with `use mpi_f08`: blocking send/recv and TYPE(MPI_Status) fields, MPI_Get_count,
! MPI_STATUS_IGNORE, MPI_ANY_SOURCE, Isend/Irecv with MPI_Waitall and its statuses,
! MPI_STATUSES_IGNORE, MPI_Sendrecv, MPI_PROC_NULL, optional ierror, handle comparisons.
program f08_p2p
    use mpi_f08
    implicit none
    integer :: rank, nprocs, i, n, peer, ierr
    type(MPI_Status) :: status, statuses(2)
    type(MPI_Request) :: reqs(2)
    integer :: ibuf(10), jbuf(10)
    double precision :: dbuf(4)

    call MPI_Init()
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
    call check(ierr == MPI_SUCCESS, 'ierror of comm_size')
    call check(MPI_COMM_WORLD /= MPI_COMM_NULL .and. MPI_COMM_WORLD == MPI_COMM_WORLD, 'handle ==, /=')

    ! Everybody sends 1+rank integers to rank 0, tag = 100 + rank.
    if (rank == 0) then
        do i = 1, nprocs - 1
            ibuf = -1
            call MPI_Recv(ibuf, 10, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, status, ierr)
            call check(ierr == MPI_SUCCESS, 'recv ierr')
            peer = status%MPI_SOURCE
            call check(peer >= 1 .and. peer < nprocs, 'status source')
            call check(status%MPI_TAG == 100 + peer, 'status tag')
            call MPI_Get_count(status, MPI_INTEGER, n)
            call check(n == 1 + peer, 'get_count')
            call check(all(ibuf(1:n) == peer * 1000 + [(i, i = 1, n)]), 'recv data')
            call check(ibuf(n + 1) == -1, 'recv overwrote past count')
        end do
    else
        ibuf = rank * 1000 + [(i, i = 1, 10)]
        call MPI_Send(ibuf, 1 + rank, MPI_INTEGER, 0, 100 + rank, MPI_COMM_WORLD)
    end if
    ! Nobody starts the ring before rank 0 has all its MPI_ANY_TAG messages: the last rank's ring
    ! message goes to rank 0 and would match one of those receives.
    call MPI_Barrier(MPI_COMM_WORLD)

    ! A ring with Isend/Irecv and Waitall with statuses, then again with MPI_STATUSES_IGNORE.
    dbuf = rank + 0.5d0
    jbuf = -1
    call MPI_Irecv(jbuf, 3, MPI_INTEGER, modulo(rank - 1, nprocs), 7, MPI_COMM_WORLD, reqs(1))
    ibuf(1:3) = [rank, rank * 2, rank * 3]
    call MPI_Isend(ibuf, 3, MPI_INTEGER, modulo(rank + 1, nprocs), 7, MPI_COMM_WORLD, reqs(2))
    call MPI_Waitall(2, reqs, statuses)
    peer = modulo(rank - 1, nprocs)
    call check(all(jbuf(1:3) == [peer, peer * 2, peer * 3]), 'ring data')
    call check(statuses(1)%MPI_SOURCE == peer .and. statuses(1)%MPI_TAG == 7, 'waitall status')
    call check(all(reqs == MPI_REQUEST_NULL), 'waitall frees requests')

    call MPI_Irecv(dbuf(3:4), 2, MPI_DOUBLE_PRECISION, modulo(rank - 1, nprocs), 8, MPI_COMM_WORLD, reqs(1))
    call MPI_Isend(dbuf(1:2), 2, MPI_DOUBLE_PRECISION, modulo(rank + 1, nprocs), 8, MPI_COMM_WORLD, reqs(2))
    call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE)
    call check(all(dbuf(3:4) == peer + 0.5d0), 'statuses_ignore data')

    ! Sendrecv with MPI_STATUS_IGNORE; MPI_PROC_NULL gives an empty status.
    jbuf = -1
    call MPI_Sendrecv(rank, 1, MPI_INTEGER, modulo(rank + 1, nprocs), 9, &
                      jbuf, 1, MPI_INTEGER, modulo(rank - 1, nprocs), 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    call check(jbuf(1) == peer, 'sendrecv')
    call MPI_Recv(jbuf, 1, MPI_INTEGER, MPI_PROC_NULL, 0, MPI_COMM_WORLD, status)
    call check(status%MPI_SOURCE == MPI_PROC_NULL .and. status%MPI_TAG == MPI_ANY_TAG, 'proc_null status')
    call MPI_Get_count(status, MPI_INTEGER, n)
    call check(n == 0, 'proc_null count')

    call MPI_Finalize()
contains
    include 'f08_check.inc'
end program
