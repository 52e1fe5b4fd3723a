! oxmpi-test: ranks=1,2 timeout=60 mpich=skip
! MPI_Register_datarep through `use mpi_f08`: conversion procedures of the abstract interface
! MPI_Datarep_conversion_function (TYPE(C_PTR), VALUE buffers, TYPE(MPI_Datatype), INTEGER
! count) that store each INTEGER negated, and an MPI_Datarep_extent_function (the large-count
! MPI_Register_datarep_c: f08_datarep_c.f90). Each rank writes its block with write_at_all
! through a view in each representation, reads it back converted, and reads the raw file
! (a native view): the negated values. MPI_CONVERSION_FN_NULL stores the data unconverted; a
! name registered twice is MPI_ERR_DUP_DATAREP in ierror. MPICH 4.0.2 refuses conversion
! functions, hence mpich=skip.
module f08_datarep_convs
    use mpi_f08
    use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
    implicit none
    integer :: nconv = 0, bad = 0
contains
    include 'f08_datarep_negate.inc'
    subroutine neg_read(userbuf, datatype, count, filebuf, position, extra_state, ierror)
        type(c_ptr), value :: userbuf, filebuf
        type(MPI_Datatype) :: datatype
        integer :: count, ierror
        integer(kind=MPI_OFFSET_KIND) :: position
        integer(kind=MPI_ADDRESS_KIND) :: extra_state
        if (datatype /= MPI_INTEGER .or. extra_state /= 77 .or. position < 0) bad = bad + 1
        call negate(userbuf, filebuf, int(count, MPI_COUNT_KIND), .false.)
        ierror = MPI_SUCCESS
    end subroutine
    subroutine neg_write(userbuf, datatype, count, filebuf, position, extra_state, ierror)
        type(c_ptr), value :: userbuf, filebuf
        type(MPI_Datatype) :: datatype
        integer :: count, ierror
        integer(kind=MPI_OFFSET_KIND) :: position
        integer(kind=MPI_ADDRESS_KIND) :: extra_state
        if (datatype /= MPI_INTEGER .or. extra_state /= 77 .or. position < 0) bad = bad + 1
        call negate(userbuf, filebuf, int(count, MPI_COUNT_KIND), .true.)
        ierror = MPI_SUCCESS
    end subroutine
    subroutine int_extent(datatype, extent, extra_state, ierror)
        type(MPI_Datatype) :: datatype
        integer(kind=MPI_ADDRESS_KIND) :: extent, extra_state
        integer :: ierror, sz
        call MPI_Type_size(datatype, sz, ierror)
        extent = sz
    end subroutine
end module f08_datarep_convs

program f08_datarep
    use mpi_f08
    use f08_datarep_convs
    implicit none
    integer, parameter :: n = 5
    integer :: rank, ierr, cls, pid(1)
    type(MPI_File) :: fh
    character(len=64) :: fname
    character(len=8) :: reps(2) = [character(len=8) :: 'oxneg', 'oxnull']

    call MPI_Init()
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    pid(1) = getpid()
    call MPI_Bcast(pid, 1, MPI_INTEGER, 0, MPI_COMM_WORLD)
    write (fname, '(A,I0)') '/tmp/oxmpi-f-f08_datarep-', pid(1)

    call MPI_Register_datarep('oxneg', neg_read, neg_write, int_extent, 77_MPI_ADDRESS_KIND, ierr)
    call check(ierr == MPI_SUCCESS, 'register oxneg')
    call MPI_Register_datarep('oxnull', MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, int_extent, 0_MPI_ADDRESS_KIND)
    call MPI_Register_datarep('oxneg', neg_read, neg_write, int_extent, 78_MPI_ADDRESS_KIND, ierr)
    call MPI_Error_class(ierr, cls)
    call check(cls == MPI_ERR_DUP_DATAREP, 'oxneg again: MPI_ERR_DUP_DATAREP')

    call write_read_check(fh, fname, rank, reps)
    call MPI_File_close(fh)
    call MPI_Barrier(MPI_COMM_WORLD)
    if (rank == 0) call MPI_File_delete(fname, MPI_INFO_NULL)
    call MPI_Finalize()
contains
    include 'f08_check.inc'
    include 'f08_datarep_rw.inc'
end program
