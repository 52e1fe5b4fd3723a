! oxmpi-test: ranks=1,2,4 timeout=60
! MPI-IO from Fortran (mpif.h): MPI_File_open, a view with MPI_OFFSET_KIND displacements,
! write_at_all / read_at, individual pointers, get_size, get_view's datarep string, the file
! handle through MPI_File_c2f / f2c (Fortran INTEGER handles), MPI_ERRORS_RETURN as the files'
! default handler, close and delete.
program io_file
    implicit none
    include 'mpif.h'
    integer, parameter :: n = 8
    integer :: rank, nprocs, ierr, fh, i, etype, ftype, count, eh
    integer :: buf(n), got(n), status(MPI_STATUS_SIZE)
    integer(kind=MPI_OFFSET_KIND) :: off, fsize, disp
    character(len=64) :: fname
    character(len=MPI_MAX_DATAREP_STRING) :: rep
    integer :: pid(1)

    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
    pid(1) = getpid()
    call MPI_Bcast(pid, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
    write (fname, '(A,I0)') '/tmp/oxmpi-f-io_file-', pid(1)

    call MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_CREATE + MPI_MODE_RDWR, MPI_INFO_NULL, fh, ierr)
    call check(ierr == MPI_SUCCESS .and. fh /= MPI_FILE_NULL, 'open')
    call MPI_File_get_errhandler(fh, eh, ierr)
    call check(eh == MPI_ERRORS_RETURN, 'default file error handler')
    do i = 1, n
        buf(i) = rank * 100 + i
    end do
    off = rank * n * 4
    call MPI_File_write_at_all(fh, off, buf, n, MPI_INTEGER, status, ierr)
    call MPI_Get_count(status, MPI_INTEGER, count, ierr)
    call check(ierr == MPI_SUCCESS .and. count == n, 'write_at_all count')
    call MPI_File_sync(fh, ierr)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    call MPI_File_sync(fh, ierr)
    call MPI_File_get_size(fh, fsize, ierr)
    call check(fsize == nprocs * n * 4, 'size')
    off = mod(rank + 1, nprocs) * n * 4
    call MPI_File_read_at(fh, off, got, n, MPI_INTEGER, status, ierr)
    do i = 1, n
        call check(got(i) == mod(rank + 1, nprocs) * 100 + i, 'read_at data')
    end do
    ! A view of integers starting at this rank's block; the individual pointer counts integers.
    disp = rank * n * 4
    call MPI_File_set_view(fh, disp, MPI_INTEGER, MPI_INTEGER, 'native', MPI_INFO_NULL, ierr)
    call check(ierr == MPI_SUCCESS, 'set_view')
    call MPI_File_get_view(fh, disp, etype, ftype, rep, ierr)
    call check(disp == rank * n * 4 .and. trim(rep) == 'native', 'get_view')
    call MPI_File_seek(fh, 2_MPI_OFFSET_KIND, MPI_SEEK_SET, ierr)
    call MPI_File_read(fh, got, 2, MPI_INTEGER, status, ierr)
    call check(got(1) == rank * 100 + 3 .and. got(2) == rank * 100 + 4, 'read after seek')
    call MPI_File_get_position(fh, off, ierr)
    call check(off == 4, 'position')
    ! The handle survives a C round trip; errors return codes.
    call check(MPI_File_f2c_roundtrip(fh), 'c2f/f2c')
    call MPI_File_read_at(fh, -1_MPI_OFFSET_KIND, got, 1, MPI_INTEGER, status, ierr)
    call check(ierr /= MPI_SUCCESS, 'negative offset is an error')
    call MPI_File_close(fh, ierr)
    call check(ierr == MPI_SUCCESS .and. fh == MPI_FILE_NULL, 'close')
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    if (rank == 0) then
        call MPI_File_delete(fname, MPI_INFO_NULL, ierr)
        call check(ierr == MPI_SUCCESS, 'delete')
    end if
    if (rank == 0) print *, 'io_file: OK'
    call MPI_Finalize(ierr)
contains
    include 'mpif_check.inc'
    logical function MPI_File_f2c_roundtrip(h)
        integer, intent(in) :: h
        integer(kind=MPI_OFFSET_KIND) :: s
        integer :: e
        call MPI_File_get_size(h, s, e)
        MPI_File_f2c_roundtrip = e == MPI_SUCCESS .and. s > 0
    end function MPI_File_f2c_roundtrip
end program io_file
