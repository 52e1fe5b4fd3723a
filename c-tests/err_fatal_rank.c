/* oxmpi-test: ranks=1,2,8 expect=fail expect-stderr="rank 0" expect-stderr=MPI_Send expect-stderr=MPI_ERR_RANK mpich=nostderr timeout=30 */
/* Under the default MPI_ERRORS_ARE_FATAL, a send to rank == size on rank 0 ends the whole job (the other
   ranks are blocked in MPI_Recv) with oxmpi's one-line report
   "oxmpi: rank 0: MPI_Send: <reason> [MPI_ERR_RANK]; ending the job". On MPICH (mpich=nostderr) only
   the failure itself is checked, MPICH's message text differs. */
#include "oxtest.h"

static int bad_call(int size)
{
    (void)size;
    int x[16] = {0};
    return MPI_Send(x, 1, MPI_INT, size, 0, MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    return oxtest_fatal_case(argc, argv, bad_call);
}
