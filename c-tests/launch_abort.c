/* oxmpi-test: ranks=2,4,8 expect-exit=7 timeout=30 */
/* Launcher: MPI_Abort(MPI_COMM_WORLD, 7) on rank 1 while the others block in MPI_Recv
   ends the job and mpiexec exits with status 7. */
#include "oxtest.h"

int main(int argc, char **argv)
{
    int rank, x;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    if (rank == 1)
        MPI_Abort(MPI_COMM_WORLD, 7);
    MPI_Recv(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* never satisfied */
    MPI_Finalize();
    return 0;
}
