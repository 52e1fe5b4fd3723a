! oxmpi-test: ranks=2,3,4 timeout=60
! Point-to-point with `use mpi` (free form): blocking send/recv, status fields, MPI_Get_count,
! MPI_STATUS_IGNORE, MPI_ANY_SOURCE, nonblocking with Waitall/Waitany (1-based index) and
! MPI_STATUSES_IGNORE, Sendrecv, MPI_PROC_NULL.
program p2p_status
    use mpi
    implicit none
    integer :: ierr, rank, nprocs, i, n, idx, peer
    integer :: status(MPI_STATUS_SIZE), statuses(MPI_STATUS_SIZE, 2), reqs(2)
    integer :: ibuf(10), jbuf(10)
    double precision :: dbuf(4)

    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)

    ! Everybody sends 1+rank integers to rank 0, tag = 100 + rank.
    if (rank == 0) then
        do i = 1, nprocs - 1
            ibuf = -1
            call MPI_Recv(ibuf, 10, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, status, ierr)
            call check(ierr == MPI_SUCCESS, 'recv ierr')
            peer = status(MPI_SOURCE)
            call check(status(MPI_TAG) == 100 + peer, 'status tag')
            call MPI_Get_count(status, MPI_INTEGER, n, ierr)
            call check(n == 1 + peer, 'get_count')
            call check(all(ibuf(1:n) == peer * 1000 + [(i, i = 1, n)]), 'recv data')
            call check(ibuf(n + 1) == -1, 'recv overwrote past count')
        end do
    else
        ibuf = rank * 1000 + [(i, i = 1, 10)]
        call MPI_Send(ibuf, 1 + rank, MPI_INTEGER, 0, 100 + rank, MPI_COMM_WORLD, ierr)
    end if

    call MPI_Barrier(MPI_COMM_WORLD, ierr) ! the ANY_TAG receives above must not see the ring's messages

    ! Ring exchange of doubles with Isend/Irecv, Waitall with MPI_STATUSES_IGNORE.
    dbuf = dble(rank)
    call MPI_Irecv(dbuf(3), 2, MPI_DOUBLE_PRECISION, mod(rank + nprocs - 1, nprocs), 7, MPI_COMM_WORLD, reqs(1), ierr)
    call MPI_Isend(dbuf(1), 2, MPI_DOUBLE_PRECISION, mod(rank + 1, nprocs), 7, MPI_COMM_WORLD, reqs(2), ierr)
    call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE, ierr)
    call check(all(dbuf(3:4) == dble(mod(rank + nprocs - 1, nprocs))), 'ring data')
    call check(all(reqs == MPI_REQUEST_NULL), 'waitall freed the requests')

    ! Waitany returns a 1-based index; the status goes to a real status array.
    call MPI_Irecv(jbuf, 1, MPI_INTEGER, rank, 5, MPI_COMM_WORLD, reqs(2), ierr)
    reqs(1) = MPI_REQUEST_NULL
    call MPI_Send(rank, 1, MPI_INTEGER, rank, 5, MPI_COMM_WORLD, ierr)
    call MPI_Waitany(2, reqs, idx, status, ierr)
    call check(idx == 2, 'waitany index is 1-based')
    call check(status(MPI_SOURCE) == rank .and. status(MPI_TAG) == 5, 'waitany status')
    call check(jbuf(1) == rank, 'waitany data')

    ! Waitall with real statuses.
    call MPI_Irecv(jbuf, 3, MPI_INTEGER, rank, 9, MPI_COMM_WORLD, reqs(1), ierr)
    call MPI_Isend(ibuf, 3, MPI_INTEGER, rank, 9, MPI_COMM_WORLD, reqs(2), ierr)
    call MPI_Waitall(2, reqs, statuses, ierr)
    call check(statuses(MPI_SOURCE, 1) == rank .and. statuses(MPI_TAG, 1) == 9, 'waitall statuses')
    call MPI_Get_count(statuses(:, 1), MPI_INTEGER, n, ierr)
    call check(n == 3, 'waitall count')

    ! Sendrecv with MPI_STATUS_IGNORE, and MPI_PROC_NULL.
    call MPI_Sendrecv(rank, 1, MPI_INTEGER, mod(rank + 1, nprocs), 1, n, 1, MPI_INTEGER, &
                      mod(rank + nprocs - 1, nprocs), 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call check(n == mod(rank + nprocs - 1, nprocs), 'sendrecv')
    call MPI_Recv(ibuf, 1, MPI_INTEGER, MPI_PROC_NULL, 0, MPI_COMM_WORLD, status, ierr)
    call check(status(MPI_SOURCE) == MPI_PROC_NULL .and. status(MPI_TAG) == MPI_ANY_TAG, 'proc_null status')

    call MPI_Finalize(ierr)
    if (rank == 0) print '(a)', 'p2p_status: ok'
contains
    include 'mpif_check.inc'
end program p2p_status
