/* oxmpi-test: ranks=1,2 mpich=skip */
/* Status of nonblocking and persistent receives from MPI_PROC_NULL: source MPI_PROC_NULL,
   tag MPI_ANY_TAG, count 0 (MPI-4.0 section 3.10). mpich=skip: MPICH 4.0.2 returns
   source 0 / tag 0 here (pmodels/mpich#6805, fixed after 4.0.2 by #6819). */
#include "oxtest.h"

int main(int argc, char **argv)
{
    int r[4] = {-1, -1, -1, -1}, flag;
    MPI_Status st, sts[3];
    MPI_Request req, p[3];
    MPI_OK(MPI_Init(&argc, &argv));

    MPI_OK(MPI_Irecv(r, 4, MPI_INT, MPI_PROC_NULL, 3, MPI_COMM_WORLD, &req));
    flag = 0;
    MPI_OK(MPI_Test(&req, &flag, &st));
    CHECK(flag, "Irecv from MPI_PROC_NULL not complete on the first Test");
    CHECK_STATUS(st, MPI_PROC_NULL, MPI_ANY_TAG, MPI_INT, 0);

    MPI_OK(MPI_Irecv(r, 4, MPI_INT, MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &req));
    MPI_OK(MPI_Wait(&req, &st));
    CHECK_STATUS(st, MPI_PROC_NULL, MPI_ANY_TAG, MPI_INT, 0);

    MPI_Request arr[2];
    MPI_OK(MPI_Irecv(r, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &arr[0]));
    MPI_OK(MPI_Irecv(r, 4, MPI_INT, MPI_PROC_NULL, 2, MPI_COMM_WORLD, &arr[1]));
    MPI_OK(MPI_Waitall(2, arr, sts));
    CHECK_STATUS(sts[0], MPI_PROC_NULL, MPI_ANY_TAG, MPI_INT, 0);
    CHECK_STATUS(sts[1], MPI_PROC_NULL, MPI_ANY_TAG, MPI_INT, 0);

    MPI_OK(MPI_Recv_init(r, 4, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &p[0]));
    MPI_OK(MPI_Recv_init(r, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &p[1]));
    MPI_OK(MPI_Send_init(r, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &p[2]));
    for (int k = 0; k < 3; k++) {
        MPI_OK(MPI_Startall(3, p));
        MPI_OK(MPI_Waitall(3, p, sts));
        CHECK_STATUS(sts[0], MPI_PROC_NULL, MPI_ANY_TAG, MPI_INT, 0);
        CHECK_STATUS(sts[1], MPI_PROC_NULL, MPI_ANY_TAG, MPI_INT, 0);
    }
    for (int k = 0; k < 3; k++)
        MPI_OK(MPI_Request_free(&p[k]));
    CHECK(r[0] == -1, "receive from MPI_PROC_NULL modified the buffer");
    MPI_OK(MPI_Finalize());
    return 0;
}
