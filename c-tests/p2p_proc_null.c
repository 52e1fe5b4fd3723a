/* oxmpi-test: ranks=1,2 */
/* MPI_PROC_NULL as source/destination for every send mode and receive kind: returns at
   once, status source MPI_PROC_NULL, tag MPI_ANY_TAG, count 0, buffer untouched. */
#include "oxtest.h"

int main(int argc, char **argv)
{
    int buf[4] = {1, 2, 3, 4}, r[4] = {-1, -1, -1, -1};
    MPI_Status st;
    MPI_Request req;
    int flag;
    MPI_OK(MPI_Init(&argc, &argv));

    MPI_OK(MPI_Send(buf, 4, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
    MPI_OK(MPI_Ssend(buf, 4, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
    MPI_OK(MPI_Rsend(buf, 4, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
    MPI_OK(MPI_Bsend(buf, 4, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD)); /* no buffer needed */

    MPI_OK(MPI_Recv(r, 4, MPI_INT, MPI_PROC_NULL, 5, MPI_COMM_WORLD, &st));
    CHECK_STATUS(st, MPI_PROC_NULL, MPI_ANY_TAG, MPI_INT, 0);
    CHECK(r[0] == -1, "Recv from MPI_PROC_NULL modified the buffer");
    MPI_OK(MPI_Recv(r, 4, MPI_INT, MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
    CHECK_STATUS(st, MPI_PROC_NULL, MPI_ANY_TAG, MPI_INT, 0);

    MPI_OK(MPI_Isend(buf, 4, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &req));
    MPI_OK(MPI_Wait(&req, &st));
    MPI_OK(MPI_Issend(buf, 4, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &req));
    flag = 0;
    MPI_OK(MPI_Test(&req, &flag, &st));
    CHECK(flag, "Issend to MPI_PROC_NULL not complete on the first Test");
    MPI_OK(MPI_Irsend(buf, 4, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &req));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Ibsend(buf, 4, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &req));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));

    MPI_OK(MPI_Irecv(r, 4, MPI_INT, MPI_PROC_NULL, 3, MPI_COMM_WORLD, &req));
    flag = 0;
    MPI_OK(MPI_Test(&req, &flag, MPI_STATUS_IGNORE));
    CHECK(flag, "Irecv from MPI_PROC_NULL not complete on the first Test");
    CHECK(req == MPI_REQUEST_NULL, "completed request not MPI_REQUEST_NULL");
    CHECK(r[0] == -1, "Irecv from MPI_PROC_NULL modified the buffer");
    /* (the status of nonblocking PROC_NULL receives is checked in p2p_proc_null_nonblocking.c) */

    /* persistent */
    MPI_Request p[2];
    MPI_OK(MPI_Send_init(buf, 4, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &p[0]));
    MPI_OK(MPI_Recv_init(r, 4, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &p[1]));
    for (int k = 0; k < 3; k++) {
        MPI_OK(MPI_Startall(2, p));
        MPI_OK(MPI_Waitall(2, p, MPI_STATUSES_IGNORE));
    }
    MPI_OK(MPI_Request_free(&p[0]));
    MPI_OK(MPI_Request_free(&p[1]));
    CHECK(r[0] == -1, "persistent receive from MPI_PROC_NULL modified the buffer");

    /* Sendrecv with both PROC_NULL */
    MPI_OK(MPI_Sendrecv(buf, 4, MPI_INT, MPI_PROC_NULL, 1, r, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st));
    CHECK_STATUS(st, MPI_PROC_NULL, MPI_ANY_TAG, MPI_INT, 0);

    /* PROC_NULL is valid with a large count too */
    MPI_OK(MPI_Send(buf, 1 << 30, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
    CHECK(r[0] == -1 && buf[0] == 1, "buffers modified");
    MPI_OK(MPI_Finalize());
    return 0;
}
