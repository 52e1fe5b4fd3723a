/* oxmpi-test: ranks=2,4,8 */
/* Blocking MPI_Send/MPI_Recv between pairs (r, r^1) with sizes from 0 B to 4 MiB,
   both directions, data pattern and status verified. */
#include "oxtest.h"

static const int sizes[] = {0, 1, 8, 8184, 8192, 8193, 8256, 8257, 65536, 1 << 20, 4 << 20};
#define NS ((int)(sizeof sizes / sizeof sizes[0]))

int main(int argc, char **argv)
{
    int rank, size;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int peer = rank ^ 1;
    if (peer < size) {
        unsigned char *sbuf = oxt_malloc(4 << 20), *rbuf = oxt_malloc((4 << 20) + 16);
        for (int i = 0; i < NS; i++) {
            int n = sizes[i];
            oxt_fill(sbuf, (size_t)n, (unsigned)(rank * 100 + i));
            memset(rbuf, 0xA5, (size_t)n + 16);
            MPI_Status st;
            for (int phase = 0; phase < 2; phase++) {
                if ((rank & 1) == phase) {
                    MPI_OK(MPI_Send(sbuf, n, MPI_BYTE, peer, i, MPI_COMM_WORLD));
                } else {
                    MPI_OK(MPI_Recv(rbuf, n + 16, MPI_BYTE, peer, i, MPI_COMM_WORLD, &st));
                    CHECK_STATUS(st, peer, i, MPI_BYTE, n);
                    long bad = oxt_verify(rbuf, (size_t)n, (unsigned)(peer * 100 + i));
                    CHECK(bad < 0, "size %d: byte %ld wrong", n, bad);
                    CHECK(rbuf[n] == 0xA5, "size %d: wrote past the message end", n);
                }
            }
        }
        /* the same with MPI_INT and MPI_DOUBLE element types */
        int ni = 300000;
        int *ib = (int *)sbuf;
        for (int j = 0; j < ni; j++)
            ib[j] = j * 3 + rank;
        MPI_Status st;
        if (rank & 1) {
            MPI_OK(MPI_Recv(rbuf, ni, MPI_INT, peer, 77, MPI_COMM_WORLD, &st));
            MPI_OK(MPI_Send(ib, ni, MPI_INT, peer, 77, MPI_COMM_WORLD));
        } else {
            MPI_OK(MPI_Send(ib, ni, MPI_INT, peer, 77, MPI_COMM_WORLD));
            MPI_OK(MPI_Recv(rbuf, ni, MPI_INT, peer, 77, MPI_COMM_WORLD, &st));
        }
        CHECK_STATUS(st, peer, 77, MPI_INT, ni);
        for (int j = 0; j < ni; j++)
            CHECK(((int *)rbuf)[j] == j * 3 + peer, "MPI_INT element %d wrong", j);
        double d[5] = {1.5, -2.25, 3e100, 0.0, -0.0}, e[5];
        if (rank & 1) {
            MPI_OK(MPI_Recv(e, 5, MPI_DOUBLE, peer, 78, MPI_COMM_WORLD, &st));
            MPI_OK(MPI_Send(d, 5, MPI_DOUBLE, peer, 78, MPI_COMM_WORLD));
        } else {
            MPI_OK(MPI_Send(d, 5, MPI_DOUBLE, peer, 78, MPI_COMM_WORLD));
            MPI_OK(MPI_Recv(e, 5, MPI_DOUBLE, peer, 78, MPI_COMM_WORLD, &st));
        }
        CHECK(memcmp(d, e, sizeof d) == 0, "MPI_DOUBLE payload differs");
        free(sbuf);
        free(rbuf);
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Finalize());
    return 0;
}
