/* oxmpi-test: ranks=1,2,4 */
/* MPI_Init from an ELF constructor, before main (what gfortran coarray programs do): in threads
   mode each rank's constructors run on its own thread, in its context, so the constructor
   initialises that rank and main finds MPI initialised. */
#include "oxtest.h"

static int init_rc = -1;

__attribute__((constructor)) static void start_mpi(void)
{
    init_rc = MPI_Init(NULL, NULL);
}

int main(void)
{
    int flag = 0, rank, size, sum = 0;
    CHECK(init_rc == MPI_SUCCESS, "MPI_Init in the constructor returned %d", init_rc);
    MPI_OK(MPI_Initialized(&flag));
    CHECK(flag == 1, "MPI is not initialised in main");
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum == size * (size - 1) / 2, "allreduce gave %d", sum);
    MPI_OK(MPI_Finalize());
    return 0;
}
