! oxmpi-test: ranks=1,2 timeout=60 mpich=skip mpich-built=skip
! MPI_Register_datarep_c through `use mpi_f08` (f08_datarep.f90 without _c): conversion
! procedures of the abstract interface MPI_Datarep_conversion_function_c (TYPE(C_PTR), VALUE
! buffers, TYPE(MPI_Datatype), INTEGER(KIND=MPI_COUNT_KIND) count) that store each INTEGER
! negated, and an MPI_Datarep_extent_function. Each rank writes its block with write_at_all
! through a view in each representation, reads it back converted, and reads the raw file
! (a native view): the negated values. MPI_CONVERSION_FN_NULL_C stores the data unconverted; a
! name registered twice is MPI_ERR_DUP_DATAREP in ierror. MPICH 4.0.2 refuses conversion
! functions, hence mpich=skip; its mpi_f08 module calls mpi_register_datarep_c_, which its
! libmpifort lacks (liboxmpi.so has it), hence mpich-built=skip.
module f08_datarep_c_convs
    use mpi_f08
    use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
    implicit none
    integer :: nconv = 0, bad = 0
contains
    subroutine negate(userbuf, filebuf, n, to_file)
        type(c_ptr), value :: userbuf, filebuf
        integer(kind=MPI_COUNT_KIND), intent(in) :: n
        logical, intent(in) :: to_file
        integer, pointer :: u(:), f(:)
        call c_f_pointer(userbuf, u, [n])
        call c_f_pointer(filebuf, f, [n])
        if (to_file) then
            f = -u
        else
            u = -f
        end if
        nconv = nconv + 1
    end subroutine
    subroutine neg_read_c(userbuf, datatype, count, filebuf, position, extra_state, ierror)
        type(c_ptr), value :: userbuf, filebuf
        type(MPI_Datatype) :: datatype
        integer(kind=MPI_COUNT_KIND) :: count
        integer :: ierror
        integer(kind=MPI_OFFSET_KIND) :: position
        integer(kind=MPI_ADDRESS_KIND) :: extra_state
        if (datatype /= MPI_INTEGER .or. extra_state /= 78 .or. position < 0) bad = bad + 1
        call negate(userbuf, filebuf, count, .false.)
        ierror = MPI_SUCCESS
    end subroutine
    subroutine neg_write_c(userbuf, datatype, count, filebuf, position, extra_state, ierror)
        type(c_ptr), value :: userbuf, filebuf
        type(MPI_Datatype) :: datatype
        integer(kind=MPI_COUNT_KIND) :: count
        integer :: ierror
        integer(kind=MPI_OFFSET_KIND) :: position
        integer(kind=MPI_ADDRESS_KIND) :: extra_state
        if (datatype /= MPI_INTEGER .or. extra_state /= 78 .or. position < 0) bad = bad + 1
        call negate(userbuf, filebuf, count, .true.)
        ierror = MPI_SUCCESS
    end subroutine
    subroutine int_extent(datatype, extent, extra_state, ierror)
        type(MPI_Datatype) :: datatype
        integer(kind=MPI_ADDRESS_KIND) :: extent, extra_state
        integer :: ierror, sz
        call MPI_Type_size(datatype, sz, ierror)
        extent = sz
    end subroutine
end module f08_datarep_c_convs

program f08_datarep_c
    use mpi_f08
    use f08_datarep_c_convs
    implicit none
    integer, parameter :: n = 5
    integer :: rank, i, ierr, cls, buf(n), got(n), pid(1), k, before
    integer(kind=MPI_OFFSET_KIND) :: off
    type(MPI_File) :: fh
    character(len=64) :: fname
    character(len=8) :: reps(2) = [character(len=8) :: 'oxnegc', 'oxnullc']

    call MPI_Init()
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    pid(1) = getpid()
    call MPI_Bcast(pid, 1, MPI_INTEGER, 0, MPI_COMM_WORLD)
    write (fname, '(A,I0)') '/tmp/oxmpi-f-f08_datarep_c-', pid(1)

    call MPI_Register_datarep_c('oxnegc', neg_read_c, neg_write_c, int_extent, 78_MPI_ADDRESS_KIND, ierr)
    call check(ierr == MPI_SUCCESS, 'register_c oxnegc')
    call MPI_Register_datarep_c('oxnullc', MPI_CONVERSION_FN_NULL_C, MPI_CONVERSION_FN_NULL_C, int_extent, 0_MPI_ADDRESS_KIND)
    call MPI_Register_datarep_c('oxnegc', neg_read_c, neg_write_c, int_extent, 78_MPI_ADDRESS_KIND, ierr)
    call MPI_Error_class(ierr, cls)
    call check(cls == MPI_ERR_DUP_DATAREP, 'oxnegc again: MPI_ERR_DUP_DATAREP')

    off = rank * n
    call MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_CREATE + MPI_MODE_RDWR, MPI_INFO_NULL, fh)
    do k = 1, 2
        buf = [(rank * 1000 + k * 100 + i, i = 1, n)]
        call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, MPI_INTEGER, trim(reps(k)), MPI_INFO_NULL, ierr)
        call check(ierr == MPI_SUCCESS, 'set_view ' // reps(k))
        before = nconv
        call MPI_File_write_at_all(fh, off, buf, n, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
        call check(ierr == MPI_SUCCESS, 'write_at_all ' // reps(k))
        call check((nconv > before) .eqv. (k /= 2), 'write converted (not for oxnull) ' // reps(k))
        call MPI_File_sync(fh)
        call MPI_Barrier(MPI_COMM_WORLD)
        got = 0
        call MPI_File_read_at(fh, off, got, n, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
        call check(ierr == MPI_SUCCESS .and. all(got == buf), 'read back ' // reps(k))
        call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, MPI_INTEGER, 'native', MPI_INFO_NULL)
        got = 0
        call MPI_File_read_at(fh, off, got, n, MPI_INTEGER, MPI_STATUS_IGNORE)
        if (k == 2) then
            call check(all(got == buf), 'oxnullc stores the data unconverted')
        else
            call check(all(got == -buf), 'the file holds the converted data ' // reps(k))
        end if
        call MPI_Barrier(MPI_COMM_WORLD)
    end do
    call check(bad == 0, 'the conversion procedures saw MPI_INTEGER and their extra state')
    call MPI_File_close(fh)
    call MPI_Barrier(MPI_COMM_WORLD)
    if (rank == 0) call MPI_File_delete(fname, MPI_INFO_NULL)
    call MPI_Finalize()
contains
    include 'f08_check.inc'
end program
