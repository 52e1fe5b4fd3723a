/* oxmpi-test: ranks=1,2,4,8 */
/* Sending to oneself (nonblocking) on MPI_COMM_WORLD and MPI_COMM_SELF, sizes 0..4 MiB,
   receive posted before or after the send. */
#include "oxtest.h"

static const int sizes[] = {0, 1, 8, 8184, 8192, 65536, 1 << 20, 4 << 20};
#define NS ((int)(sizeof sizes / sizeof sizes[0]))

int main(int argc, char **argv)
{
    int rank;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    unsigned char *sb = oxt_malloc(4 << 20), *rb = oxt_malloc(4 << 20);
    for (int c = 0; c < 2; c++) {
        MPI_Comm comm = c ? MPI_COMM_SELF : MPI_COMM_WORLD;
        int me = c ? 0 : rank;
        for (int i = 0; i < NS; i++) {
            for (int order = 0; order < 2; order++) {
                int n = sizes[i], tag = i * 2 + order;
                MPI_Request rq[2];
                MPI_Status st[2];
                oxt_fill(sb, (size_t)n, (unsigned)(tag + c));
                memset(rb, 0, (size_t)n);
                if (order == 0) {
                    MPI_OK(MPI_Irecv(rb, n, MPI_BYTE, me, tag, comm, &rq[0]));
                    MPI_OK(MPI_Isend(sb, n, MPI_BYTE, me, tag, comm, &rq[1]));
                } else {
                    MPI_OK(MPI_Isend(sb, n, MPI_BYTE, me, tag, comm, &rq[1]));
                    MPI_OK(MPI_Irecv(rb, n, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &rq[0]));
                }
                MPI_OK(MPI_Waitall(2, rq, st));
                CHECK_STATUS(st[0], me, tag, MPI_BYTE, n);
                long bad = oxt_verify(rb, (size_t)n, (unsigned)(tag + c));
                CHECK(bad < 0, "self %s size %d order %d: byte %ld wrong", c ? "SELF" : "WORLD", n, order, bad);
            }
        }
        /* several outstanding self messages, same tag, received in order */
        MPI_Request rq[8];
        int v[4] = {10, 11, 12, 13}, w[4] = {0, 0, 0, 0};
        for (int k = 0; k < 4; k++)
            MPI_OK(MPI_Isend(&v[k], 1, MPI_INT, me, 99, comm, &rq[k]));
        for (int k = 0; k < 4; k++)
            MPI_OK(MPI_Irecv(&w[k], 1, MPI_INT, me, 99, comm, &rq[4 + k]));
        MPI_OK(MPI_Waitall(8, rq, MPI_STATUSES_IGNORE));
        for (int k = 0; k < 4; k++)
            CHECK(w[k] == 10 + k, "self message %d got %d (order)", k, w[k]);
        /* Issend to self completes once the receive is posted */
        int flag = 1;
        MPI_OK(MPI_Issend(&v[0], 1, MPI_INT, me, 98, comm, &rq[0]));
        MPI_OK(MPI_Test(&rq[0], &flag, MPI_STATUS_IGNORE));
        CHECK(!flag, "Issend to self completed before the receive was posted");
        MPI_OK(MPI_Recv(&w[0], 1, MPI_INT, me, 98, comm, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    }
    free(sb);
    free(rb);
    MPI_OK(MPI_Finalize());
    return 0;
}
