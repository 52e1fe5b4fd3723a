/* oxmpi-test: ranks=1,2 modes=threads */
/* Threads mode cannot spawn yet: MPI_Comm_spawn fails with MPI_ERR_SPAWN and a message that
   says to use processes mode, at every rank, and the job goes on. MPI_UNIVERSE_SIZE is the
   world size there, MPI_Comm_get_parent MPI_COMM_NULL. */
#include "oxtest.h"
#include <string.h>

int main(int argc, char **argv)
{
    int rank, size, flag, *usize, rc, len;
    char msg[MPI_MAX_ERROR_STRING];
    MPI_Comm parent, inter;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_OK(MPI_Comm_get_parent(&parent));
    CHECK(parent == MPI_COMM_NULL, "no parent");
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &usize, &flag));
    CHECK(flag && *usize == size, "MPI_UNIVERSE_SIZE %d", flag ? *usize : -1);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    rc = MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, MPI_ERRCODES_IGNORE);
    CHECK_CLASS(rc, MPI_ERR_SPAWN);
    MPI_OK(MPI_Error_string(rc, msg, &len));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Finalize());
    if (rank == 0)
        printf("spawn_threads_mode OK\n");
    return 0;
}
