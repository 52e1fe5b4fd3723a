/* oxmpi-test: ranks=2,4 expect=fail expect-exit=5 expect-stderr="rank 1" expect-stderr="exited with code 5" mpich=nostderr timeout=30 */
/* A rank that calls exit(5) ends the job with status 5 and a line naming it, in both rank modes
   (in threads mode exit() of one rank must not silently end or hang the others). */
#include "oxtest.h"

int main(int argc, char **argv)
{
    int rank, x;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    if (rank == 1)
        exit(5);
    MPI_Recv(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* never satisfied */
    MPI_Finalize();
    return 0;
}
