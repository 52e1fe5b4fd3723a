/* oxmpi-test: ranks=1,2 */
/* MPI_Comm_set_info / MPI_Comm_get_info and MPI_Comm_dup_with_info: hints set on a communicator
   come back from get_info (as MPICH does for hints it keeps), as a new info object to free. */
#include "oxtest.h"

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_Comm c;
    MPI_Info in, used;
    char v[64];
    int flag, nkeys;
    MPI_OK(MPI_Info_create(&in));
    MPI_OK(MPI_Info_set(in, "mpi_assert_no_any_tag", "true"));
    MPI_OK(MPI_Comm_dup_with_info(MPI_COMM_WORLD, in, &c));
    MPI_OK(MPI_Comm_get_info(c, &used));
    MPI_OK(MPI_Info_get_nkeys(used, &nkeys));
    MPI_OK(MPI_Info_get(used, "mpi_assert_no_any_tag", sizeof v - 1, v, &flag));
    CHECK(flag && strcmp(v, "true") == 0, "dup_with_info hint lost (flag %d, %d keys)", flag, nkeys);
    MPI_OK(MPI_Info_free(&used));
    MPI_OK(MPI_Info_set(in, "mpi_assert_no_any_tag", "false"));
    MPI_OK(MPI_Comm_set_info(c, in));
    MPI_OK(MPI_Comm_get_info(c, &used));
    MPI_OK(MPI_Info_get(used, "mpi_assert_no_any_tag", sizeof v - 1, v, &flag));
    CHECK(flag && strcmp(v, "false") == 0, "set_info hint not returned (flag %d)", flag);
    MPI_OK(MPI_Info_free(&used));
    MPI_OK(MPI_Info_free(&in));
    MPI_OK(MPI_Barrier(c));
    MPI_OK(MPI_Comm_free(&c));
    MPI_Finalize();
    return 0;
}
