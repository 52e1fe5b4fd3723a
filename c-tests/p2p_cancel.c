/* oxmpi-test: ranks=2,4,8,12 */
/* MPI_Cancel of a posted receive + MPI_Test_cancelled; MPI_Request_free of an active
   send (the data still arrives). */
#include "oxtest.h"

int main(int argc, char **argv)
{
    int rank, size, flag;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int peer = rank ^ 1;

    /* cancel a receive that can never match */
    for (int k = 0; k < 3; k++) {
        MPI_Request req;
        MPI_Status st;
        int v = -1;
        MPI_OK(MPI_Irecv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 4242 + k, MPI_COMM_WORLD, &req));
        MPI_OK(MPI_Cancel(&req));
        if (k == 0) {
            MPI_OK(MPI_Wait(&req, &st));
        } else {
            flag = 0;
            while (!flag)
                MPI_OK(MPI_Test(&req, &flag, &st));
        }
        CHECK(req == MPI_REQUEST_NULL, "cancelled request not freed by completion");
        flag = 0;
        MPI_OK(MPI_Test_cancelled(&st, &flag));
        CHECK(flag, "MPI_Test_cancelled false for a cancelled receive");
        CHECK(v == -1, "cancelled receive wrote the buffer");
    }

    /* a receive that completed normally is not cancelled */
    if (peer < size) {
        int v = rank, w = -1;
        MPI_Request rq[2];
        MPI_Status st[2];
        MPI_OK(MPI_Irecv(&w, 1, MPI_INT, peer, 1, MPI_COMM_WORLD, &rq[0]));
        MPI_OK(MPI_Isend(&v, 1, MPI_INT, peer, 1, MPI_COMM_WORLD, &rq[1]));
        MPI_OK(MPI_Waitall(2, rq, st));
        flag = 1;
        MPI_OK(MPI_Test_cancelled(&st[0], &flag));
        CHECK(!flag, "Test_cancelled true for a completed receive");
        CHECK(w == peer, "exchange got %d", w);
    }

    /* Request_free of an active send: the receiver still gets the data; the sender learns
       of completion through an ack and only then reuses the buffer */
    if (peer < size) {
        int n = 1 << 20;
        unsigned char *b = oxt_malloc((size_t)n);
        if ((rank & 1) == 0) {
            for (int k = 0; k < 2; k++) {
                MPI_Request req;
                int ack = -1;
                oxt_fill(b, (size_t)n, (unsigned)(9 + k));
                MPI_OK(MPI_Isend(b, k ? 16 : n, MPI_BYTE, peer, 10 + k, MPI_COMM_WORLD, &req));
                MPI_OK(MPI_Request_free(&req));
                CHECK(req == MPI_REQUEST_NULL, "Request_free did not set MPI_REQUEST_NULL");
                MPI_OK(MPI_Recv(&ack, 1, MPI_INT, peer, 20 + k, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                CHECK(ack == k, "ack %d", ack);
            }
        } else {
            for (int k = 0; k < 2; k++) {
                MPI_Status st;
                memset(b, 0, (size_t)n);
                MPI_OK(MPI_Recv(b, n, MPI_BYTE, peer, 10 + k, MPI_COMM_WORLD, &st));
                CHECK_STATUS(st, peer, 10 + k, MPI_BYTE, k ? 16 : n);
                long bad = oxt_verify(b, k ? 16u : (size_t)n, (unsigned)(9 + k));
                CHECK(bad < 0, "freed-send message %d: byte %ld wrong", k, bad);
                MPI_OK(MPI_Send(&k, 1, MPI_INT, peer, 20 + k, MPI_COMM_WORLD));
            }
        }
        free(b);
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Finalize());
    return 0;
}
