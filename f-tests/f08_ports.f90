! oxmpi-test: ranks=2 timeout=60 mpich=skip
! use mpi_f08: MPI_Open_port, MPI_Publish_name/MPI_Lookup_name, MPI_Comm_accept/MPI_Comm_connect
! between the two ranks on MPI_COMM_SELF, a broadcast over the new intercommunicator,
! MPI_Comm_disconnect, MPI_Unpublish_name, MPI_Close_port. (Debian's MPICH, over UCX, has no
! ports: mpich=skip.)
program f08_ports
    use mpi_f08
    implicit none
    integer :: rank, v, ierr, pid
    type(MPI_Comm) :: inter
    character(len=MPI_MAX_PORT_NAME) :: port, found
    character(len=64) :: service

    call MPI_Init()
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    pid = 0
    if (rank == 0) pid = getpid()
    call MPI_Bcast(pid, 1, MPI_INTEGER, 0, MPI_COMM_WORLD)
    write (service, '(A,I0)') 'oxmpi-ftest-f08-ports-', pid
    if (rank == 0) then
        call MPI_Open_port(MPI_INFO_NULL, port)
        call MPI_Publish_name(service, MPI_INFO_NULL, port)
    end if
    call MPI_Barrier(MPI_COMM_WORLD)
    if (rank == 0) then
        call MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, inter)
        v = 23
        call MPI_Bcast(v, 1, MPI_INTEGER, MPI_ROOT, inter)
        call MPI_Unpublish_name(service, MPI_INFO_NULL, port)
        call MPI_Close_port(port, ierr)
        if (ierr /= MPI_SUCCESS) call MPI_Abort(MPI_COMM_WORLD, 1)
    else
        call MPI_Lookup_name(service, MPI_INFO_NULL, found)
        call MPI_Comm_connect(found, MPI_INFO_NULL, 0, MPI_COMM_SELF, inter)
        v = 0
        call MPI_Bcast(v, 1, MPI_INTEGER, 0, inter)
        if (v /= 23) then
            print *, 'FAILED: bcast gave ', v
            call MPI_Abort(MPI_COMM_WORLD, 1)
        end if
    end if
    call MPI_Comm_disconnect(inter)
    call MPI_Finalize()
end program
