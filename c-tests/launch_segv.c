/* oxmpi-test: ranks=2,4,8 expect=fail expect-stderr="rank 1" expect-stderr="killed by signal 11" mpich=nostderr timeout=30 */
/* Launcher: rank 1 dies of SIGSEGV while the others block in MPI_Recv; the launcher
   reports "rank 1 ... killed by signal 11" and ends the job (no hang). */
#define _POSIX_C_SOURCE 200809L
#include "oxtest.h"
#include <signal.h>

int main(int argc, char **argv)
{
    int rank, x;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    if (rank == 1) {
        signal(SIGSEGV, SIG_DFL);
        raise(SIGSEGV);
    }
    MPI_Recv(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* never satisfied */
    MPI_Finalize();
    return 0;
}
