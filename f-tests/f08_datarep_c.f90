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
    include 'f08_datarep_negate.inc'
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
    integer :: rank, ierr, cls, pid(1)
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

    call write_read_check(fh, fname, rank, reps)
    call MPI_File_close(fh)
    call MPI_Barrier(MPI_COMM_WORLD)
    if (rank == 0) call MPI_File_delete(fname, MPI_INFO_NULL)
    call MPI_Finalize()
contains
    include 'f08_check.inc'
    include 'f08_datarep_rw.inc'
end program
