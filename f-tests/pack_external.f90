! oxmpi-test: ranks=1 timeout=60
! MPI_Pack_external / MPI_Unpack_external / MPI_Pack_external_size from Fortran: the CHARACTER
! data representation argument (trailing blanks dropped) and big-endian 'external32' bytes.
program pack_external
    implicit none
    include 'mpif.h'
    integer :: ierr, v(3), w(3)
    integer(kind=MPI_ADDRESS_KIND) :: sz, pos
    character(len=1) :: buf(16)

    call MPI_Init(ierr)
    call MPI_Pack_external_size('external32', 3, MPI_INTEGER, sz, ierr)
    call check(ierr == MPI_SUCCESS .and. sz == 12, 'MPI_Pack_external_size')
    v = [1, 256, -2]
    pos = 0
    call MPI_Pack_external('external32  ', v, 3, MPI_INTEGER, buf, 16_MPI_ADDRESS_KIND, pos, ierr)
    call check(ierr == MPI_SUCCESS .and. pos == 12, 'MPI_Pack_external position')
    call check(ichar(buf(1)) == 0 .and. ichar(buf(4)) == 1, 'big-endian 1')
    call check(ichar(buf(7)) == 1 .and. ichar(buf(8)) == 0, 'big-endian 256')
    call check(ichar(buf(9)) == 255 .and. ichar(buf(12)) == 254, 'big-endian -2')
    w = 0
    pos = 0
    call MPI_Unpack_external('external32', buf, 16_MPI_ADDRESS_KIND, pos, w, 3, MPI_INTEGER, ierr)
    call check(ierr == MPI_SUCCESS .and. pos == 12 .and. all(w == v), 'MPI_Unpack_external')
    call MPI_Finalize(ierr)
    print '(a)', 'pack_external: ok'
contains
    subroutine check(cond, what)
        logical, intent(in) :: cond
        character(*), intent(in) :: what
        integer :: e
        if (.not. cond) then
            print '(2a)', 'FAIL: ', what
            flush(6)
            call MPI_Abort(MPI_COMM_WORLD, 1, e)
        end if
    end subroutine check
end program pack_external
