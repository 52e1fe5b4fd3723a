! oxmpi: the `mpi` module (MPI 4.1 section 19.1.3). It holds the constants, COMMON blocks and
! EXTERNAL declarations of mpif.h, so `use mpi` and `include 'mpif.h'` programs call the same
! library entry points with the same values. Module files are specific to a compiler and its
! version: scripts/install.sh builds this with the installed gfortran, and mpifort builds it
! again, into a cache, for any other compiler.
! MPI_SIZEOF comes from mpi_sizeofs (include/mpi_sizeofs.f90, its procedures in libmpifort).
module mpi
    use mpi_sizeofs
    implicit none
    include 'mpif.h'
end module mpi
