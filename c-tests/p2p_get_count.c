/* oxmpi-test: ranks=1,2 */
/* MPI_Get_count / MPI_Get_elements / MPI_Get_elements_x for predefined types, including
   MPI_UNDEFINED when the received size is not a multiple of the type size. */
#include "oxtest.h"

/* Sender and receiver use the same type (type matching); MPI_Get_count is then asked
   about other types, which divides the received byte count by their size. */
static void xfer(const void *sb, int scount, void *rb, int rcount, MPI_Datatype type, MPI_Status *st)
{
    MPI_Datatype stype = type, rtype = type;
    /* self exchange with a pre-posted receive: needs no buffering */
    MPI_Request r;
    MPI_OK(MPI_Irecv(rb, rcount, rtype, 0, 1, MPI_COMM_SELF, &r));
    MPI_OK(MPI_Send(sb, scount, stype, 0, 1, MPI_COMM_SELF));
    MPI_OK(MPI_Wait(&r, st));
}

int main(int argc, char **argv)
{
    int n;
    MPI_Count nx;
    MPI_Status st;
    int ib[64];
    char cb[256];
    MPI_OK(MPI_Init(&argc, &argv));
    for (int i = 0; i < 64; i++)
        ib[i] = i;

    xfer(ib, 10, cb, 64, MPI_INT, &st);
    MPI_OK(MPI_Get_count(&st, MPI_INT, &n));
    CHECK(n == 10, "Get_count(MPI_INT) = %d, expected 10", n);
    MPI_OK(MPI_Get_elements(&st, MPI_INT, &n));
    CHECK(n == 10, "Get_elements(MPI_INT) = %d, expected 10", n);
    MPI_OK(MPI_Get_count(&st, MPI_BYTE, &n));
    CHECK(n == 40, "Get_count(MPI_BYTE) = %d, expected 40", n);
    MPI_OK(MPI_Get_count(&st, MPI_DOUBLE, &n));
    CHECK(n == 5, "Get_count(MPI_DOUBLE) = %d, expected 5", n);
    MPI_OK(MPI_Get_count(&st, MPI_SHORT, &n));
    CHECK(n == 20, "Get_count(MPI_SHORT) = %d, expected 20", n);
    MPI_OK(MPI_Get_elements_x(&st, MPI_INT, &nx));
    CHECK(nx == 10, "Get_elements_x(MPI_INT) = %lld", (long long)nx);
    /* 40 bytes is not a multiple of sizeof(long double) (16 on x86-64) */
    int ldsz = 0;
    MPI_OK(MPI_Type_size(MPI_LONG_DOUBLE, &ldsz));
    if (ldsz > 0 && 40 % ldsz != 0) {
        MPI_OK(MPI_Get_count(&st, MPI_LONG_DOUBLE, &n));
        CHECK(n == MPI_UNDEFINED, "Get_count(MPI_LONG_DOUBLE) on 40 bytes = %d, expected MPI_UNDEFINED", n);
    }

    /* 10 bytes: not a multiple of int/double */
    xfer(cb, 10, ib, 64, MPI_BYTE, &st);
    MPI_OK(MPI_Get_count(&st, MPI_BYTE, &n));
    CHECK(n == 10, "Get_count(MPI_BYTE) = %d, expected 10", n);
    MPI_OK(MPI_Get_count(&st, MPI_INT, &n));
    CHECK(n == MPI_UNDEFINED, "Get_count(MPI_INT) on 10 bytes = %d, expected MPI_UNDEFINED", n);
    MPI_OK(MPI_Get_elements(&st, MPI_INT, &n));
    CHECK(n == MPI_UNDEFINED, "Get_elements(MPI_INT) on 10 bytes = %d, expected MPI_UNDEFINED", n);
    MPI_OK(MPI_Get_count(&st, MPI_DOUBLE, &n));
    CHECK(n == MPI_UNDEFINED, "Get_count(MPI_DOUBLE) on 10 bytes = %d, expected MPI_UNDEFINED", n);
    MPI_OK(MPI_Get_count(&st, MPI_SHORT, &n));
    CHECK(n == 5, "Get_count(MPI_SHORT) on 10 bytes = %d, expected 5", n);

    /* zero-size message */
    xfer(ib, 0, cb, 64, MPI_INT, &st);
    MPI_OK(MPI_Get_count(&st, MPI_INT, &n));
    CHECK(n == 0, "Get_count of an empty message = %d", n);
    MPI_OK(MPI_Get_elements(&st, MPI_DOUBLE, &n));
    CHECK(n == 0, "Get_elements of an empty message = %d", n);

    /* receive buffer larger than the message: count is the message's */
    xfer(ib, 3, cb, 64, MPI_INT, &st);
    MPI_OK(MPI_Get_count(&st, MPI_INT, &n));
    CHECK(n == 3, "Get_count(MPI_INT) = %d, expected 3", n);
    MPI_OK(MPI_Get_count(&st, MPI_CHAR, &n));
    CHECK(n == 12, "Get_count(MPI_CHAR) = %d, expected 12", n);

    /* MPI_Status_set_elements round trip */
    MPI_OK(MPI_Status_set_elements(&st, MPI_INT, 7));
    MPI_OK(MPI_Get_count(&st, MPI_INT, &n));
    CHECK(n == 7, "Get_count after Status_set_elements(7) = %d", n);
    MPI_OK(MPI_Finalize());
    return 0;
}
