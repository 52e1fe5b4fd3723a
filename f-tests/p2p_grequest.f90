! oxmpi-test: ranks=1,2 timeout=60
! MPI_GREQUEST_START / MPI_GREQUEST_COMPLETE with Fortran callbacks: the query subroutine fills
! the status, free runs once at the wait, cancel gets the COMPLETE flag; and MPI_ISENDRECV.
module greq_state
    implicit none
    integer :: frees = 0, cancels = 0, last_complete = -1
end module greq_state

subroutine query_fn(extra_state, status, ierr)
    use mpi
    implicit none
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    integer :: status(MPI_STATUS_SIZE), ierr
    status(MPI_SOURCE) = int(extra_state)
    status(MPI_TAG) = 77
    call MPI_Status_set_elements(status, MPI_INTEGER, 3, ierr)
end subroutine query_fn

subroutine free_fn(extra_state, ierr)
    use mpi
    use greq_state
    implicit none
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    integer :: ierr
    frees = frees + 1
    ierr = MPI_SUCCESS
end subroutine free_fn

subroutine cancel_fn(extra_state, complete, ierr)
    use mpi
    use greq_state
    implicit none
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

program p2p_grequest
    use mpi
    use greq_state
    implicit none
    external :: query_fn, free_fn, cancel_fn
    integer :: ierr, rank, nprocs, req, n, right, left, inv, outv
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

    subroutine check(cond, what)
        logical, intent(in) :: cond
        character(len=*), intent(in) :: what
        integer :: ierr2
        if (.not. cond) then
            print *, 'TEST FAILED [rank ', rank, '] ', what
            call MPI_Abort(MPI_COMM_WORLD, 1, ierr2)
        end if
    end subroutine check

end program p2p_grequest
