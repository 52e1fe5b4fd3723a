/* oxmpi-test: ranks=1,3 mpich=skip */
/* Nonblocking data access converts like the blocking one (MPI 4.1 section 14.5): through an
 * external32 view MPI_File_iwrite_at stores ints big-endian and MPI_File_iread_at turns them back
 * into native ints; a strided memory type is packed and unpacked on the way. Not run on MPICH:
 * ROMIO 4.0.2's nonblocking routines ignore the view's data representation (the file gets native
 * bytes). The file is deleted. */
#include "oxtest.h"
#include <unistd.h>

#define N 1000

int main(int argc, char **argv)
{
    int rank, size;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int pid = getpid();
    MPI_OK(MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD));
    char name[256];
    snprintf(name, sizeof name, "/tmp/oxmpi-io_nonblocking_datarep-%d", pid);
    MPI_File fh;
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));
    MPI_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "external32", MPI_INFO_NULL));
    /* Every other int of `mem` is data (a strided memory type). */
    static int mem[2 * N], back[2 * N];
    for (int i = 0; i < 2 * N; i++)
        mem[i] = (i % 2) ? -1 : 0x01020304 + rank * N + i / 2;
    MPI_Datatype every_other;
    MPI_OK(MPI_Type_vector(N, 1, 2, MPI_INT, &every_other));
    MPI_OK(MPI_Type_commit(&every_other));
    MPI_Request r[2];
    MPI_OK(MPI_File_iwrite_at(fh, (MPI_Offset)rank * N, mem, 1, every_other, &r[0]));
    MPI_OK(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
    MPI_OK(MPI_File_sync(fh));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_File_sync(fh));
    /* The raw bytes, through a native byte view: big-endian. */
    MPI_OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    unsigned char raw[8];
    int peer = (rank + 1) % size;
    MPI_OK(MPI_File_read_at(fh, (MPI_Offset)peer * N * 4 + 4, raw, 8, MPI_BYTE, MPI_STATUS_IGNORE));
    unsigned v1 = 0x01020304u + (unsigned)(peer * N + 1);
    CHECK(raw[0] == (v1 >> 24) && raw[1] == ((v1 >> 16) & 255) && raw[2] == ((v1 >> 8) & 255) && raw[3] == (v1 & 255),
          "int 1 of rank %d in the file: bytes %02x %02x %02x %02x, expected big-endian %08x", peer, raw[0], raw[1], raw[2], raw[3], v1);
    /* And back through the external32 view, into the strided memory type. */
    MPI_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "external32", MPI_INFO_NULL));
    for (int i = 0; i < 2 * N; i++)
        back[i] = -7;
    MPI_Status st;
    MPI_OK(MPI_File_iread_at(fh, (MPI_Offset)peer * N, back, 1, every_other, &r[1]));
    MPI_OK(MPI_Wait(&r[1], &st));
    int n = -1;
    MPI_OK(MPI_Get_elements(&st, MPI_INT, &n));
    CHECK(n == N, "iread_at elements %d, expected %d", n, N);
    for (int i = 0; i < 2 * N; i++)
        CHECK(back[i] == ((i % 2) ? -7 : 0x01020304 + peer * N + i / 2), "back[%d] = %d", i, back[i]);
    MPI_OK(MPI_File_close(&fh));
    MPI_OK(MPI_Type_free(&every_other));
    MPI_OK(MPI_Finalize());
    return 0;
}
