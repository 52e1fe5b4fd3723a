/* oxmpi-test: ranks=1,2,4 mpich=skip */
/* MPI 4.1's MPI_Comm_split_type with MPI_COMM_TYPE_RESOURCE_GUIDED (MPI 4.1 section 7.4.2): split by the
   resource named by the mpi_hw_resource_type info key, as HW_GUIDED: no key or an unknown resource
   gives MPI_COMM_NULL; "mpi_shared_memory" gives the node (here every rank); a resource type that
   MPI_Get_hw_resource_info reports gives a communicator holding this rank, whose members all
   agree on its size. mpich=skip: MPICH 4.0.2 has no RESOURCE_GUIDED. */
#include "oxtest.h"

int main(int argc, char **argv)
{
    int rank, size, n, nkeys, flag;
    char key[MPI_MAX_INFO_KEY + 1];
    MPI_Comm c;
    MPI_Info info, hw;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(MPI_COMM_TYPE_RESOURCE_GUIDED != MPI_COMM_TYPE_SHARED && MPI_COMM_TYPE_RESOURCE_GUIDED != MPI_COMM_TYPE_HW_GUIDED &&
              MPI_COMM_TYPE_RESOURCE_GUIDED != MPI_COMM_TYPE_HW_UNGUIDED,
          "MPI_COMM_TYPE_RESOURCE_GUIDED (%d) equals another split type", MPI_COMM_TYPE_RESOURCE_GUIDED);

    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_RESOURCE_GUIDED, 0, MPI_INFO_NULL, &c));
    CHECK(c == MPI_COMM_NULL, "RESOURCE_GUIDED with MPI_INFO_NULL gave a communicator");
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "mpi_hw_resource_type", "@no-such-resource@"));
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_RESOURCE_GUIDED, 0, info, &c));
    CHECK(c == MPI_COMM_NULL, "RESOURCE_GUIDED with an unknown resource gave a communicator");

    MPI_OK(MPI_Info_set(info, "mpi_hw_resource_type", "mpi_shared_memory"));
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_RESOURCE_GUIDED, -rank, info, &c));
    CHECK(c != MPI_COMM_NULL, "RESOURCE_GUIDED mpi_shared_memory gave MPI_COMM_NULL");
    MPI_OK(MPI_Comm_size(c, &n));
    CHECK(n == size, "RESOURCE_GUIDED mpi_shared_memory: %d ranks, expected the node's %d", n, size);
    MPI_OK(MPI_Comm_rank(c, &n));
    CHECK(n == size - 1 - rank, "RESOURCE_GUIDED keys not honoured: rank %d", n);
    MPI_OK(MPI_Comm_free(&c));

    /* Every resource type the library reports splits MPI_COMM_WORLD into groups holding the caller. */
    MPI_OK(MPI_Get_hw_resource_info(&hw));
    MPI_OK(MPI_Info_get_nkeys(hw, &nkeys));
    for (int k = 0; k < nkeys; k++) {
        MPI_OK(MPI_Info_get_nthkey(hw, k, key));
        MPI_OK(MPI_Info_set(info, "mpi_hw_resource_type", key));
        MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_RESOURCE_GUIDED, rank, info, &c));
        /* A rank whose binding spans several instances of the resource gets MPI_COMM_NULL. */
        flag = c != MPI_COMM_NULL;
        if (flag) {
            int mine, least, most;
            MPI_OK(MPI_Comm_size(c, &mine));
            MPI_OK(MPI_Allreduce(&mine, &least, 1, MPI_INT, MPI_MIN, c));
            MPI_OK(MPI_Allreduce(&mine, &most, 1, MPI_INT, MPI_MAX, c));
            CHECK(least == mine && most == mine && mine <= size, "%s: members disagree on the size (%d..%d)", key, least, most);
            MPI_OK(MPI_Comm_free(&c));
        }
    }
    MPI_OK(MPI_Info_free(&hw));
    MPI_OK(MPI_Info_free(&info));
    MPI_Finalize();
    return 0;
}
