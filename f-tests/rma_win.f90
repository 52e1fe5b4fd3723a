! oxmpi-test: ranks=1,2,4 timeout=60
! Windows from Fortran (mpif.h): MPI_Win_allocate with put/get in fence epochs, the predefined
! window attributes as INTEGER(KIND=MPI_ADDRESS_KIND) values (MPI 4.1 section 12.2.6), user
! keyvals with MPI_WIN_DUP_FN / MPI_WIN_NULL_DELETE_FN and with a Fortran delete callback run at
! MPI_Win_free, names, a Fortran window errhandler, and MPI_ERRORS_RETURN.
module rma_cb
    implicit none
    integer :: ndelete = 0, nhandler = 0, lastcode = 0
    integer(kind=8) :: deleted_val = 0
contains
    subroutine win_delete(win, keyval, val, extra, ierr)
        integer :: win, keyval, ierr
        integer(kind=8) :: val, extra
        ndelete = ndelete + 1
        deleted_val = val + extra
        ierr = 0
    end subroutine win_delete
    subroutine win_handler(win, code)
        integer :: win, code
        nhandler = nhandler + 1
        lastcode = code
    end subroutine win_handler
end module rma_cb

program rma_win
    use rma_cb
    use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
    implicit none
    include 'mpif.h'
    integer, parameter :: n = 16
    integer :: ierr, rank, nprocs, win, right, left, i, key1, key2, eh, cls, rlen
    integer :: src(1), got(1)
    integer(kind=MPI_ADDRESS_KIND) :: baseptr, aval, disp
    integer, pointer :: mem(:)
    type(c_ptr) :: cbase
    logical :: flag
    character(len=MPI_MAX_OBJECT_NAME) :: wname

    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
    right = mod(rank + 1, nprocs)
    left = mod(rank + nprocs - 1, nprocs)

    call MPI_Win_allocate(int(4 * n, MPI_ADDRESS_KIND), 4, MPI_INFO_NULL, MPI_COMM_WORLD, baseptr, win, ierr)
    call check(ierr == MPI_SUCCESS .and. win /= MPI_WIN_NULL, 'MPI_Win_allocate')
    cbase = transfer(baseptr, cbase)
    call c_f_pointer(cbase, mem, [n])
    mem = -1

    ! Predefined attributes: the values themselves, with the Fortran key values.
    call MPI_Win_get_attr(win, MPI_WIN_BASE, aval, flag, ierr)
    call check(ierr == MPI_SUCCESS .and. flag .and. aval == baseptr, 'MPI_WIN_BASE')
    call MPI_Win_get_attr(win, MPI_WIN_SIZE, aval, flag, ierr)
    call check(flag .and. aval == 4 * n, 'MPI_WIN_SIZE')
    call MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, aval, flag, ierr)
    call check(flag .and. aval == 4, 'MPI_WIN_DISP_UNIT')
    call MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, aval, flag, ierr)
    call check(flag .and. aval == MPI_WIN_FLAVOR_ALLOCATE, 'MPI_WIN_CREATE_FLAVOR')
    call MPI_Win_get_attr(win, MPI_WIN_MODEL, aval, flag, ierr)
    call check(flag .and. (aval == MPI_WIN_UNIFIED .or. aval == MPI_WIN_SEPARATE), 'MPI_WIN_MODEL')

    ! Put my rank to the right neighbour's element `rank`, then get the left neighbour's.
    call MPI_Win_fence(0, win, ierr)
    src(1) = 1000 + rank
    disp = rank
    call MPI_Put(src, 1, MPI_INTEGER, right, disp, 1, MPI_INTEGER, win, ierr)
    call check(ierr == MPI_SUCCESS, 'MPI_Put')
    call MPI_Win_fence(0, win, ierr)
    call check(mem(left + 1) == 1000 + left, 'value put by the left neighbour')
    do i = 1, n
        if (i /= left + 1) call check(mem(i) == -1, 'untouched window memory')
    end do
    mem(n) = 7 * rank
    call MPI_Win_fence(0, win, ierr)
    got = -5
    call MPI_Get(got, 1, MPI_INTEGER, right, int(n - 1, MPI_ADDRESS_KIND), 1, MPI_INTEGER, win, ierr)
    call MPI_Win_fence(0, win, ierr)
    call check(got(1) == 7 * right, 'MPI_Get of the right neighbour')

    ! User keyvals.
    call MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, win_delete, key1, 1000_MPI_ADDRESS_KIND, ierr)
    call check(ierr == MPI_SUCCESS, 'MPI_Win_create_keyval')
    call MPI_Win_create_keyval(MPI_WIN_DUP_FN, MPI_WIN_NULL_DELETE_FN, key2, 0_MPI_ADDRESS_KIND, ierr)
    call MPI_Win_set_attr(win, key1, 42_MPI_ADDRESS_KIND, ierr)
    call check(ierr == MPI_SUCCESS, 'MPI_Win_set_attr')
    call MPI_Win_get_attr(win, key1, aval, flag, ierr)
    call check(flag .and. aval == 42, 'user attribute value')
    call MPI_Win_set_attr(win, key2, 9_MPI_ADDRESS_KIND, ierr)
    call MPI_Win_delete_attr(win, key2, ierr)
    call check(ierr == MPI_SUCCESS, 'MPI_Win_delete_attr')
    call MPI_Win_get_attr(win, key2, aval, flag, ierr)
    call check(ierr == MPI_SUCCESS .and. .not. flag, 'deleted attribute is gone')
    call check(ndelete == 0, 'no delete callback before MPI_Win_free')

    ! Names.
    call MPI_Win_set_name(win, 'my window   ', ierr)
    call MPI_Win_get_name(win, wname, rlen, ierr)
    call check(ierr == MPI_SUCCESS .and. wname == 'my window' .and. rlen == 9, 'window name round trip')

    ! A Fortran window errhandler, then MPI_ERRORS_RETURN and an erroneous call.
    call MPI_Win_create_errhandler(win_handler, eh, ierr)
    call check(ierr == MPI_SUCCESS, 'MPI_Win_create_errhandler')
    call MPI_Win_set_errhandler(win, eh, ierr)
    call MPI_Win_call_errhandler(win, MPI_ERR_OTHER, ierr)
    call check(nhandler == 1 .and. lastcode == MPI_ERR_OTHER, 'Fortran window errhandler called')
    call MPI_Errhandler_free(eh, ierr)
    call MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN, ierr)
    call MPI_Win_fence(0, win, ierr)
    call MPI_Put(src, 1, MPI_INTEGER, nprocs, 0_MPI_ADDRESS_KIND, 1, MPI_INTEGER, win, ierr)
    call check(ierr /= MPI_SUCCESS, 'put to a rank outside the window fails')
    call MPI_Error_class(ierr, cls, i)
    call check(cls == MPI_ERR_RANK, 'error class of a bad target rank')
    call MPI_Win_fence(0, win, ierr)
    call check(nhandler == 1, 'replaced errhandler not called')
    ! Predefined attributes cannot be set or deleted.
    call MPI_Win_set_attr(win, MPI_WIN_SIZE, 1_MPI_ADDRESS_KIND, ierr)
    call MPI_Error_class(ierr, cls, i)
    call check(cls == MPI_ERR_KEYVAL, 'MPI_Win_set_attr of MPI_WIN_SIZE')
    call MPI_Win_delete_attr(win, MPI_WIN_BASE, ierr)
    call MPI_Error_class(ierr, cls, i)
    call check(cls == MPI_ERR_KEYVAL, 'MPI_Win_delete_attr of MPI_WIN_BASE')

    call MPI_Win_free(win, ierr)
    call check(ierr == MPI_SUCCESS .and. win == MPI_WIN_NULL, 'MPI_Win_free')
    call check(ndelete == 1 .and. deleted_val == 1042, 'Fortran delete callback at MPI_Win_free')
    call MPI_Win_free_keyval(key1, ierr)
    call MPI_Win_free_keyval(key2, ierr)
    call check(key1 == MPI_KEYVAL_INVALID, 'MPI_Win_free_keyval')

    call MPI_Finalize(ierr)
    if (rank == 0) print '(a)', 'rma_win: ok'
contains
    include 'mpif_check.inc'
end program rma_win
