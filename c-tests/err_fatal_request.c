/* oxmpi-test: ranks=1,2,8 expect=fail expect-stderr="rank 0" expect-stderr=MPI_Wait expect-stderr=MPI_ERR_REQUEST mpich=nostderr timeout=30 */
/* Under the default MPI_ERRORS_ARE_FATAL, MPI_Wait on a garbage request handle on rank 0 ends the whole job (the other
   ranks are blocked in MPI_Recv) with oxmpi's one-line report
   "oxmpi: rank 0: MPI_Wait: <reason> [MPI_ERR_REQUEST]; ending the job". On MPICH (mpich=nostderr) only
   the failure itself is checked, MPICH's message text differs. */
#include "oxtest.h"

int main(int argc, char **argv)
{
    int rank, size, x[16] = {0}, rc;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    (void)x;
    if (rank == 0) {
        MPI_Request req = (MPI_Request)0x0badbeef;
        rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
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
