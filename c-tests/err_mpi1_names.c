/* oxmpi-test: ranks=1,2 */
/* The MPI-1 names MPI_Errhandler_create/set/get (deprecated, still in MPICH's ABI) behave like the
   MPI_Comm_* ones: the user handler is called with the communicator and the error code. */
#include "oxtest.h"

static int calls, last_class;

static void handler(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    calls++;
    MPI_Error_class(*code, &last_class);
}

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_Errhandler eh, got;
    MPI_OK(MPI_Errhandler_create(handler, &eh));
    MPI_OK(MPI_Errhandler_set(MPI_COMM_WORLD, eh));
    MPI_OK(MPI_Errhandler_get(MPI_COMM_WORLD, &got));
    CHECK(got == eh, "Errhandler_get returned another handler");
    int x = 0;
    MPI_Send(&x, 1, MPI_INT, 0, -3, MPI_COMM_WORLD); /* invalid tag */
    CHECK(calls == 1 && last_class == MPI_ERR_TAG, "handler calls %d, class %d", calls, last_class);
    MPI_OK(MPI_Errhandler_set(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    MPI_OK(MPI_Errhandler_free(&eh));
    MPI_OK(MPI_Errhandler_free(&got));
    MPI_Finalize();
    return 0;
}
