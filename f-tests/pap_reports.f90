! oxmpi-test: ranks=2,4 timeout=120 mpich=skip mpich-built=skip
! oxmpi's progress reports from Fortran, through `use mpi` and `use mpi_f08`: MPIX_Pap_progress
! and MPIX_Pap_expect take a DOUBLE PRECISION, an absurd one (above 1, negative) is
! MPI_ERR_ARG in IERROR, and large MPI_Reduce calls after correct reports stay exact.
! Skipped on MPICH: the calls are oxmpi extensions.
module pap_f08_part
contains
    subroutine f08_reports(rank, nprocs)
        use mpi_f08
        implicit none
        integer, intent(in) :: rank, nprocs
        integer :: ierr, cls
        integer, allocatable :: s(:), r(:)
        integer :: i
        call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)
        call MPIX_Pap_expect(MPI_COMM_WORLD, -2.0d0, ierr)
        call MPI_Error_class(ierr, cls)
        if (cls /= MPI_ERR_ARG) call fail('mpi_f08 MPIX_Pap_expect(-2) class', cls)
        allocate(s(100003), r(100003))
        s = [(rank + mod(i, 17), i = 1, 100003)]
        call MPIX_Pap_expect(MPI_COMM_WORLD, 0.001d0 * rank)
        call MPI_Reduce(s, r, 100003, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD)
        if (rank == 0) then
            do i = 1, 100003
                if (r(i) /= nprocs * mod(i, 17) + nprocs * (nprocs - 1) / 2) call fail('mpi_f08 reduce element', i)
            end do
        end if
    end subroutine
    subroutine fail(what, v)
        use mpi_f08
        implicit none
        character(*), intent(in) :: what
        integer, intent(in) :: v
        print *, 'FAIL: ', what, v
        call MPI_Abort(MPI_COMM_WORLD, 1)
    end subroutine
end module

program pap_reports
    use mpi
    use pap_f08_part, only: f08_reports, fail
    implicit none
    integer :: ierr, rank, nprocs, cls, i, k
    integer, allocatable :: s(:), r(:)
    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
    call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
    call MPIX_Pap_progress(MPI_COMM_WORLD, 1.5d0, ierr)
    call MPI_Error_class(ierr, cls, ierr)
    if (cls /= MPI_ERR_ARG) call fail('MPIX_Pap_progress(1.5) class', cls)
    call MPIX_Pap_expect(MPI_COMM_WORLD, -1.0d0, ierr)
    call MPI_Error_class(ierr, cls, ierr)
    if (cls /= MPI_ERR_ARG) call fail('MPIX_Pap_expect(-1) class', cls)
    allocate(s(100003), r(100003))
    do k = 1, 4
        s = [(rank * k + mod(i, 13), i = 1, 100003)]
        call MPIX_Pap_progress(MPI_COMM_WORLD, 0.0d0, ierr)
        if (ierr /= MPI_SUCCESS) call fail('MPIX_Pap_progress(0)', ierr)
        call MPIX_Pap_progress(MPI_COMM_WORLD, 0.5d0, ierr)
        call MPIX_Pap_progress(MPI_COMM_WORLD, 1.0d0, ierr)
        call MPI_Reduce(s, r, 100003, MPI_INTEGER, MPI_SUM, mod(k, nprocs), MPI_COMM_WORLD, ierr)
        if (rank == mod(k, nprocs)) then
            do i = 1, 100003
                if (r(i) /= k * nprocs * (nprocs - 1) / 2 + nprocs * mod(i, 13)) call fail('reduce element', i)
            end do
        end if
    end do
    call f08_reports(rank, nprocs)
    call MPI_Finalize(ierr)
end program
