! oxmpi-test: ranks=2 timeout=60 expect=fail expect-stderr="rank 1" expect-stderr="killed by signal 11" expect-stderr="Program received signal SIGSEGV"
! A rank faults under gfortran's own SIGSEGV handler (it prints a backtrace, then re-raises the
! signal with the default action). The job must end at once with the rank named, not loop in the
! handler until the time-out (threads mode once ran the handler again and again).
program env_fault_backtrace
    use mpi
    implicit none
    integer :: ierr, rank, x
    integer, pointer :: p => null()
    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    if (rank == 1) then
        call poke(p)
    end if
    ! Never satisfied: the job ends because rank 1 died.
    call MPI_Recv(x, 1, MPI_INTEGER, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call MPI_Finalize(ierr)
contains
    subroutine poke(q)
        integer, pointer :: q
        q = 42
        print *, q
    end subroutine poke
end program env_fault_backtrace
