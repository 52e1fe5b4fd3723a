! oxmpi-test: ranks=1,2 timeout=60
! CHARACTER and address-valued procedures of the Fortran library without callbacks, so that an
! Open MPI-built binary runs them too (on oxmpi's libmpi_mpifh.so.40): MPI_Info_set/get/
! get_valuelen/get_nthkey/delete (blanks stripped), MPI_Add_error_class/code/string with
! MPI_Error_string, MPI_Buffer_attach/detach, MPI_Open_port/MPI_Close_port, and a port published,
! looked up and unpublished by name, connected to itself by one rank.
program info_ports
    implicit none
    include 'mpif.h'
    integer :: ierr, info, vlen, n, rank, cls, code, sz
    logical :: flag
    character(len=40) :: val
    character(len=MPI_MAX_ERROR_STRING) :: msg
    character(len=MPI_MAX_PORT_NAME) :: port, found
    character(len=1) :: attached(1000)

    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)

    call MPI_Info_create(info, ierr)
    call MPI_Info_set(info, '  colour ', ' deep blue  ', ierr)
    call MPI_Info_set(info, 'size', '3', ierr)
    call check(ierr == MPI_SUCCESS, 'MPI_Info_set')
    call MPI_Info_get_valuelen(info, 'colour  ', vlen, flag, ierr)
    call check(flag .and. vlen == 9, 'MPI_Info_get_valuelen')
    call MPI_Info_get(info, 'colour', 40, val, flag, ierr)
    call check(flag .and. val == 'deep blue', 'MPI_Info_get')
    call MPI_Info_get(info, 'absent', 40, val, flag, ierr)
    call check(ierr == MPI_SUCCESS .and. .not. flag, 'MPI_Info_get of an absent key')
    call MPI_Info_get_nthkey(info, 1, val, ierr)
    call check(ierr == MPI_SUCCESS .and. val == 'size', 'MPI_Info_get_nthkey')
    call MPI_Info_delete(info, ' colour', ierr)
    call MPI_Info_get_nkeys(info, n, ierr)
    call check(ierr == MPI_SUCCESS .and. n == 1, 'MPI_Info_delete')
    call MPI_Info_free(info, ierr)

    call MPI_Add_error_class(cls, ierr)
    call MPI_Add_error_code(cls, code, ierr)
    call MPI_Add_error_string(code, 'my own error  ', ierr)
    call check(ierr == MPI_SUCCESS, 'MPI_Add_error_string')
    call MPI_Error_string(code, msg, n, ierr)
    call check(msg == 'my own error' .and. n == 12, 'MPI_Error_string of a user code')

    call MPI_Buffer_attach(attached, 1000, ierr)
    call MPI_Buffer_detach(attached, sz, ierr)
    call check(ierr == MPI_SUCCESS .and. sz == 1000, 'MPI_Buffer_detach size')

    if (rank == 0) then
        call MPI_Open_port(MPI_INFO_NULL, port, ierr)
        call check(ierr == MPI_SUCCESS .and. len_trim(port) > 0, 'MPI_Open_port')
        call MPI_Publish_name('oxmpi-info-ports', MPI_INFO_NULL, port, ierr)
        call check(ierr == MPI_SUCCESS, 'MPI_Publish_name')
        call MPI_Lookup_name('oxmpi-info-ports', MPI_INFO_NULL, found, ierr)
        call check(ierr == MPI_SUCCESS .and. found == port, 'MPI_Lookup_name')
        call MPI_Unpublish_name('oxmpi-info-ports', MPI_INFO_NULL, port, ierr)
        call check(ierr == MPI_SUCCESS, 'MPI_Unpublish_name')
        call MPI_Close_port(port, ierr)
        call check(ierr == MPI_SUCCESS, 'MPI_Close_port')
    end if

    call MPI_Finalize(ierr)
    if (rank == 0) print '(a)', 'info_ports: ok'
contains
    include 'mpif_check.inc'
end program info_ports
