! oxmpi-test: ranks=1,2 timeout=60
! MPI_GREQUEST_START / MPI_GREQUEST_COMPLETE with Fortran callbacks through include 'mpif.h' (so
! that it is built with Open MPI's mpif90 too, on oxmpi's libmpi_mpifh.so.40): the query
! subroutine fills the status, free runs once at the wait, cancel gets the COMPLETE flag.
module greq_mpif_state
    implicit none
    integer :: frees = 0, cancels = 0, last_complete = -1
end module greq_mpif_state

subroutine query_fn(extra_state, status, ierr)
    implicit none
    include 'mpif.h'
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    integer :: status(MPI_STATUS_SIZE), ierr
    status(MPI_SOURCE) = int(extra_state)
    status(MPI_TAG) = 77
    call MPI_Status_set_elements(status, MPI_INTEGER, 3, ierr)
end subroutine query_fn

subroutine free_fn(extra_state, ierr)
    use greq_mpif_state
    implicit none
    include 'mpif.h'
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    integer :: ierr
    frees = frees + 1
    ierr = MPI_SUCCESS
end subroutine free_fn

subroutine cancel_fn(extra_state, complete, ierr)
    use greq_mpif_state
    implicit none
    include 'mpif.h'
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    logical :: complete
    integer :: ierr
    cancels = cancels + 1
    if (complete) then
        last_complete = 1
    else
        last_complete = 0
    end if
    ierr = MPI_SUCCESS
end subroutine cancel_fn

program p2p_grequest_mpif
    use greq_mpif_state
    implicit none
    include 'mpif.h'
    external :: query_fn, free_fn, cancel_fn
    integer :: ierr, rank, nprocs, req, n
    integer :: status(MPI_STATUS_SIZE)
    logical :: flag
    integer(kind=MPI_ADDRESS_KIND) :: extra

    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)

    extra = 40 + rank
    call MPI_Grequest_start(query_fn, free_fn, cancel_fn, extra, req, ierr)
    call check(ierr == MPI_SUCCESS, 'grequest_start')
    call MPI_Test(req, flag, status, ierr)
    call check(.not. flag, 'incomplete grequest tested complete')
    call MPI_Cancel(req, ierr)
    call check(cancels == 1 .and. last_complete == 0, 'cancel before complete')
    call MPI_Grequest_complete(req, ierr)
    call check(ierr == MPI_SUCCESS, 'grequest_complete')
    call MPI_Cancel(req, ierr)
    call check(cancels == 2 .and. last_complete == 1, 'cancel after complete')
    call check(frees == 0, 'free before the wait')
    call MPI_Wait(req, status, ierr)
    call check(ierr == MPI_SUCCESS .and. req == MPI_REQUEST_NULL, 'wait')
    call check(frees == 1, 'free ran once')
    call check(status(MPI_SOURCE) == 40 + rank .and. status(MPI_TAG) == 77, 'query status')
    call MPI_Get_count(status, MPI_INTEGER, n, ierr)
    call check(n == 3, 'query count')

    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    call MPI_Finalize(ierr)

contains

    include 'mpif_check.inc'

end program p2p_grequest_mpif
