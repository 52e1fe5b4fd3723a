/* oxmpi-test: ranks=1,2,4,8 */
/* MPI_Init / MPI_Finalize / MPI_Initialized / MPI_Finalized state transitions. */
#include "oxtest.h"

int main(int argc, char **argv)
{
    int flag = -1;
    MPI_OK(MPI_Initialized(&flag));
    CHECK(flag == 0, "MPI_Initialized before MPI_Init gave %d", flag);
    flag = -1;
    MPI_OK(MPI_Finalized(&flag));
    CHECK(flag == 0, "MPI_Finalized before MPI_Init gave %d", flag);

    MPI_OK(MPI_Init(&argc, &argv));
    flag = -1;
    MPI_OK(MPI_Initialized(&flag));
    CHECK(flag == 1, "MPI_Initialized after MPI_Init gave %d", flag);
    flag = -1;
    MPI_OK(MPI_Finalized(&flag));
    CHECK(flag == 0, "MPI_Finalized after MPI_Init gave %d", flag);

    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Finalize());

    flag = -1;
    MPI_Finalized(&flag);
    CHECK(flag == 1, "MPI_Finalized after MPI_Finalize gave %d", flag);
    flag = -1;
    MPI_Initialized(&flag);
    CHECK(flag == 1, "MPI_Initialized after MPI_Finalize gave %d (must stay true)", flag);
    return 0;
}
