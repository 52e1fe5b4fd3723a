/* oxmpi-test: ranks=2,4,8 */
/* MPI_ERR_TRUNCATE under MPI_ERRORS_RETURN: receive buffer smaller than the message, for
   an eager-size and a large message; checked via the return code of MPI_Recv/MPI_Wait
   and via status.MPI_ERROR from MPI_Waitall and MPI_Testsome, which return the error code
   MPI_ERR_IN_STATUS itself (MPI 4.1 section 3.2.5; programs compare with ==). Communication
   works afterwards. */
#include "oxtest.h"

static const int sizes[] = {100, 1 << 20};

int main(int argc, char **argv)
{
    int rank, size;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int peer = rank ^ 1;
    unsigned char *b = oxt_malloc(1 << 20);
    if (peer < size) {
        for (int i = 0; i < 2; i++) {
            int n = sizes[i], small = n / 10;
            if ((rank & 1) == 0) {
                oxt_fill(b, (size_t)n, (unsigned)i);
                /* 1: blocking recv, 2: Irecv+Wait, 3: Waitall, 5: Testsome, 4: ok message afterwards */
                for (int k = 0; k < 3; k++)
                    MPI_OK(MPI_Send(b, n, MPI_BYTE, peer, 10 * i + k, MPI_COMM_WORLD));
                MPI_OK(MPI_Send(b, n, MPI_BYTE, peer, 10 * i + 4, MPI_COMM_WORLD));
                MPI_OK(MPI_Send(b, 8, MPI_BYTE, peer, 10 * i + 3, MPI_COMM_WORLD));
            } else {
                MPI_Status st;
                int rc, cls;
                memset(b, 0, (size_t)n);
                rc = MPI_Recv(b, small, MPI_BYTE, peer, 10 * i, MPI_COMM_WORLD, &st);
                CHECK(rc != MPI_SUCCESS, "size %d into %d: MPI_Recv returned MPI_SUCCESS", n, small);
                MPI_OK(MPI_Error_class(rc, &cls));
                CHECK(cls == MPI_ERR_TRUNCATE, "size %d into %d: MPI_Recv error class %d, expected MPI_ERR_TRUNCATE",
                      n, small, cls);
                CHECK(st.MPI_SOURCE == peer && st.MPI_TAG == 10 * i, "truncated recv status src %d tag %d",
                      st.MPI_SOURCE, st.MPI_TAG);

                MPI_Request req;
                MPI_OK(MPI_Irecv(b, small, MPI_BYTE, peer, 10 * i + 1, MPI_COMM_WORLD, &req));
                rc = MPI_Wait(&req, &st);
                MPI_OK(MPI_Error_class(rc, &cls));
                CHECK(cls == MPI_ERR_TRUNCATE, "size %d: MPI_Wait error class %d, expected MPI_ERR_TRUNCATE", n, cls);
                CHECK(req == MPI_REQUEST_NULL, "request not freed after a truncated Wait");

                MPI_Request rq[2];
                MPI_Status sts[2];
                int okv = -1;
                MPI_OK(MPI_Irecv(b, small, MPI_BYTE, peer, 10 * i + 2, MPI_COMM_WORLD, &rq[0]));
                MPI_OK(MPI_Irecv(&okv, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &rq[1]));
                sts[0].MPI_ERROR = sts[1].MPI_ERROR = -12345;
                rc = MPI_Waitall(2, rq, sts);
                CHECK(rc == MPI_ERR_IN_STATUS, "size %d: Waitall returned %d, expected MPI_ERR_IN_STATUS", n, rc);
                MPI_OK(MPI_Error_class(sts[0].MPI_ERROR, &cls));
                CHECK(cls == MPI_ERR_TRUNCATE, "size %d: status.MPI_ERROR class %d, expected MPI_ERR_TRUNCATE", n,
                      cls);
                /* the other request either completed (MPI_SUCCESS) or was not completed
                   (MPI_ERR_PENDING, request still active); both are allowed */
                if (sts[1].MPI_ERROR == MPI_ERR_PENDING) {
                    CHECK(rq[1] != MPI_REQUEST_NULL, "MPI_ERR_PENDING request was freed");
                    MPI_OK(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
                } else {
                    CHECK(sts[1].MPI_ERROR == MPI_SUCCESS, "size %d: the other status has MPI_ERROR %d", n,
                          sts[1].MPI_ERROR);
                    CHECK(rq[1] == MPI_REQUEST_NULL, "completed request not freed by Waitall");
                }
                CHECK(rq[0] == MPI_REQUEST_NULL, "failed request not freed by Waitall");

                int out = 0, idx = -1;
                MPI_OK(MPI_Irecv(b, small, MPI_BYTE, peer, 10 * i + 4, MPI_COMM_WORLD, &rq[0]));
                do {
                    rc = MPI_Testsome(1, rq, &out, &idx, sts);
                } while (rc == MPI_SUCCESS && out == 0);
                CHECK(rc == MPI_ERR_IN_STATUS, "size %d: Testsome returned %d, expected MPI_ERR_IN_STATUS", n, rc);
                CHECK(out == 1 && idx == 0, "size %d: Testsome outcount %d index %d", n, out, idx);
                MPI_OK(MPI_Error_class(sts[0].MPI_ERROR, &cls));
                CHECK(cls == MPI_ERR_TRUNCATE, "size %d: Testsome status class %d, expected MPI_ERR_TRUNCATE", n, cls);
                CHECK(rq[0] == MPI_REQUEST_NULL, "failed request not freed by Testsome");

                /* later messages are fine */
                MPI_OK(MPI_Recv(b, 8, MPI_BYTE, peer, 10 * i + 3, MPI_COMM_WORLD, &st));
                CHECK(oxt_verify(b, 8, (unsigned)i) < 0, "message after truncation corrupted");
            }
        }
    }
    free(b);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Finalize());
    return 0;
}
