! oxmpi-test: ranks=1,2,4 timeout=60 mpich=skip openmpi-built=skip
! mpich=skip: MPICH 4.0.2's Fortran MPI_SESSION_GET_NTH_PSET takes n from 1 (it passes n-1 to C;
! the standard and Open MPI number process sets from 0, as oxmpi does), and ignores a session's
! error handler (an unknown process set name is fatal).
! mpif.h in free form: MPI-4 sessions without MPI_INIT: process sets (count, names with a length
! query, MPI_SESSION_GET_PSET_INFO's mpi_size), MPI_GROUP_FROM_SESSION_PSET, a communicator from
! MPI_COMM_CREATE_FROM_GROUP (string tag) with a ring exchange and a barrier, a session error
! handler from MPI_SESSION_CREATE_ERRHANDLER, MPI_SESSION_FINALIZE. A failed check stops with
! status 1 (there is no MPI_COMM_WORLD to abort). MPICH 4.0.2's mpif.h has neither
! MPI_SESSION_NULL nor MPI_MAX_PSET_NAME_LEN, so the test names neither.
module sess_cb
    implicit none
    integer :: ncalls = 0
contains
    subroutine on_error(session, code)
        integer :: session, code
        ncalls = ncalls + 1
    end subroutine on_error
end module sess_cb

program env_session
    use sess_cb
    implicit none
    include 'mpif.h'
    integer :: s, ierr, n, i, plen, info, g, comm, rank, size, tok, got, eh, wsize
    integer :: st(MPI_STATUS_SIZE)
    character(len=256) :: pname
    character(len=MPI_MAX_INFO_VAL) :: val
    logical :: flag, found

    call MPI_SESSION_INIT(MPI_INFO_NULL, MPI_ERRORS_RETURN, s, ierr)
    call check(ierr == MPI_SUCCESS, 'session_init')
    call MPI_SESSION_GET_NUM_PSETS(s, MPI_INFO_NULL, n, ierr)
    call check(ierr == MPI_SUCCESS .and. n >= 2, 'get_num_psets')
    found = .false.
    do i = 0, n - 1
        plen = 0
        call MPI_SESSION_GET_NTH_PSET(s, MPI_INFO_NULL, i, plen, pname, ierr)
        call check(ierr == MPI_SUCCESS .and. plen > 1, 'get_nth_pset length')
        call MPI_SESSION_GET_NTH_PSET(s, MPI_INFO_NULL, i, plen, pname, ierr)
        call check(ierr == MPI_SUCCESS, 'get_nth_pset')
        if (trim(pname) == 'mpi://WORLD') found = .true.
    end do
    call check(found, 'mpi://WORLD is listed')

    call MPI_SESSION_GET_PSET_INFO(s, 'mpi://WORLD', info, ierr)
    call check(ierr == MPI_SUCCESS, 'get_pset_info')
    call MPI_INFO_GET(info, 'mpi_size', MPI_MAX_INFO_VAL, val, flag, ierr)
    call check(ierr == MPI_SUCCESS .and. flag, 'mpi_size')
    read (val, *) wsize
    call MPI_INFO_FREE(info, ierr)

    call MPI_GROUP_FROM_SESSION_PSET(s, 'mpi://WORLD', g, ierr)
    call check(ierr == MPI_SUCCESS, 'group_from_session_pset')
    call MPI_COMM_CREATE_FROM_GROUP(g, 'org.oxmpi.ftest', MPI_INFO_NULL, MPI_ERRORS_RETURN, comm, ierr)
    call check(ierr == MPI_SUCCESS, 'comm_create_from_group')
    call MPI_GROUP_FREE(g, ierr)
    call MPI_COMM_RANK(comm, rank, ierr)
    call MPI_COMM_SIZE(comm, size, ierr)
    call check(size == wsize, 'size is mpi_size')
    tok = 7 * rank
    call MPI_SENDRECV(tok, 1, MPI_INTEGER, mod(rank + 1, size), 5, got, 1, MPI_INTEGER, &
                      mod(rank + size - 1, size), 5, comm, st, ierr)
    call check(ierr == MPI_SUCCESS .and. got == 7 * mod(rank + size - 1, size), 'ring')
    call MPI_BARRIER(comm, ierr)
    call MPI_COMM_FREE(comm, ierr)

    call MPI_SESSION_CREATE_ERRHANDLER(on_error, eh, ierr)
    call check(ierr == MPI_SUCCESS, 'session_create_errhandler')
    call MPI_SESSION_SET_ERRHANDLER(s, eh, ierr)
    call MPI_GROUP_FROM_SESSION_PSET(s, 'mpi://NO-SUCH-SET', g, ierr)
    call check(ierr /= MPI_SUCCESS .and. ncalls == 1, 'the session error handler ran')
    call MPI_ERRHANDLER_FREE(eh, ierr)

    call MPI_SESSION_FINALIZE(s, ierr)
    call check(ierr == MPI_SUCCESS, 'session_finalize')
contains
    subroutine check(ok, what)
        logical, intent(in) :: ok
        character(len=*), intent(in) :: what
        if (.not. ok) then
            print *, 'TEST FAILED: ', what
            stop 1
        end if
    end subroutine check
end program env_session
