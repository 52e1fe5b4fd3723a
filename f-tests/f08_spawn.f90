! oxmpi-test: ranks=1,2 timeout=60 mpich=skip openmpi-built=f08
! use mpi_f08: MPI_Comm_spawn of this program with a CHARACTER argument array (blank-terminated,
! an argument with a blank inside), with MPI_ARGV_NULL, and MPI_Comm_spawn_multiple of two
! commands with an argument table array_of_argv(count, *) (row 2 empty), then with
! MPI_ARGVS_NULL and MPI_ERRCODES_IGNORE; each child checks the arguments it got (by its
! MPI_APPNUM); a program that does not exist gives MPI_ERR_SPAWN. Both modes (threads mode: the
! children are new ranks of the process). (Debian's MPICH has no working spawn here: mpich=skip.)
program f08_spawn
    use mpi_f08
    implicit none
    integer :: ierr, rank, v, n, cls
    integer :: errs(2), errs3(3), maxprocs(2)
    type(MPI_Comm) :: parent, inter
    type(MPI_Info) :: infos(2)
    character(len=256) :: cmds(2)
    character(len=16) :: argv(3), argvs(2, 3)
    character(len=64) :: arg
    integer(kind=MPI_ADDRESS_KIND) :: appnum
    logical :: flag

    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    call MPI_Comm_get_parent(parent)
    if (parent /= MPI_COMM_NULL) then
        n = command_argument_count()
        call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, appnum, flag)
        if (.not. flag) call fail('MPI_APPNUM missing')
        call get_command_argument(1, arg)
        if (n == 2 .and. arg == 'child') then
            call get_command_argument(2, arg)
            if (arg /= 'two words') call fail('spawn: second argument')
        else if (n == 2 .and. arg == 'm1') then
            if (appnum /= 0) call fail('spawn_multiple: command 1 has appnum 0')
            call get_command_argument(2, arg)
            if (arg /= 'x y') call fail('spawn_multiple: second argument of command 1')
        else if (n /= 0) then
            call fail('unexpected arguments')
        end if
        call MPI_Allreduce(1, v, 1, MPI_INTEGER, MPI_SUM, parent)
        call MPI_Comm_disconnect(parent)
        call MPI_Finalize()
        stop
    end if

    call get_command_argument(0, cmds(1))
    cmds(2) = cmds(1)
    call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)

    ! MPI_Comm_spawn with arguments, then with MPI_ARGV_NULL
    argv(1) = 'child'
    argv(2) = 'two words'
    argv(3) = ' '
    errs = -1
    call MPI_Comm_spawn(cmds(1), argv, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, inter, errs, ierr)
    call check(ierr, 'MPI_Comm_spawn')
    if (any(errs /= MPI_SUCCESS)) call fail('array_of_errcodes')
    call MPI_Allreduce(0, v, 1, MPI_INTEGER, MPI_SUM, inter)
    if (v /= 2) call fail('allreduce with the 2 children')
    call MPI_Comm_disconnect(inter)
    call MPI_Comm_spawn(cmds(1), MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, inter, &
                        MPI_ERRCODES_IGNORE, ierr)
    call check(ierr, 'MPI_Comm_spawn with MPI_ARGV_NULL')
    call MPI_Allreduce(0, v, 1, MPI_INTEGER, MPI_SUM, inter)
    if (v /= 1) call fail('allreduce with the child of MPI_ARGV_NULL')
    call MPI_Comm_disconnect(inter)

    ! MPI_Comm_spawn_multiple: command i's arguments are row i of argvs
    argvs = ' '
    argvs(1, 1) = 'm1'
    argvs(1, 2) = 'x y'
    maxprocs = [1, 2]
    infos = MPI_INFO_NULL
    errs3 = -1
    call MPI_Comm_spawn_multiple(2, cmds, argvs, maxprocs, infos, 0, MPI_COMM_WORLD, inter, errs3, ierr)
    call check(ierr, 'MPI_Comm_spawn_multiple')
    if (any(errs3 /= MPI_SUCCESS)) call fail('array_of_errcodes of spawn_multiple')
    call MPI_Allreduce(0, v, 1, MPI_INTEGER, MPI_SUM, inter)
    if (v /= 3) call fail('allreduce with the 3 children of spawn_multiple')
    call MPI_Comm_disconnect(inter)
    call MPI_Comm_spawn_multiple(2, cmds, MPI_ARGVS_NULL, maxprocs, infos, 0, MPI_COMM_WORLD, inter, &
                                 MPI_ERRCODES_IGNORE, ierr)
    call check(ierr, 'MPI_Comm_spawn_multiple with MPI_ARGVS_NULL')
    call MPI_Allreduce(0, v, 1, MPI_INTEGER, MPI_SUM, inter)
    if (v /= 3) call fail('allreduce with the children of MPI_ARGVS_NULL')
    call MPI_Comm_disconnect(inter)

    ! bad input: no such program
    call MPI_Comm_spawn('/nonexistent/oxmpi-f08-spawn', MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, &
                        MPI_COMM_WORLD, inter, errs, ierr)
    call MPI_Error_class(ierr, cls)
    if (cls /= MPI_ERR_SPAWN) call fail('a missing program must give MPI_ERR_SPAWN')
    if (inter /= MPI_COMM_NULL) call fail('a failed spawn returns MPI_COMM_NULL')
    call MPI_Finalize()
    if (rank == 0) print '(A)', 'f08_spawn OK'
contains
    subroutine check(e, what)
        integer, intent(in) :: e
        character(len=*), intent(in) :: what
        if (e /= MPI_SUCCESS) call fail(what)
    end subroutine
    subroutine fail(what)
        character(len=*), intent(in) :: what
        print *, 'FAILED: ', what
        call MPI_Abort(MPI_COMM_WORLD, 1)
    end subroutine
end program
