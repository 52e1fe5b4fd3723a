! oxmpi-test: ranks=1 timeout=60
! A non-contiguous choice buffer is transferred correctly or refused with MPI_ERR_BUFFER, never
! a silent transfer of the wrong memory. oxmpi's mpi_f08 has MPI_SUBARRAYS_SUPPORTED = .FALSE. and
! refuses it (raised on the communicator); MPICH supports subarrays (and a program built with
! MPICH's module believes so under oxmpi too, where it gets the error).
program f08_noncontig
    use mpi_f08
    implicit none
    integer :: a(10), b(5), ierr, cls, i
    type(MPI_Request) :: req

    call MPI_Init()
    call MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN)
    a = [(i, i = 1, 10)]
    b = -1
    call MPI_Isend(a(1:10:2), 5, MPI_INTEGER, 0, 0, MPI_COMM_SELF, req, ierr)
    if (.not. MPI_SUBARRAYS_SUPPORTED .and. ierr == MPI_SUCCESS) call fail('accepted without subarray support')
    if (ierr == MPI_SUCCESS) then
        call MPI_Recv(b, 5, MPI_INTEGER, 0, 0, MPI_COMM_SELF, MPI_STATUS_IGNORE)
        call MPI_Wait(req, MPI_STATUS_IGNORE)
        if (any(b /= [1, 3, 5, 7, 9])) call fail('non-contiguous send transferred wrong data')
    else
        call MPI_Error_class(ierr, cls)
        if (cls /= MPI_ERR_BUFFER) call fail('refused with a class other than MPI_ERR_BUFFER')
    end if
    ! A contiguous section works everywhere.
    call MPI_Sendrecv(a(3:4), 2, MPI_INTEGER, 0, 1, b(1:2), 2, MPI_INTEGER, 0, 1, MPI_COMM_SELF, &
                      MPI_STATUS_IGNORE, ierr)
    if (ierr /= MPI_SUCCESS .or. any(b(1:2) /= [3, 4])) call fail('contiguous section')
    call MPI_Finalize()
contains
    subroutine fail(what)
        character(len=*), intent(in) :: what
        print *, 'FAILED: ', what
        call MPI_Abort(MPI_COMM_WORLD, 1)
    end subroutine
end program
