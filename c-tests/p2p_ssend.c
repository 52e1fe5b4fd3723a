/* oxmpi-test: ranks=2,4,8 */
/* Synchronous mode: an MPI_Issend is not complete (MPI_Test false) while the receiver
   has not posted its receive; the receiver posts only after a barrier that the sender
   enters after the Test. Also blocking MPI_Ssend both directions, small and large. */
#include "oxtest.h"

static const int sizes[] = {0, 4, 8192, 1 << 20};
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
        int n = sizes[i];
        if (active && (rank & 1) == 0) {
            MPI_Request req;
            int flag = -1;
            oxt_fill(buf, (size_t)n, (unsigned)i);
            MPI_OK(MPI_Issend(buf, n, MPI_BYTE, peer, i, MPI_COMM_WORLD, &req));
            for (int k = 0; k < 50; k++) {
                MPI_OK(MPI_Test(&req, &flag, MPI_STATUS_IGNORE));
                CHECK(!flag, "size %d: Issend completed before the receiver posted its receive", n);
            }
            MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
            MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
            CHECK(req == MPI_REQUEST_NULL, "request not MPI_REQUEST_NULL after Wait");
        } else {
            MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
            if (active) {
                MPI_Status st;
                memset(buf, 0, (size_t)n);
                MPI_OK(MPI_Recv(buf, n, MPI_BYTE, peer, i, MPI_COMM_WORLD, &st));
                CHECK_STATUS(st, peer, i, MPI_BYTE, n);
                long bad = oxt_verify(buf, (size_t)n, (unsigned)i);
                CHECK(bad < 0, "size %d byte %ld wrong", n, bad);
            }
        }
    }

    /* blocking Ssend ping-pong */
    if (active) {
        for (int i = 0; i < NS; i++) {
            int n = sizes[i];
            MPI_Status st;
            for (int phase = 0; phase < 2; phase++) {
                if ((rank & 1) == phase) {
                    oxt_fill(buf, (size_t)n, (unsigned)(rank + 10 * i));
                    MPI_OK(MPI_Ssend(buf, n, MPI_BYTE, peer, 100 + i, MPI_COMM_WORLD));
                } else {
                    MPI_OK(MPI_Recv(buf, n, MPI_BYTE, peer, 100 + i, MPI_COMM_WORLD, &st));
                    CHECK_STATUS(st, peer, 100 + i, MPI_BYTE, n);
                    long bad = oxt_verify(buf, (size_t)n, (unsigned)(peer + 10 * i));
                    CHECK(bad < 0, "Ssend size %d byte %ld wrong", n, bad);
                }
            }
        }
        /* Issend to a receiver that already posted an Irecv completes */
        int v = rank, w = -1;
        MPI_Request rq[2];
        MPI_OK(MPI_Irecv(&w, 1, MPI_INT, peer, 200, MPI_COMM_WORLD, &rq[0]));
        MPI_OK(MPI_Issend(&v, 1, MPI_INT, peer, 200, MPI_COMM_WORLD, &rq[1]));
        MPI_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
        CHECK(w == peer, "Issend/Irecv exchange got %d", w);
    }
    free(buf);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Finalize());
    return 0;
}
