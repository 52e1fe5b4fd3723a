! oxmpi-test: ranks=1,2 timeout=60 mpich=skip mpich-built=skip openmpi-built=skip
! MPI 4.1's MPI_COMM_TYPE_RESOURCE_GUIDED from Fortran: the same value in `use mpi_f08` and mpif.h
! (which the `use mpi` module includes), and MPI_Comm_split_type with it splits by the
! mpi_hw_resource_type info key (no key: MPI_COMM_NULL; "mpi_shared_memory": every rank of the
! node). mpich=skip, mpich-built=skip: MPICH 4.0.2 has no RESOURCE_GUIDED.
module split_type_resource_mpif
contains
    subroutine mpif_resource_guided(resource_guided)
        implicit none
        include 'mpif.h'
        integer, intent(out) :: resource_guided
        resource_guided = MPI_COMM_TYPE_RESOURCE_GUIDED
    end subroutine
end module

program split_type_resource
    use mpi_f08
    use split_type_resource_mpif
    implicit none
    integer :: rg, rank, nprocs, n
    type(MPI_Comm) :: c
    type(MPI_Info) :: info

    call MPI_Init()
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
    call mpif_resource_guided(rg)
    call check(rg == MPI_COMM_TYPE_RESOURCE_GUIDED, 'mpif.h and mpi_f08 agree on RESOURCE_GUIDED')

    call MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_RESOURCE_GUIDED, 0, MPI_INFO_NULL, c)
    call check(c == MPI_COMM_NULL, 'RESOURCE_GUIDED without the key gives MPI_COMM_NULL')
    call MPI_Info_create(info)
    call MPI_Info_set(info, 'mpi_hw_resource_type', 'mpi_shared_memory')
    call MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_RESOURCE_GUIDED, rank, info, c)
    call check(c /= MPI_COMM_NULL, 'RESOURCE_GUIDED mpi_shared_memory gives a communicator')
    call MPI_Comm_size(c, n)
    call check(n == nprocs, 'RESOURCE_GUIDED mpi_shared_memory holds the node')
    call MPI_Comm_free(c)
    call MPI_Info_free(info)
    if (rank == 0) print *, 'split_type_resource: OK'
    call MPI_Finalize()
contains
    include 'f08_check.inc'
end program
