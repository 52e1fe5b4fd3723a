! oxmpi-test: ranks=2 timeout=60 mpich=skip
! use mpi: ports and names (MPI_OPEN_PORT, MPI_PUBLISH_NAME/LOOKUP_NAME with blank-padded
! CHARACTER arguments, MPI_COMM_ACCEPT/CONNECT on MPI_COMM_SELF, MPI_UNPUBLISH_NAME, MPI_ERR_NAME
! for a lookup after it, MPI_CLOSE_PORT), then MPI_COMM_SPAWN of this program with a CHARACTER
! argument array (blank-terminated; an argument with a blank inside) and MPI_COMM_SPAWN_MULTIPLE
! with MPI_ARGVS_NULL, in both modes (threads mode: the children are new ranks of the process).
! (Debian's MPICH, over UCX, has no ports: mpich=skip.)
program dynproc
    use mpi
    implicit none
    integer :: ierr, rank, size, parent, inter, v, cls, rsize, n
    integer :: errs(2), maxprocs(1), infos(1)
    character(len=MPI_MAX_PORT_NAME) :: port, found
    character(len=64) :: service, arg
    character(len=16) :: argv(3)
    character(len=256) :: cmds(1)
    integer :: pid

    call MPI_INIT(ierr)
    call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
    call MPI_COMM_SIZE(MPI_COMM_WORLD, size, ierr)
    call MPI_COMM_GET_PARENT(parent, ierr)
    if (parent /= MPI_COMM_NULL) then
        ! a spawned child: MPI_COMM_SPAWN passes 'child' and 'two words'; spawn_multiple none
        n = command_argument_count()
        if (n == 2) then
            call get_command_argument(1, arg)
            if (arg /= 'child') call fail('first argument')
            call get_command_argument(2, arg)
            if (arg /= 'two words') call fail('second argument')
        else if (n /= 0) then
            call fail('argument count')
        end if
        call MPI_COMM_REMOTE_SIZE(parent, rsize, ierr)
        if (rsize /= 2) call fail('remote size')
        call MPI_ALLREDUCE(1, v, 1, MPI_INTEGER, MPI_SUM, parent, ierr)
        if (v /= 20) call fail('allreduce with the parents')
        call MPI_COMM_DISCONNECT(parent, ierr)
        call MPI_FINALIZE(ierr)
        stop
    end if
    if (size /= 2) call fail('needs 2 ranks')

    ! ports and names
    pid = 0
    if (rank == 0) pid = getpid()
    call MPI_BCAST(pid, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
    write (service, '(A,I0)') 'oxmpi-ftest-dynproc-', pid
    if (rank == 0) then
        call MPI_OPEN_PORT(MPI_INFO_NULL, port, ierr)
        call check(ierr, 'MPI_OPEN_PORT')
        call MPI_PUBLISH_NAME(service, MPI_INFO_NULL, port, ierr)
        call check(ierr, 'MPI_PUBLISH_NAME')
        call MPI_SEND(port, MPI_MAX_PORT_NAME, MPI_CHARACTER, 1, 0, MPI_COMM_WORLD, ierr)
        call MPI_COMM_ACCEPT(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, inter, ierr)
        call check(ierr, 'MPI_COMM_ACCEPT')
        v = 17
        call MPI_BCAST(v, 1, MPI_INTEGER, MPI_ROOT, inter, ierr)
        call MPI_UNPUBLISH_NAME(service, MPI_INFO_NULL, port, ierr)
        call check(ierr, 'MPI_UNPUBLISH_NAME')
        call MPI_COMM_SET_ERRHANDLER(MPI_COMM_SELF, MPI_ERRORS_RETURN, ierr)
        call MPI_LOOKUP_NAME(service, MPI_INFO_NULL, found, ierr)
        call MPI_ERROR_CLASS(ierr, cls, v)
        if (cls /= MPI_ERR_NAME) call fail('lookup after unpublish must give MPI_ERR_NAME')
        call MPI_CLOSE_PORT(port, ierr)
        call check(ierr, 'MPI_CLOSE_PORT')
    else
        call MPI_RECV(port, MPI_MAX_PORT_NAME, MPI_CHARACTER, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
        call MPI_LOOKUP_NAME(service, MPI_INFO_NULL, found, ierr)
        call check(ierr, 'MPI_LOOKUP_NAME')
        if (found /= port) call fail('looked-up port differs')
        call MPI_COMM_CONNECT(found, MPI_INFO_NULL, 0, MPI_COMM_SELF, inter, ierr)
        call check(ierr, 'MPI_COMM_CONNECT')
        v = 0
        call MPI_BCAST(v, 1, MPI_INTEGER, 0, inter, ierr)
        if (v /= 17) call fail('bcast over the connected communicator')
    end if
    call MPI_COMM_DISCONNECT(inter, ierr)
    call check(ierr, 'MPI_COMM_DISCONNECT')

    ! spawn
    call get_command_argument(0, cmds(1))
    argv(1) = 'child'
    argv(2) = 'two words'
    argv(3) = ' '
    call MPI_COMM_SET_ERRHANDLER(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
    call MPI_COMM_SPAWN(cmds(1), argv, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, inter, errs, ierr)
    call check(ierr, 'MPI_COMM_SPAWN')
    if (any(errs /= MPI_SUCCESS)) call fail('array_of_errcodes')
    call MPI_ALLREDUCE(10, v, 1, MPI_INTEGER, MPI_SUM, inter, ierr)
    if (v /= 2) call fail('allreduce with the children')
    call MPI_COMM_DISCONNECT(inter, ierr)
    maxprocs(1) = 1
    infos(1) = MPI_INFO_NULL
    call MPI_COMM_SPAWN_MULTIPLE(1, cmds, MPI_ARGVS_NULL, maxprocs, infos, 0, MPI_COMM_WORLD, inter, &
                                 MPI_ERRCODES_IGNORE, ierr)
    call check(ierr, 'MPI_COMM_SPAWN_MULTIPLE')
    call MPI_ALLREDUCE(10, v, 1, MPI_INTEGER, MPI_SUM, inter, ierr)
    if (v /= 1) call fail('allreduce with the child of spawn_multiple')
    call MPI_COMM_DISCONNECT(inter, ierr)
    call MPI_FINALIZE(ierr)
contains
    subroutine check(e, what)
        integer, intent(in) :: e
        character(len=*), intent(in) :: what
        if (e /= MPI_SUCCESS) call fail(what)
    end subroutine
    subroutine fail(what)
        character(len=*), intent(in) :: what
        integer :: e
        print *, 'FAILED: ', what
        call MPI_ABORT(MPI_COMM_WORLD, 1, e)
    end subroutine
end program
