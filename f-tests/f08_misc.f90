! oxmpi-test: ranks=1,3 timeout=60 mpich=skip
! More of `use mpi_f08`: MPI_Waitany/MPI_Testall (1-based index), a struct datatype, a distributed
! graph with MPI_UNWEIGHTED, strings (processor name, error string, info), attributes
! (MPI_TAG_UB), MPI_Wtime, MPI_Alloc_mem (TYPE(C_PTR)), MPI_Comm_split_type, groups.
! mpich=skip: MPICH 4.0.2's mpi_f08 MPI_Waitany returns a 0-based index (pmodels/mpich#6270, fixed in
! 4.1); the rest of this test passes on MPICH with that one check adjusted.
program f08_misc
    use mpi_f08
    use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
    implicit none
    integer :: rank, nprocs, idx, n, i, len, indeg, outdeg, srcs(1), dsts(1), ranks2(1)
    integer :: ibuf(2), jbuf(2), grank
    logical :: flag, wgt
    type(MPI_Request) :: reqs(2)
    type(MPI_Status) :: status
    type(MPI_Datatype) :: st
    type(MPI_Comm) :: graph, node
    type(MPI_Info) :: info
    type(MPI_Group) :: world, one
    character(len=MPI_MAX_PROCESSOR_NAME) :: host
    character(len=MPI_MAX_ERROR_STRING) :: msg
    character(len=16) :: val
    integer(kind=MPI_ADDRESS_KIND) :: tagub, disp(2), a0, a1, sz
    double precision :: t0
    type(c_ptr) :: p
    integer, pointer :: mem(:)
    type pair
        integer :: i
        double precision :: d
    end type
    type(pair) :: pin, pout

    call MPI_Init()
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
    t0 = MPI_Wtime()

    ! Waitany: the receive completes first (the send is to self, posted second).
    call MPI_Irecv(jbuf, 2, MPI_INTEGER, rank, 5, MPI_COMM_WORLD, reqs(1))
    ibuf = [rank, -rank]
    call MPI_Isend(ibuf, 2, MPI_INTEGER, rank, 5, MPI_COMM_WORLD, reqs(2))
    call MPI_Waitany(2, reqs, idx, status)
    call check(idx == 1 .or. idx == 2, 'waitany index is 1-based')
    if (idx == 1) call check(status%MPI_SOURCE == rank .and. status%MPI_TAG == 5, 'waitany status')
    flag = .false.
    do while (.not. flag)
        call MPI_Testall(2, reqs, flag, MPI_STATUSES_IGNORE)
    end do
    call check(all(jbuf == [rank, -rank]), 'waitany data')

    ! A struct datatype matching TYPE(pair), displacements from MPI_Get_address.
    call MPI_Get_address(pin%i, a0)
    call MPI_Get_address(pin%d, a1)
    disp = [0_MPI_ADDRESS_KIND, MPI_Aint_diff(a1, a0)]
    call MPI_Type_create_struct(2, [1, 1], disp, [MPI_INTEGER, MPI_DOUBLE_PRECISION], st)
    call MPI_Type_commit(st)
    pin = pair(7 + rank, 2.5d0)
    call MPI_Sendrecv(pin, 1, st, rank, 6, pout, 1, st, rank, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    call check(pout%i == 7 + rank .and. pout%d == 2.5d0, 'struct type')
    call MPI_Type_free(st)

    ! A ring as a distributed graph without weights.
    srcs = modulo(rank - 1, nprocs)
    dsts = modulo(rank + 1, nprocs)
    call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, srcs, MPI_UNWEIGHTED, 1, dsts, MPI_UNWEIGHTED, &
                                        MPI_INFO_NULL, .false., graph)
    call MPI_Dist_graph_neighbors_count(graph, indeg, outdeg, wgt)
    call check(indeg == 1 .and. outdeg == 1 .and. .not. wgt, 'dist graph unweighted')
    call MPI_Neighbor_allgather(rank, 1, MPI_INTEGER, n, 1, MPI_INTEGER, graph)
    call check(n == srcs(1), 'neighbor_allgather')
    call MPI_Comm_free(graph)

    ! Strings.
    call MPI_Get_processor_name(host, len)
    call check(len > 0 .and. len_trim(host) == len, 'processor name')
    call MPI_Error_string(MPI_ERR_TAG, msg, len)
    call check(len > 0 .and. len_trim(msg) == len, 'error string')
    call MPI_Info_create(info)
    call MPI_Info_set(info, 'color', 'blue')
    call MPI_Info_get_valuelen(info, 'color', len, flag)
    call check(flag .and. len == 4, 'info valuelen')
    call MPI_Info_get_nkeys(info, n)
    call check(n == 1, 'info nkeys')
    call MPI_Info_free(info)
    call check(info == MPI_INFO_NULL, 'info_free')
    val = ''

    ! Attributes, MPI_Alloc_mem, groups, split_type.
    call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, tagub, flag)
    call check(flag .and. tagub >= 32767, 'MPI_TAG_UB')
    sz = 64
    call MPI_Alloc_mem(sz, MPI_INFO_NULL, p)
    call c_f_pointer(p, mem, [16])
    mem = [(i, i = 1, 16)]
    call check(sum(mem) == 136, 'alloc_mem')
    call MPI_Free_mem(mem)
    call MPI_Comm_group(MPI_COMM_WORLD, world)
    ranks2 = nprocs - 1
    call MPI_Group_incl(world, 1, ranks2, one)
    call MPI_Group_rank(one, grank)
    if (rank == nprocs - 1) then
        call check(grank == 0, 'group rank')
    else
        call check(grank == MPI_UNDEFINED, 'group rank undefined')
    end if
    call MPI_Group_free(one)
    call MPI_Group_free(world)
    call MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, node)
    call MPI_Comm_size(node, n)
    call check(n >= 1 .and. n <= nprocs, 'split_type')
    call MPI_Comm_free(node)
    call check(MPI_Wtime() >= t0 .and. MPI_Wtick() > 0, 'wtime')

    call MPI_Finalize()
contains
    include 'f08_check.inc'
end program
