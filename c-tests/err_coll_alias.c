/* oxmpi-test: ranks=1,2,4 */
/* Aliased arguments of rooted collectives (MPI 4.1 section 2.6.2): at the root, a send buffer
   that overlaps its own block of the receive buffer (gather) or a receive buffer that overlaps its
   own block of the send buffer (scatter), without MPI_IN_PLACE, is MPI_ERR_BUFFER, found before
   any message moves (so only the root calls here). MPI_IN_PLACE and disjoint buffers work. */
#include "oxtest.h"

int main(int argc, char **argv)
{
    int rank, size, buf[64], out[64];
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    for (int i = 0; i < 64; i++)
        buf[i] = rank;
    if (rank == 0) {
        CHECK_CLASS(MPI_Gather(&buf[0], 1, MPI_INT, buf, 1, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
        CHECK_CLASS(MPI_Scatter(buf, 1, MPI_INT, &buf[0], 1, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    /* the valid forms still work */
    MPI_OK(MPI_Gather(rank == 0 ? MPI_IN_PLACE : &buf[0], 1, MPI_INT, out, 1, MPI_INT, 0, MPI_COMM_WORLD));
    MPI_OK(MPI_Gather(&buf[0], 1, MPI_INT, out, 1, MPI_INT, 0, MPI_COMM_WORLD));
    for (int i = 0; rank == 0 && i < size; i++)
        CHECK(out[i] == i, "gather: out[%d] = %d", i, out[i]);
    MPI_OK(MPI_Scatter(out, 1, MPI_INT, rank == 0 ? MPI_IN_PLACE : &buf[1], 1, MPI_INT, 0, MPI_COMM_WORLD));
    CHECK(rank == 0 || buf[1] == rank, "scatter: %d", buf[1]);
    MPI_OK(MPI_Finalize());
    return 0;
}
