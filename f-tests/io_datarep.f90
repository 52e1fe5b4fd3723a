! oxmpi-test: ranks=1,2 timeout=60 mpich=skip
! MPI_REGISTER_DATAREP from Fortran (mpif.h): a representation whose conversion subroutines
! byte-swap INTEGERs (Fortran interfaces: buffers by address, DATATYPE an INTEGER handle, COUNT,
! POSITION, EXTRA_STATE by reference, the error in IERROR), with an extent subroutine. Each rank
! writes its block through a view in it with write_at_all and reads it back converted; the raw
! file bytes (a native view) are the swapped values; the subroutines saw MPI_INTEGER, their
! EXTRA_STATE and positions in etypes. A second representation registered with
! MPI_CONVERSION_FN_NULL stores the data unconverted; registering a name again is
! MPI_ERR_DUP_DATAREP (MPI_FILE_NULL's handler: MPI_ERRORS_RETURN).
! MPICH 4.0.2 refuses conversion functions (ROMIO: "not supported"), hence mpich=skip.
module datarep_counts
    implicit none
    ! Calls of each subroutine, and what they saw wrong (0 = nothing).
    integer :: nwrite = 0, nread = 0, nextent = 0, bad = 0
end module datarep_counts

integer function bswap(x)
    implicit none
    integer, intent(in) :: x
    bswap = ior(ior(ishft(iand(x, 255), 24), ishft(iand(ishft(x, -8), 255), 16)), &
                ior(ishft(iand(ishft(x, -16), 255), 8), iand(ishft(x, -24), 255)))
end function bswap

subroutine swap_write(userbuf, datatype, count, filebuf, position, extra_state, ierror)
    use datarep_counts
    implicit none
    include 'mpif.h'
    integer :: userbuf(*), filebuf(*), datatype, count, ierror, i, bswap
    integer(kind=MPI_OFFSET_KIND) :: position
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    nwrite = nwrite + 1
    if (datatype /= MPI_INTEGER .or. extra_state /= 4242 .or. position < 0) bad = bad + 1
    do i = 1, count
        filebuf(i) = bswap(userbuf(i))
    end do
    ierror = MPI_SUCCESS
end subroutine swap_write

subroutine swap_read(userbuf, datatype, count, filebuf, position, extra_state, ierror)
    use datarep_counts
    implicit none
    include 'mpif.h'
    integer :: userbuf(*), filebuf(*), datatype, count, ierror, i, bswap
    integer(kind=MPI_OFFSET_KIND) :: position
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    nread = nread + 1
    if (datatype /= MPI_INTEGER .or. extra_state /= 4242 .or. position < 0) bad = bad + 1
    do i = 1, count
        userbuf(i) = bswap(filebuf(i))
    end do
    ierror = MPI_SUCCESS
end subroutine swap_read

subroutine int_extent(datatype, extent, extra_state, ierror)
    use datarep_counts
    implicit none
    include 'mpif.h'
    integer :: datatype, ierror, sz
    integer(kind=MPI_ADDRESS_KIND) :: extent, extra_state
    nextent = nextent + 1
    call MPI_Type_size(datatype, sz, ierror)
    extent = sz
end subroutine int_extent

program io_datarep
    use datarep_counts
    implicit none
    include 'mpif.h'
    integer, parameter :: n = 6
    integer :: rank, nprocs, ierr, fh, i, cls, bswap
    integer :: buf(n), got(n), status(MPI_STATUS_SIZE), pid(1)
    integer(kind=MPI_OFFSET_KIND) :: off
    integer(kind=MPI_ADDRESS_KIND) :: extra, ext
    character(len=64) :: fname
    external :: swap_write, swap_read, int_extent

    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
    pid(1) = getpid()
    call MPI_Bcast(pid, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
    write (fname, '(A,I0)') '/tmp/oxmpi-f-io_datarep-', pid(1)

    extra = 4242
    call MPI_Register_datarep('oxswap', swap_read, swap_write, int_extent, extra, ierr)
    call check(ierr == MPI_SUCCESS, 'register oxswap')
    ! Trailing blanks of the name are not part of it: this is the same name again.
    call MPI_Register_datarep('oxswap  ', swap_read, swap_write, int_extent, extra, ierr)
    call MPI_Error_class(ierr, cls, i)
    call check(cls == MPI_ERR_DUP_DATAREP, 'registering oxswap again: MPI_ERR_DUP_DATAREP')
    call MPI_Register_datarep('oxnull', MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, int_extent, extra, ierr)
    call check(ierr == MPI_SUCCESS, 'register oxnull')

    do i = 1, n
        buf(i) = (rank + 1) * 16777216 + i * 65536 + rank * 256 + i
    end do
    off = rank * n
    call MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_CREATE + MPI_MODE_RDWR, MPI_INFO_NULL, fh, ierr)
    call check(ierr == MPI_SUCCESS, 'open')
    call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, MPI_INTEGER, 'oxswap', MPI_INFO_NULL, ierr)
    call check(ierr == MPI_SUCCESS, 'set_view oxswap')
    call check(nextent > 0, 'the extent subroutine was called')
    call MPI_File_get_type_extent(fh, MPI_INTEGER, ext, ierr)
    call check(ierr == MPI_SUCCESS .and. ext == 4, 'get_type_extent in oxswap')
    call MPI_File_write_at_all(fh, off, buf, n, MPI_INTEGER, status, ierr)
    call check(ierr == MPI_SUCCESS .and. nwrite > 0, 'write_at_all converted')
    call MPI_File_sync(fh, ierr)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)

    got = 0
    call MPI_File_read_at(fh, off, got, n, MPI_INTEGER, status, ierr)
    call check(ierr == MPI_SUCCESS .and. nread > 0, 'read_at converted')
    call check(all(got == buf), 'values read back through oxswap')

    ! The file holds the swapped bytes.
    call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, MPI_INTEGER, 'native', MPI_INFO_NULL, ierr)
    got = 0
    call MPI_File_read_at(fh, off, got, n, MPI_INTEGER, status, ierr)
    do i = 1, n
        call check(got(i) == bswap(buf(i)), 'file bytes are the converted values')
    end do
    call check(bad == 0, 'the conversion subroutines saw MPI_INTEGER and their extra state')

    ! MPI_CONVERSION_FN_NULL: stored and read as in memory.
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, MPI_INTEGER, 'oxnull', MPI_INFO_NULL, ierr)
    call check(ierr == MPI_SUCCESS, 'set_view oxnull')
    call MPI_File_write_at_all(fh, off, buf, n, MPI_INTEGER, status, ierr)
    call check(ierr == MPI_SUCCESS, 'write_at_all oxnull')
    call MPI_File_sync(fh, ierr)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    got = 0
    call MPI_File_read_at(fh, off, got, n, MPI_INTEGER, status, ierr)
    call check(ierr == MPI_SUCCESS .and. all(got == buf), 'read back through oxnull')
    call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, MPI_INTEGER, 'native', MPI_INFO_NULL, ierr)
    got = 0
    call MPI_File_read_at(fh, off, got, n, MPI_INTEGER, status, ierr)
    call check(all(got == buf), 'oxnull stores the data unconverted')

    call MPI_File_close(fh, ierr)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    if (rank == 0) call MPI_File_delete(fname, MPI_INFO_NULL, ierr)
    call MPI_Finalize(ierr)
contains
    include 'mpif_check.inc'
end program io_datarep
