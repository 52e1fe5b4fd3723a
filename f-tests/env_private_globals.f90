! oxmpi-test: ranks=1,2,4,8 timeout=60
! Each rank has its own COMMON blocks and SAVE variables (in threads mode every rank runs its
! own instance of the program): every rank stores its rank, waits for all others to do the same,
! then finds its own value. Also MPI_Wtime/MPI_Wtick (REAL*8 functions) and MPI_Init_thread.
program private_globals
    implicit none
    include 'mpif.h'
    integer :: ierr, rank, nprocs, provided, cval, sval
    common /userblk/ cval
    double precision :: t0, t1

    call MPI_Init_thread(MPI_THREAD_SINGLE, provided, ierr)
    call check(ierr == MPI_SUCCESS .and. provided >= MPI_THREAD_SINGLE, 'init_thread')
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
    t0 = MPI_Wtime()
    cval = rank
    call saved_value(1, rank)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    call check(cval == rank, 'COMMON block shared between ranks')
    call saved_value(2, sval)
    call check(sval == rank, 'SAVE variable shared between ranks')
    t1 = MPI_Wtime()
    call check(t1 >= t0 .and. MPI_Wtick() > 0d0 .and. MPI_Wtick() < 1d0, 'wtime/wtick')
    call MPI_Finalize(ierr)
    if (rank == 0) print '(a)', 'env_private_globals: ok'
contains
    include 'mpif_check.inc'
end program private_globals

! A SAVE variable outside any COMMON block: op 1 stores v, op 2 returns it in v.
subroutine saved_value(op, v)
    integer :: op, v
    integer, save :: saved = -1
    if (op == 1) then
        saved = v
    else
        v = saved
    end if
end subroutine saved_value
