! oxmpi-test: ranks=1,3 timeout=60
! The large-count forms of `use mpi_f08` (generic with INTEGER(KIND=MPI_COUNT_KIND) counts): send/recv
! (Isend, Recv, Sendrecv) with MPI_Get_count, Allreduce with MPI_IN_PLACE, Allgatherv (MPI_Count counts, MPI_Aint
! displacements), and an error returned in ierror. (MPI_Op_create_c: f08_op_create_c.)
program f08_large
    use mpi_f08
    implicit none
    integer :: rank, nprocs, i, ierr, cls
    integer(kind=MPI_COUNT_KIND) :: n, counts(8)
    integer(kind=MPI_ADDRESS_KIND) :: displs(8)
    integer :: a(4), b(4), g(16)
    type(MPI_Status) :: status
    type(MPI_Request) :: req

    call MPI_Init()
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs)

    a = [(rank * 10 + i, i = 1, 4)]
    b = -1
    call MPI_Sendrecv(a, 3_MPI_COUNT_KIND, MPI_INTEGER, rank, 4, b, 4_MPI_COUNT_KIND, MPI_INTEGER, rank, 4, &
                      MPI_COMM_WORLD, status)
    call MPI_Get_count(status, MPI_INTEGER, n)
    call check(n == 3 .and. all(b == [rank * 10 + 1, rank * 10 + 2, rank * 10 + 3, -1]), 'sendrecv large')
    call MPI_Isend(a, 2_MPI_COUNT_KIND, MPI_INTEGER, 0, 5, MPI_COMM_SELF, req)
    call MPI_Recv(b, 2_MPI_COUNT_KIND, MPI_INTEGER, 0, 5, MPI_COMM_SELF, MPI_STATUS_IGNORE)
    call MPI_Wait(req, MPI_STATUS_IGNORE)
    call check(all(b(1:2) == a(1:2)), 'send/recv large')

    a = rank
    call MPI_Allreduce(MPI_IN_PLACE, a, 4_MPI_COUNT_KIND, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
    call check(all(a == nprocs * (nprocs - 1) / 2), 'allreduce in place large')

    ! Rank r contributes r+1 copies of r.
    counts(1:nprocs) = [(int(i + 1, MPI_COUNT_KIND), i = 0, nprocs - 1)]
    displs(1) = 0
    do i = 2, nprocs
        displs(i) = displs(i - 1) + counts(i - 1)
    end do
    g = -1
    b = rank
    call MPI_Allgatherv(b, int(rank + 1, MPI_COUNT_KIND), MPI_INTEGER, g, counts, displs, MPI_INTEGER, MPI_COMM_WORLD)
    call check(all(g(1:nprocs * (nprocs + 1) / 2) == [((i, n = 0, i), i = 0, nprocs - 1)]), 'allgatherv large')

    call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)
    call MPI_Send(a, -1_MPI_COUNT_KIND, MPI_INTEGER, 0, 0, MPI_COMM_WORLD, ierr)
    call MPI_Error_class(ierr, cls)
    call check(cls == MPI_ERR_COUNT, 'negative count is MPI_ERR_COUNT')

    call MPI_Finalize()
contains
    include 'f08_check.inc'
end program
