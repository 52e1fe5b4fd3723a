/* oxmpi-test: ranks=2,8 expect=fail expect-stderr="rank 0" expect-stderr=MPI_Recv expect-stderr=MPI_ERR_TRUNCATE mpich=nostderr timeout=30 */
/* Under the default MPI_ERRORS_ARE_FATAL, receiving a 100-int message into a 16-int buffer on rank 0 ends the whole job (the other
   ranks are blocked in MPI_Recv) with oxmpi's one-line report
   "oxmpi: rank 0: MPI_Recv: <reason> [MPI_ERR_TRUNCATE]; ending the job". On MPICH (mpich=nostderr) only
   the failure itself is checked, MPICH's message text differs. */
#include "oxtest.h"

int main(int argc, char **argv)
{
    int rank, size, x[16] = {0}, rc;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    (void)x;
    if (rank == 1) {
        int big[100] = {0};
        MPI_OK(MPI_Send(big, 100, MPI_INT, 0, 7, MPI_COMM_WORLD));
    }
    if (rank == 0) {
        rc = MPI_Recv(x, 16, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        /* not reached if the error is fatal: release the others so the job ends with status 0,
           which the runner reports as a failure (expect=fail) */
        fprintf(stderr, "TEST FAILED: erroneous call returned %d instead of ending the job\n", rc);
        for (int r = 1; r < size; r++)
            MPI_Send(&rc, 1, MPI_INT, r, 1, MPI_COMM_WORLD);
    } else {
        MPI_OK(MPI_Recv(&rc, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
    MPI_Finalize();
    return 0;
}
