/* oxmpi-test: ranks=1,2,8 expect=fail expect-stderr="rank 0" expect-stderr=MPI_Wait expect-stderr=MPI_ERR_REQUEST mpich=nostderr timeout=30 */
/* Under the default MPI_ERRORS_ARE_FATAL, MPI_Wait on a garbage request handle on rank 0 ends the whole job (the other
   ranks are blocked in MPI_Recv) with oxmpi's one-line report
   "oxmpi: rank 0: MPI_Wait: <reason> [MPI_ERR_REQUEST]; ending the job". On MPICH (mpich=nostderr) only
   the failure itself is checked, MPICH's message text differs. */
#include "oxtest.h"

static int bad_call(int size)
{
    (void)size;
    MPI_Request req = (MPI_Request)0x0badbeef;
    return MPI_Wait(&req, MPI_STATUS_IGNORE);
}

int main(int argc, char **argv)
{
    return oxtest_fatal_case(argc, argv, bad_call);
}
