/* oxmpi-test: ranks=1,2,4 */
/* MPI_Comm_split_type with the MPI-4 hardware types (MPI 4.1 section 7.4.2):
   HW_GUIDED without the mpi_hw_resource_type key, with an unknown resource or with an unrelated key
   gives MPI_COMM_NULL; with "mpi_shared_memory" the node (here every rank) and the info left as it
   was; ranks passing MPI_UNDEFINED next to guided ones get MPI_COMM_NULL; HW_UNGUIDED gives either
   MPI_COMM_NULL or a strict subset with the resource type reported in the info, down to the end. */
#include "oxtest.h"

int main(int argc, char **argv)
{
    int rank, size, n, flag;
    char val[MPI_MAX_INFO_VAL + 1];
    MPI_Comm c;
    MPI_Info info;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));

    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, MPI_INFO_NULL, &c));
    CHECK(c == MPI_COMM_NULL, "HW_GUIDED with MPI_INFO_NULL gave a communicator");
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, info, &c));
    CHECK(c == MPI_COMM_NULL, "HW_GUIDED with an empty info gave a communicator");
    MPI_OK(MPI_Info_set(info, "foo", "bar"));
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, info, &c));
    CHECK(c == MPI_COMM_NULL, "HW_GUIDED with an unrelated key gave a communicator");
    MPI_OK(MPI_Info_set(info, "mpi_hw_resource_type", "@no-such-resource@"));
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, info, &c));
    CHECK(c == MPI_COMM_NULL, "HW_GUIDED with an unknown resource gave a communicator");

    MPI_OK(MPI_Info_set(info, "mpi_hw_resource_type", "mpi_shared_memory"));
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, -rank, info, &c));
    CHECK(c != MPI_COMM_NULL, "HW_GUIDED mpi_shared_memory gave MPI_COMM_NULL");
    MPI_OK(MPI_Comm_size(c, &n));
    CHECK(n == size, "HW_GUIDED mpi_shared_memory: %d ranks, expected the node's %d", n, size);
    MPI_OK(MPI_Comm_rank(c, &n));
    CHECK(n == size - 1 - rank, "HW_GUIDED keys not honoured: rank %d", n);
    MPI_OK(MPI_Comm_free(&c));
    MPI_OK(MPI_Info_get(info, "mpi_hw_resource_type", MPI_MAX_INFO_VAL, val, &flag));
    CHECK(flag && strcmp(val, "mpi_shared_memory") == 0, "HW_GUIDED changed the info: '%s'", val);

    /* one guided rank at a time, the others MPI_UNDEFINED */
    for (int root = 0; root < size; root++) {
        MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, rank == root ? MPI_COMM_TYPE_HW_GUIDED : MPI_UNDEFINED, 0, info, &c));
        if (rank == root) {
            CHECK(c != MPI_COMM_NULL, "the guided rank got MPI_COMM_NULL");
            MPI_OK(MPI_Comm_size(c, &n));
            CHECK(n == 1, "guided rank alone: size %d", n);
            MPI_OK(MPI_Comm_free(&c));
        } else {
            CHECK(c == MPI_COMM_NULL, "an MPI_UNDEFINED rank got a communicator");
        }
    }
    MPI_OK(MPI_Info_free(&info));

    /* unguided: each step a strict subset naming its resource, until MPI_COMM_NULL */
    MPI_Comm cur = MPI_COMM_WORLD;
    for (int depth = 0; depth < 8; depth++) {
        int cur_size, r;
        MPI_OK(MPI_Comm_size(cur, &cur_size));
        MPI_OK(MPI_Comm_rank(cur, &r));
        MPI_OK(MPI_Info_create(&info));
        MPI_OK(MPI_Comm_split_type(cur, MPI_COMM_TYPE_HW_UNGUIDED, r, info, &c));
        if (c != MPI_COMM_NULL) {
            MPI_OK(MPI_Comm_size(c, &n));
            CHECK(n < cur_size, "HW_UNGUIDED gave %d ranks of %d: not a strict subset", n, cur_size);
            MPI_OK(MPI_Info_get(info, "mpi_hw_resource_type", MPI_MAX_INFO_VAL, val, &flag));
            CHECK(flag && val[0], "HW_UNGUIDED did not name the resource type");
        }
        MPI_OK(MPI_Info_free(&info));
        if (cur != MPI_COMM_WORLD)
            MPI_OK(MPI_Comm_free(&cur));
        if (c == MPI_COMM_NULL)
            break;
        cur = c;
    }
    MPI_Finalize();
    return 0;
}
