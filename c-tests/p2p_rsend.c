/* oxmpi-test: ranks=2,4,8 */
/* Ready mode: MPI_Rsend / MPI_Irsend with the receive pre-posted before a barrier. */
#include "oxtest.h"

static const int sizes[] = {0, 1, 8192, 65536, 1 << 20};
#define NS ((int)(sizeof sizes / sizeof sizes[0]))

int main(int argc, char **argv)
{
    int rank, size;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int peer = rank ^ 1;
    int active = peer < size;
    unsigned char *buf = oxt_malloc(1 << 20);

    for (int i = 0; i < NS; i++) {
        for (int imm = 0; imm < 2; imm++) {
            int n = sizes[i], tag = 10 * i + imm;
            if (active && (rank & 1) == 1) {
                MPI_Request req;
                MPI_Status st;
                memset(buf, 0, (size_t)n);
                MPI_OK(MPI_Irecv(buf, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &req));
                MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
                MPI_OK(MPI_Wait(&req, &st));
                CHECK_STATUS(st, peer, tag, MPI_BYTE, n);
                long bad = oxt_verify(buf, (size_t)n, (unsigned)tag);
                CHECK(bad < 0, "size %d (%s): byte %ld wrong", n, imm ? "Irsend" : "Rsend", bad);
            } else {
                MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
                if (active) {
                    oxt_fill(buf, (size_t)n, (unsigned)tag);
                    if (imm) {
                        MPI_Request req;
                        MPI_OK(MPI_Irsend(buf, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &req));
                        MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
                    } else {
                        MPI_OK(MPI_Rsend(buf, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD));
                    }
                }
            }
        }
    }
    free(buf);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Finalize());
    return 0;
}
