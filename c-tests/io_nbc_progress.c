/* oxmpi-test: ranks=2,4 timeout=30 */
/* A nonblocking collective file access must not wait for the other ranks (MPI 4.1 section
   14.4.1): even ranks start MPI_File_iwrite_at_all and then send to the next rank, which receives
   before starting its own; all complete in MPI_Wait. The ranks' pieces interleave (every rank
   writes every size-th int), the case two-phase I/O would serve, so a blocking implementation
   deadlocks here. The data read back collectively must be every rank's. */
#include "oxtest.h"
#include <unistd.h>

#define N 64

int main(int argc, char **argv)
{
    int rank, size;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int pid = getpid();
    MPI_OK(MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD));
    char name[256];
    snprintf(name, sizeof name, "/tmp/oxmpi-io_nbc_progress-%d", pid);
    MPI_File fh;
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));
    MPI_Datatype strided;
    MPI_OK(MPI_Type_vector(N, 1, size, MPI_INT, &strided));
    MPI_Datatype ft;
    MPI_OK(MPI_Type_create_resized(strided, 0, (MPI_Aint)(N * size * sizeof(int)), &ft));
    MPI_OK(MPI_Type_commit(&ft));
    MPI_OK(MPI_File_set_view(fh, rank * sizeof(int), MPI_INT, ft, "native", MPI_INFO_NULL));
    int data[N], token = 7;
    for (int i = 0; i < N; i++)
        data[i] = rank * 1000 + i;
    MPI_Request req;
    if (rank % 2 == 0) {
        MPI_OK(MPI_File_iwrite_at_all(fh, 0, data, N, MPI_INT, &req));
        if (rank + 1 < size)
            MPI_OK(MPI_Send(&token, 1, MPI_INT, rank + 1, 0, MPI_COMM_WORLD));
    } else {
        MPI_OK(MPI_Recv(&token, 1, MPI_INT, rank - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MPI_OK(MPI_File_iwrite_at_all(fh, 0, data, N, MPI_INT, &req));
    }
    MPI_Status st;
    MPI_OK(MPI_Wait(&req, &st));
    int n;
    MPI_OK(MPI_Get_count(&st, MPI_INT, &n));
    CHECK(n == N, "iwrite_at_all wrote %d ints, expected %d", n, N);
    MPI_OK(MPI_File_sync(fh));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_File_sync(fh));
    int back[N];
    MPI_OK(MPI_File_read_at_all(fh, 0, back, N, MPI_INT, MPI_STATUS_IGNORE));
    for (int i = 0; i < N; i++)
        CHECK(back[i] == data[i], "read back [%d] = %d, expected %d", i, back[i], data[i]);
    MPI_OK(MPI_File_close(&fh));
    MPI_OK(MPI_Type_free(&ft));
    MPI_OK(MPI_Type_free(&strided));
    MPI_OK(MPI_Finalize());
    return 0;
}
