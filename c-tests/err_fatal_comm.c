/* oxmpi-test: ranks=1,2,8 expect=fail expect-stderr="rank 0" expect-stderr=MPI_Send expect-stderr=MPI_ERR_COMM mpich=nostderr timeout=30 */
/* Under the default MPI_ERRORS_ARE_FATAL, a send on MPI_COMM_NULL on rank 0 ends the whole job (the other
   ranks are blocked in MPI_Recv) with oxmpi's one-line report
   "oxmpi: rank 0: MPI_Send: <reason> [MPI_ERR_COMM]; ending the job". On MPICH (mpich=nostderr) only
   the failure itself is checked, MPICH's message text differs. */
#include "oxtest.h"

static int bad_call(int size)
{
    (void)size;
    int x[16] = {0};
    return MPI_Send(x, 1, MPI_INT, 0, 0, MPI_COMM_NULL);
}

int main(int argc, char **argv)
{
    return oxtest_fatal_case(argc, argv, bad_call);
}
