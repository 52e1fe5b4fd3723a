! oxmpi-test: ranks=1,2,4 timeout=60
! MPI-IO through `use mpi_f08`: MPI_File_open (TYPE(MPI_File)), write_at_all / read_at with
! INTEGER(MPI_OFFSET_KIND) offsets, a view, seek / read / get_position, a nonblocking read
! (TYPE(MPI_Request)), get_size, get_amode, the file's default error handler (MPI_ERRORS_RETURN:
! an error comes back in ierror), close (the handle becomes MPI_FILE_NULL) and delete.
! Also MPI_Sizeof on numeric kinds and arrays, and MPI_Status_f2f08 / MPI_Status_f082f.
program f08_file
    use mpi_f08
    implicit none
    integer, parameter :: n = 8
    integer :: rank, nprocs, i, count, amode, ierr, sz, fstat(MPI_STATUS_SIZE), pid(1)
    integer :: buf(n), got(n)
    integer(kind=MPI_OFFSET_KIND) :: off, fsize, disp
    type(MPI_File) :: fh
    type(MPI_Status) :: status, st2
    type(MPI_Request) :: req
    type(MPI_Errhandler) :: eh
    character(len=64) :: fname
    double precision :: d(3, 2)
    real :: r
    complex(kind=kind(1.0d0)) :: z
    integer(kind=selected_int_kind(2)) :: i1
    integer(kind=selected_int_kind(15)) :: i8(4)
    interface
        integer(c_int) function getpid() bind(C, name='getpid')
            use, intrinsic :: iso_c_binding, only: c_int
        end function
    end interface

    call MPI_Init()
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
    pid(1) = getpid()
    call MPI_Bcast(pid, 1, MPI_INTEGER, 0, MPI_COMM_WORLD)
    write (fname, '(A,I0)') '/tmp/oxmpi-f-f08_file-', pid(1)

    call MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_CREATE + MPI_MODE_RDWR, MPI_INFO_NULL, fh, ierr)
    call check(ierr == MPI_SUCCESS .and. fh /= MPI_FILE_NULL, 'open')
    call MPI_File_get_errhandler(fh, eh)
    call check(eh == MPI_ERRORS_RETURN, 'default file error handler')
    call MPI_File_get_amode(fh, amode)
    call check(amode == MPI_MODE_CREATE + MPI_MODE_RDWR, 'amode')
    do i = 1, n
        buf(i) = rank * 100 + i
    end do
    off = rank * n * 4
    call MPI_File_write_at_all(fh, off, buf, n, MPI_INTEGER, status)
    call MPI_Get_count(status, MPI_INTEGER, count)
    call check(count == n, 'write_at_all count')
    call MPI_File_sync(fh)
    call MPI_Barrier(MPI_COMM_WORLD)
    call MPI_File_sync(fh)
    call MPI_File_get_size(fh, fsize)
    call check(fsize == nprocs * n * 4, 'size')
    off = mod(rank + 1, nprocs) * n * 4
    call MPI_File_read_at(fh, off, got, n, MPI_INTEGER, status)
    do i = 1, n
        call check(got(i) == mod(rank + 1, nprocs) * 100 + i, 'read_at data')
    end do
    ! A view of integers from this rank's block: offsets count integers.
    disp = rank * n * 4
    call MPI_File_set_view(fh, disp, MPI_INTEGER, MPI_INTEGER, 'native', MPI_INFO_NULL)
    call MPI_File_seek(fh, 2_MPI_OFFSET_KIND, MPI_SEEK_SET)
    call MPI_File_read(fh, got, 2, MPI_INTEGER, status)
    call check(got(1) == rank * 100 + 3 .and. got(2) == rank * 100 + 4, 'read after seek')
    call MPI_File_get_position(fh, off)
    call check(off == 4, 'position')
    got = -1
    call MPI_File_iread_at(fh, 5_MPI_OFFSET_KIND, got, 3, MPI_INTEGER, req)
    call MPI_Wait(req, status)
    call MPI_Get_count(status, MPI_INTEGER, count)
    call check(count == 3 .and. got(1) == rank * 100 + 6 .and. got(3) == rank * 100 + 8, 'iread_at')
    ! Errors come back (MPI_ERRORS_RETURN on files).
    call MPI_File_read_at(fh, -1_MPI_OFFSET_KIND, got, 1, MPI_INTEGER, status, ierr)
    call check(ierr /= MPI_SUCCESS, 'negative offset is an error')
    call MPI_File_close(fh)
    call check(fh == MPI_FILE_NULL, 'close')
    call MPI_Barrier(MPI_COMM_WORLD)
    if (rank == 0) call MPI_File_delete(fname, MPI_INFO_NULL)

    ! MPI_Sizeof: scalars and arrays of several kinds.
    call MPI_Sizeof(r, sz)
    call check(sz == 4, 'sizeof real')
    call MPI_Sizeof(d, sz, ierr)
    call check(sz == 8 .and. ierr == MPI_SUCCESS, 'sizeof double precision array')
    call MPI_Sizeof(z, sz)
    call check(sz == 16, 'sizeof double complex')
    call MPI_Sizeof(i1, sz)
    call check(sz == 1, 'sizeof integer(1)')
    call MPI_Sizeof(i8, sz)
    call check(sz == 8, 'sizeof integer(8) array')
    call MPI_Sizeof(buf, sz)
    call check(sz == 4, 'sizeof integer array')

    ! Status conversions between TYPE(MPI_Status) and INTEGER(MPI_STATUS_SIZE).
    call MPI_Sendrecv(buf, 3, MPI_INTEGER, rank, 9, got, n, MPI_INTEGER, rank, 9, MPI_COMM_WORLD, status)
    call MPI_Status_f082f(status, fstat)
    call check(fstat(MPI_SOURCE) == rank .and. fstat(MPI_TAG) == 9, 'f082f source and tag')
    call MPI_Status_f2f08(fstat, st2, ierr)
    call check(ierr == MPI_SUCCESS .and. st2%MPI_SOURCE == rank .and. st2%MPI_TAG == 9, 'f2f08')
    call MPI_Get_count(st2, MPI_INTEGER, count)
    call check(count == 3, 'count survives the round trip')

    if (rank == 0) print *, 'f08_file: OK'
    call MPI_Finalize()
contains
    include 'f08_check.inc'
end program
