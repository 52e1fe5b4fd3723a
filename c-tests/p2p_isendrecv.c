/* oxmpi-test: ranks=1,2,4,8 mpich=skip */
/* mpich=skip: MPICH 4.0.2 crashes in MPI_Isendrecv_replace (ucp_tag_send_nbx) and hangs with one
   rank, and its MPI_Isendrecv requests report source and tag 0 in their status. */
/* MPI_Isendrecv and MPI_Isendrecv_replace (MPI 4.1 section 3.10) and their _c forms: ring
   exchanges completed with MPI_Wait, MPI_Test and MPI_Waitall, the receive's status, MPI_PROC_NULL
   partners, a derived datatype and a message large enough for the rendezvous path. */
#include "oxtest.h"
#include <stdlib.h>

#define BIG (100 * 1000)

int main(int argc, char **argv)
{
    int rank, size;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Status st;
    MPI_Request r;
    int flag;

    /* Ring, MPI_Isendrecv + MPI_Wait. */
    int out[4], in[4];
    for (int i = 0; i < 4; i++) {
        out[i] = rank * 10 + i;
        in[i] = -1;
    }
    MPI_OK(MPI_Isendrecv(out, 4, MPI_INT, right, 1, in, 4, MPI_INT, left, 1, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Wait(&r, &st));
    CHECK(r == MPI_REQUEST_NULL, "request not freed by the wait");
    CHECK_STATUS(st, left, 1, MPI_INT, 4);
    for (int i = 0; i < 4; i++)
        CHECK(in[i] == left * 10 + i, "isendrecv in[%d] = %d, expected %d", i, in[i], left * 10 + i);

    /* Ring, MPI_Isendrecv_replace + MPI_Test loop. */
    int buf[3] = {rank, rank + 1, rank + 2};
    MPI_OK(MPI_Isendrecv_replace(buf, 3, MPI_INT, right, 2, left, MPI_ANY_TAG, MPI_COMM_WORLD, &r));
    flag = 0;
    while (!flag)
        MPI_OK(MPI_Test(&r, &flag, &st));
    CHECK_STATUS(st, left, 2, MPI_INT, 3);
    for (int i = 0; i < 3; i++)
        CHECK(buf[i] == left + i, "replace buf[%d] = %d, expected %d", i, buf[i], left + i);

    /* The _c forms, both at once, completed by MPI_Waitall; a large replace goes by rendezvous. */
    int *big = malloc(BIG * sizeof(int));
    CHECK(big != NULL, "malloc");
    for (int i = 0; i < BIG; i++)
        big[i] = rank * BIG + i;
    double dout = rank + 0.5, din = -1;
    MPI_Request reqs[2];
    MPI_Status sts[2];
    MPI_OK(MPI_Isendrecv_c(&dout, (MPI_Count)1, MPI_DOUBLE, right, 3, &din, (MPI_Count)1, MPI_DOUBLE, left, 3, MPI_COMM_WORLD, &reqs[0]));
    MPI_OK(MPI_Isendrecv_replace_c(big, (MPI_Count)BIG, MPI_INT, left, 4, right, 4, MPI_COMM_WORLD, &reqs[1]));
    MPI_OK(MPI_Waitall(2, reqs, sts));
    CHECK(din == left + 0.5, "isendrecv_c got %g", din);
    CHECK_STATUS(sts[0], left, 3, MPI_DOUBLE, 1);
    CHECK_STATUS(sts[1], right, 4, MPI_INT, BIG);
    for (int i = 0; i < BIG; i++)
        if (big[i] != right * BIG + i)
            CHECK(0, "replace_c big[%d] = %d, expected %d", i, big[i], right * BIG + i);
    free(big);

    /* MPI_PROC_NULL partners: a chain (not a ring). */
    int to = rank + 1 < size ? rank + 1 : MPI_PROC_NULL;
    int from = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    int v = rank + 100, got = -7;
    MPI_OK(MPI_Isendrecv(&v, 1, MPI_INT, to, 5, &got, 1, MPI_INT, from, 5, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Wait(&r, &st));
    if (from == MPI_PROC_NULL) {
        CHECK_STATUS(st, MPI_PROC_NULL, MPI_ANY_TAG, MPI_INT, 0);
        CHECK(got == -7, "receive from MPI_PROC_NULL wrote %d", got);
    } else {
        CHECK_STATUS(st, from, 5, MPI_INT, 1);
        CHECK(got == from + 100, "chain got %d", got);
    }
    v = rank;
    MPI_OK(MPI_Isendrecv_replace(&v, 1, MPI_INT, MPI_PROC_NULL, 6, MPI_PROC_NULL, 6, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Wait(&r, &st));
    CHECK_STATUS(st, MPI_PROC_NULL, MPI_ANY_TAG, MPI_INT, 0);
    CHECK(v == rank, "replace with MPI_PROC_NULL changed the buffer to %d", v);

    /* A derived datatype (every other int of 8): only the selected elements are replaced. */
    MPI_Datatype vec;
    MPI_OK(MPI_Type_vector(4, 1, 2, MPI_INT, &vec));
    MPI_OK(MPI_Type_commit(&vec));
    int dbuf[8];
    for (int i = 0; i < 8; i++)
        dbuf[i] = i % 2 ? -1 : rank * 100 + i;
    MPI_OK(MPI_Isendrecv_replace(dbuf, 1, vec, right, 7, left, 7, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Waitall(1, &r, &st));
    for (int i = 0; i < 8; i++) {
        int want = i % 2 ? -1 : left * 100 + i;
        CHECK(dbuf[i] == want, "vector replace dbuf[%d] = %d, expected %d", i, dbuf[i], want);
    }
    int dsend[8], drecv[4];
    for (int i = 0; i < 8; i++)
        dsend[i] = rank * 100 + i;
    MPI_OK(MPI_Isendrecv(dsend, 1, vec, right, 8, drecv, 4, MPI_INT, left, 8, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Wait(&r, &st));
    CHECK_STATUS(st, left, 8, MPI_INT, 4);
    for (int i = 0; i < 4; i++)
        CHECK(drecv[i] == left * 100 + 2 * i, "vector isendrecv drecv[%d] = %d", i, drecv[i]);
    MPI_OK(MPI_Type_free(&vec));

    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Finalize());
    return 0;
}
