! Parallel HDF5 from Fortran (h5pfc.mpich): a file created collectively through h5pset_fapl_mpio_f,
! a 2-D integer dataset of which each rank writes a block of columns (the last, slowest dimension)
! with a collective transfer, a second one written with independent transfers, an attribute; the
! file reopened read-only and both datasets read back whole, collectively, every value checked.
! Argument 1: the directory for the file (else $HDF5_TEST_DIR, $TMPDIR, /tmp).
program h5_fortran
    use hdf5
    use mpi
    use, intrinsic :: iso_fortran_env, only: error_unit
    implicit none
    integer, parameter :: nrows = 7, ncols_per_rank = 5
    integer :: ierr, herr, rank, nprocs, errors, total, i, j, nbad
    integer(hid_t) :: fapl, file, space, mspace, dset, dset2, dxpl_coll, dxpl_ind, attr, aspace
    integer(hsize_t) :: dims(2), count(2), offset(2), adims(1)
    integer, allocatable :: block(:, :), whole(:, :)
    integer :: nranks_attr(1)
    character(len=4096) :: dir, fname

    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
    errors = 0
    if (rank == 0) then
        dir = ''
        if (command_argument_count() >= 1) call get_command_argument(1, dir)
        if (len_trim(dir) == 0) call get_environment_variable('HDF5_TEST_DIR', dir)
        if (len_trim(dir) == 0) call get_environment_variable('TMPDIR', dir)
        if (len_trim(dir) == 0) dir = '/tmp'
        write (fname, '(a, a, i0, a)') trim(dir), '/oxmpi-h5-fortran-', getpid(), '.h5'
    end if
    call MPI_Bcast(fname, len(fname), MPI_CHARACTER, 0, MPI_COMM_WORLD, ierr)

    call h5open_f(herr); call check(herr, 'h5open_f')
    call h5pcreate_f(H5P_FILE_ACCESS_F, fapl, herr); call check(herr, 'h5pcreate_f fapl')
    call h5pset_fapl_mpio_f(fapl, MPI_COMM_WORLD, MPI_INFO_NULL, herr); call check(herr, 'h5pset_fapl_mpio_f')
    call h5fcreate_f(trim(fname), H5F_ACC_TRUNC_F, file, herr, access_prp=fapl); call check(herr, 'h5fcreate_f')

    dims = [integer(hsize_t) :: nrows, ncols_per_rank * nprocs]
    call h5screate_simple_f(2, dims, space, herr); call check(herr, 'h5screate_simple_f')
    call h5dcreate_f(file, 'coll', H5T_NATIVE_INTEGER, space, dset, herr); call check(herr, 'h5dcreate_f coll')
    call h5dcreate_f(file, 'ind', H5T_NATIVE_INTEGER, space, dset2, herr); call check(herr, 'h5dcreate_f ind')
    adims = [integer(hsize_t) :: 1]
    call h5screate_simple_f(1, adims, aspace, herr); call check(herr, 'h5screate_simple_f attr')
    call h5acreate_f(dset, 'nranks', H5T_NATIVE_INTEGER, aspace, attr, herr); call check(herr, 'h5acreate_f')
    nranks_attr(1) = nprocs
    call h5awrite_f(attr, H5T_NATIVE_INTEGER, nranks_attr, adims, herr); call check(herr, 'h5awrite_f')
    call h5aclose_f(attr, herr)
    call h5sclose_f(aspace, herr)

    allocate (block(nrows, ncols_per_rank), whole(nrows, ncols_per_rank * nprocs))
    do j = 1, ncols_per_rank
        do i = 1, nrows
            block(i, j) = val(1, i, rank * ncols_per_rank + j)
        end do
    end do
    count = [integer(hsize_t) :: nrows, ncols_per_rank]
    offset = [integer(hsize_t) :: 0, rank * ncols_per_rank]
    call h5screate_simple_f(2, count, mspace, herr); call check(herr, 'h5screate_simple_f memory')
    call h5sselect_hyperslab_f(space, H5S_SELECT_SET_F, offset, count, herr); call check(herr, 'h5sselect_hyperslab_f')
    call h5pcreate_f(H5P_DATASET_XFER_F, dxpl_coll, herr)
    call h5pset_dxpl_mpio_f(dxpl_coll, H5FD_MPIO_COLLECTIVE_F, herr); call check(herr, 'h5pset_dxpl_mpio_f coll')
    call h5pcreate_f(H5P_DATASET_XFER_F, dxpl_ind, herr)
    call h5pset_dxpl_mpio_f(dxpl_ind, H5FD_MPIO_INDEPENDENT_F, herr); call check(herr, 'h5pset_dxpl_mpio_f ind')
    call h5dwrite_f(dset, H5T_NATIVE_INTEGER, block, count, herr, file_space_id=space, mem_space_id=mspace, &
                    xfer_prp=dxpl_coll)
    call check(herr, 'h5dwrite_f collective')
    block = block + 1000000
    call h5dwrite_f(dset2, H5T_NATIVE_INTEGER, block, count, herr, file_space_id=space, mem_space_id=mspace, &
                    xfer_prp=dxpl_ind)
    call check(herr, 'h5dwrite_f independent')
    call h5sclose_f(mspace, herr)
    call h5sclose_f(space, herr)
    call h5dclose_f(dset, herr)
    call h5dclose_f(dset2, herr)
    call h5fclose_f(file, herr); call check(herr, 'h5fclose_f')

    call h5fopen_f(trim(fname), H5F_ACC_RDONLY_F, file, herr, access_prp=fapl); call check(herr, 'h5fopen_f')
    call h5dopen_f(file, 'coll', dset, herr); call check(herr, 'h5dopen_f coll')
    call h5aopen_f(dset, 'nranks', attr, herr); call check(herr, 'h5aopen_f')
    nranks_attr(1) = -1
    call h5aread_f(attr, H5T_NATIVE_INTEGER, nranks_attr, adims, herr); call check(herr, 'h5aread_f')
    call h5aclose_f(attr, herr)
    if (nranks_attr(1) /= nprocs) then
        print '(a, i0, a, i0, a, i0)', 'rank ', rank, ': attribute nranks is ', nranks_attr(1), ', expected ', nprocs
        errors = errors + 1
    end if
    whole = -1
    call h5dread_f(dset, H5T_NATIVE_INTEGER, whole, dims, herr, xfer_prp=dxpl_coll); call check(herr, 'h5dread_f coll')
    call compare(whole, 1, 0, 'coll')
    call h5dclose_f(dset, herr)
    call h5dopen_f(file, 'ind', dset2, herr); call check(herr, 'h5dopen_f ind')
    whole = -1
    call h5dread_f(dset2, H5T_NATIVE_INTEGER, whole, dims, herr, xfer_prp=dxpl_coll); call check(herr, 'h5dread_f ind')
    call compare(whole, 1, 1000000, 'ind')
    call h5dclose_f(dset2, herr)
    call h5fclose_f(file, herr)
    call h5pclose_f(dxpl_coll, herr)
    call h5pclose_f(dxpl_ind, herr)
    call h5pclose_f(fapl, herr)
    call h5close_f(herr)

    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    if (rank == 0) then
        call MPI_File_delete(trim(fname), MPI_INFO_NULL, ierr)
        if (ierr /= MPI_SUCCESS) then
            print '(a)', 'rank 0: MPI_File_delete failed'
            errors = errors + 1
        end if
    end if
    call MPI_Allreduce(errors, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    if (rank == 0) then
        if (total == 0) then
            print '(a, i0, a)', 'h5_fortran: all checks passed on ', nprocs, ' ranks'
        else
            print '(a, i0, a, i0, a)', 'h5_fortran: ', total, ' errors on ', nprocs, ' ranks'
        end if
    end if
    call MPI_Finalize(ierr)
    if (total /= 0) error stop 1

contains

    integer function val(d, i, j)
        integer, intent(in) :: d, i, j
        val = d * 100000 + i * 1000 + j
    end function val

    subroutine compare(a, d, add, what)
        integer, intent(in) :: a(:, :), d, add
        character(len=*), intent(in) :: what
        integer :: ii, jj
        nbad = 0
        do jj = 1, size(a, 2)
            do ii = 1, size(a, 1)
                if (a(ii, jj) /= val(d, ii, jj) + add) then
                    nbad = nbad + 1
                    if (nbad <= 5) print '(a, i0, 3a, i0, a, i0, a, i0, a, i0)', 'rank ', rank, ': ', what, &
                        ': element (', ii, ', ', jj, ') is ', a(ii, jj), ', expected ', val(d, ii, jj) + add
                end if
            end do
        end do
        errors = errors + nbad
    end subroutine compare

    subroutine check(status, what)
        integer, intent(in) :: status
        character(len=*), intent(in) :: what
        integer :: e
        if (status < 0) then
            write (error_unit, '(a, i0, 3a)') 'rank ', rank, ': ', what, ' failed'
            flush (error_unit)
            call MPI_Abort(MPI_COMM_WORLD, 1, e)
        end if
    end subroutine check
end program h5_fortran
