/* oxmpi-test: ranks=3 modes=processes mpich=skip env=OXMPI_SURVIVE=1 expect-exit=101 timeout=30 */
/* oxmpi-test: expect-stderr="rank 2 (pid" expect-stderr="[MPIX_ERR_PROC_FAILED]; ending the job" */
/* A job that survives failures (OXMPI_SURVIVE=1) but whose ranks keep the default fatal error
 * handler: rank 2 dies, rank 0's receive from it is a fatal MPIX_ERR_PROC_FAILED error, which
 * ends the job as any fatal error does (exit status = the class). */
#include "oxtest.h"
#include <signal.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, x = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 2)
        raise(SIGKILL);
    /* Rank 0 meets the failure; rank 1 waits for rank 0 until the job ends. */
    MPI_Recv(&x, 1, MPI_INT, rank == 0 ? 2 : 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(0, "rank %d: the receive returned under MPI_ERRORS_ARE_FATAL", rank);
    MPI_Finalize();
    return 0;
}
