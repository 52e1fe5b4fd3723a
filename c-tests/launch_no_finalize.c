/* oxmpi-test: ranks=2,4,8 expect=fail expect-stderr="rank 1" expect-stderr="exited before calling MPI_Finalize" mpich=skip timeout=30 */
/* Launcher: rank 1 returns from main without MPI_Finalize while the others block in
   MPI_Recv; the launcher reports it and ends the job (no hang). */
#include "oxtest.h"

int main(int argc, char **argv)
{
    int rank, x;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    if (rank == 1)
        return 0; /* no MPI_Finalize */
    MPI_Recv(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* never satisfied */
    MPI_Finalize();
    return 0;
}
