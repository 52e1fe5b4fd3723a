/* oxmpi-test: ranks=1,2,4 */
/* Bad arguments under MPI_ERRORS_RETURN: each erroneous call returns (no crash, no hang)
   an error of the right class. MPI_ERRORS_RETURN is set on MPI_COMM_WORLD and
   MPI_COMM_SELF, because errors on an invalid communicator are raised on
   MPI_COMM_WORLD's handler (MPICH, and the MPI-4 rule for calls without a valid handle). */
#include "oxtest.h"

#define GARBAGE_TYPE ((MPI_Datatype)0x0badbeef)
#define GARBAGE_COMM ((MPI_Comm)0x0badc0de)
#define GARBAGE_REQ ((MPI_Request)0x0badbeef)

int main(int argc, char **argv)
{
    int rank, size, x = 1, flag, *tag_ub;
    MPI_Status st;
    MPI_Request req;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag));
    CHECK(flag && *tag_ub >= 32767, "MPI_TAG_UB attribute: flag %d value %d", flag, flag ? *tag_ub : 0);

    /* invalid rank */
    CHECK_CLASS(MPI_Send(&x, 1, MPI_INT, size, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Send(&x, 1, MPI_INT, -5, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Send(&x, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Recv(&x, 1, MPI_INT, size + 1, 0, MPI_COMM_WORLD, &st), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Isend(&x, 1, MPI_INT, size, 0, MPI_COMM_WORLD, &req), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Irecv(&x, 1, MPI_INT, -7, 0, MPI_COMM_WORLD, &req), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Send(&x, 1, MPI_INT, 1, 0, MPI_COMM_SELF), MPI_ERR_RANK);

    /* invalid tag */
    CHECK_CLASS(MPI_Send(&x, 1, MPI_INT, rank, -1, MPI_COMM_WORLD), MPI_ERR_TAG); /* MPI_ANY_TAG on a send */
    CHECK_CLASS(MPI_Send(&x, 1, MPI_INT, rank, -5, MPI_COMM_WORLD), MPI_ERR_TAG);
    if (*tag_ub < 0x7fffffff)
        CHECK_CLASS(MPI_Send(&x, 1, MPI_INT, rank, *tag_ub + 1, MPI_COMM_WORLD), MPI_ERR_TAG);
    CHECK_CLASS(MPI_Recv(&x, 1, MPI_INT, rank, -5, MPI_COMM_WORLD, &st), MPI_ERR_TAG);
    CHECK_CLASS(MPI_Isend(&x, 1, MPI_INT, rank, -3, MPI_COMM_WORLD, &req), MPI_ERR_TAG);

    /* negative count */
    CHECK_CLASS(MPI_Send(&x, -1, MPI_INT, rank, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Recv(&x, -1, MPI_INT, rank, 0, MPI_COMM_WORLD, &st), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Isend(&x, -2, MPI_INT, rank, 0, MPI_COMM_WORLD, &req), MPI_ERR_COUNT);

    /* invalid datatype */
    CHECK_CLASS(MPI_Send(&x, 1, MPI_DATATYPE_NULL, rank, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Send(&x, 1, GARBAGE_TYPE, rank, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Recv(&x, 1, MPI_DATATYPE_NULL, rank, 0, MPI_COMM_WORLD, &st), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Irecv(&x, 1, GARBAGE_TYPE, rank, 0, MPI_COMM_WORLD, &req), MPI_ERR_TYPE);

    /* invalid communicator */
    CHECK_CLASS(MPI_Send(&x, 1, MPI_INT, 0, 0, MPI_COMM_NULL), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Send(&x, 1, MPI_INT, 0, 0, GARBAGE_COMM), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Recv(&x, 1, MPI_INT, 0, 0, MPI_COMM_NULL, &st), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Isend(&x, 1, MPI_INT, 0, 0, GARBAGE_COMM, &req), MPI_ERR_COMM);
    {
        int r = -1;
        CHECK_CLASS(MPI_Comm_rank(MPI_COMM_NULL, &r), MPI_ERR_COMM);
        CHECK_CLASS(MPI_Comm_size(GARBAGE_COMM, &r), MPI_ERR_COMM);
    }

    /* NULL buffer with count > 0 */
    CHECK_CLASS(MPI_Send(NULL, 4, MPI_INT, rank, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Recv(NULL, 4, MPI_INT, rank, 0, MPI_COMM_WORLD, &st), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Isend(NULL, 1, MPI_BYTE, rank, 0, MPI_COMM_WORLD, &req), MPI_ERR_BUFFER);
    /* ...but NULL with count 0 is fine */
    MPI_OK(MPI_Sendrecv(NULL, 0, MPI_INT, rank, 0, NULL, 0, MPI_INT, rank, 0, MPI_COMM_WORLD, &st));

    /* invalid request */
    req = GARBAGE_REQ;
    CHECK_CLASS(MPI_Wait(&req, &st), MPI_ERR_REQUEST);
    req = GARBAGE_REQ;
    CHECK_CLASS(MPI_Test(&req, &flag, &st), MPI_ERR_REQUEST);

    /* truncation (to oneself, receive pre-posted) */
    {
        int big[10] = {0}, small[2];
        MPI_Request rq;
        MPI_OK(MPI_Irecv(small, 2, MPI_INT, rank, 3, MPI_COMM_WORLD, &rq));
        MPI_OK(MPI_Send(big, 10, MPI_INT, rank, 3, MPI_COMM_WORLD));
        CHECK_CLASS(MPI_Wait(&rq, &st), MPI_ERR_TRUNCATE);
    }

    /* error codes have printable strings */
    {
        char s[MPI_MAX_ERROR_STRING];
        int len = 0, rc = MPI_Send(&x, 1, MPI_INT, size, 0, MPI_COMM_WORLD);
        MPI_OK(MPI_Error_string(rc, s, &len));
        CHECK(len > 0 && (int)strlen(s) == len, "error string of an MPI_ERR_RANK code: len %d", len);
    }

    /* everything still works */
    if (size > 1) {
        int peer = (rank + 1) % size, from = (rank + size - 1) % size, v = -1;
        MPI_OK(MPI_Sendrecv(&rank, 1, MPI_INT, peer, 9, &v, 1, MPI_INT, from, 9, MPI_COMM_WORLD, &st));
        CHECK(v == from, "exchange after errors got %d", v);
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Finalize());
    return 0;
}
