! oxmpi-test: ranks=1,2 timeout=60
! MPI_ISENDRECV in a ring (use mpi). Generalized requests from Fortran: p2p_grequest_mpif.f90.
program p2p_isendrecv
    use mpi
    implicit none
    integer :: ierr, rank, nprocs, req, right, left, inv, outv
    integer :: status(MPI_STATUS_SIZE)

    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)

    ! MPI_Isendrecv in a ring.
    right = mod(rank + 1, nprocs)
    left = mod(rank + nprocs - 1, nprocs)
    outv = 100 + rank
    inv = -1
    call MPI_Isendrecv(outv, 1, MPI_INTEGER, right, 5, inv, 1, MPI_INTEGER, left, 5, MPI_COMM_WORLD, req, ierr)
    call MPI_Wait(req, status, ierr)
    call check(ierr == MPI_SUCCESS .and. inv == 100 + left, 'isendrecv data')
    ! (Its status is checked in c-tests/p2p_isendrecv.c: MPICH 4.0.2 reports source and tag 0.)

    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    call MPI_Finalize(ierr)

contains

    include 'mpif_check.inc'

end program p2p_isendrecv
