/* oxmpi-test: ranks=2,4 */
/* Blocking point-to-point with derived datatypes between rank pairs (2k, 2k+1): a strided vector
   received into a contiguous buffer and back, a padded struct array, MPI_Sendrecv with a subarray
   on both sides, a contiguous derived type through MPI_Isend/MPI_Irecv, counts from the status. */
#include "oxtest.h"
#include <stddef.h>

struct rec {
    int a;
    double b;
    char c;
};

int main(int argc, char **argv)
{
    int rank, size, peer, i, n;
    MPI_Datatype vec, st, stv, sub, con;
    MPI_Status s;

    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    peer = rank ^ 1;

    /* vector: every other int of 20 -> 10 ints */
    MPI_OK(MPI_Type_vector(10, 1, 2, MPI_INT, &vec));
    MPI_OK(MPI_Type_commit(&vec));
    {
        int strided[20], flat[10];
        if (rank % 2 == 0) {
            for (i = 0; i < 20; i++)
                strided[i] = rank * 1000 + i;
            MPI_OK(MPI_Send(strided, 1, vec, peer, 1, MPI_COMM_WORLD));
            for (i = 0; i < 20; i++)
                strided[i] = -1;
            MPI_OK(MPI_Recv(strided, 1, vec, peer, 2, MPI_COMM_WORLD, &s));
            MPI_OK(MPI_Get_count(&s, vec, &n));
            CHECK(n == 1, "count %d", n);
            for (i = 0; i < 20; i++)
                CHECK(strided[i] == (i % 2 ? -1 : 2 * (rank * 1000 + i)), "strided[%d] = %d", i, strided[i]);
        } else {
            MPI_OK(MPI_Recv(flat, 10, MPI_INT, peer, 1, MPI_COMM_WORLD, &s));
            CHECK_STATUS(s, peer, 1, MPI_INT, 10);
            for (i = 0; i < 10; i++) {
                CHECK(flat[i] == peer * 1000 + 2 * i, "flat[%d] = %d", i, flat[i]);
                flat[i] *= 2;
            }
            MPI_OK(MPI_Send(flat, 10, MPI_INT, peer, 2, MPI_COMM_WORLD));
        }
    }

    /* struct array: 5 records with padding */
    {
        int bl[3] = {1, 1, 1};
        MPI_Aint d[3] = {offsetof(struct rec, a), offsetof(struct rec, b), offsetof(struct rec, c)};
        MPI_Datatype ty[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
        struct rec r[5];
        MPI_OK(MPI_Type_create_struct(3, bl, d, ty, &stv));
        MPI_OK(MPI_Type_create_resized(stv, 0, sizeof(struct rec), &st));
        MPI_OK(MPI_Type_commit(&st));
        memset(r, 0x5a, sizeof r);
        if (rank % 2 == 0) {
            for (i = 0; i < 5; i++) {
                r[i].a = i + rank;
                r[i].b = i * 0.5;
                r[i].c = (char)('a' + i);
            }
            MPI_OK(MPI_Send(r, 5, st, peer, 3, MPI_COMM_WORLD));
        } else {
            int el;
            MPI_OK(MPI_Recv(r, 5, st, peer, 3, MPI_COMM_WORLD, &s));
            CHECK_STATUS(s, peer, 3, st, 5);
            MPI_OK(MPI_Get_elements(&s, st, &el));
            CHECK(el == 15, "Get_elements %d", el);
            for (i = 0; i < 5; i++)
                CHECK(r[i].a == i + peer && r[i].b == i * 0.5 && r[i].c == 'a' + i, "record %d", i);
        }
    }

    /* Sendrecv: 2x2 block at (1,1) of a 4x4 array of doubles, both sides. */
    {
        int sz[2] = {4, 4}, ss[2] = {2, 2}, sts[2] = {1, 1};
        double a[16], b[16];
        MPI_OK(MPI_Type_create_subarray(2, sz, ss, sts, MPI_ORDER_C, MPI_DOUBLE, &sub));
        MPI_OK(MPI_Type_commit(&sub));
        for (i = 0; i < 16; i++) {
            a[i] = rank * 100 + i;
            b[i] = -1;
        }
        MPI_OK(MPI_Sendrecv(a, 1, sub, peer, 4, b, 1, sub, peer, 4, MPI_COMM_WORLD, &s));
        for (i = 0; i < 16; i++) {
            int in = (i / 4 == 1 || i / 4 == 2) && (i % 4 == 1 || i % 4 == 2);
            CHECK(b[i] == (in ? peer * 100 + i : -1), "b[%d] = %g", i, b[i]);
        }
    }

    /* A contiguous derived type works with nonblocking operations too. */
    {
        int x[8], y[8];
        MPI_Request rq[2];
        MPI_OK(MPI_Type_contiguous(4, MPI_INT, &con));
        MPI_OK(MPI_Type_commit(&con));
        for (i = 0; i < 8; i++) {
            x[i] = rank + i;
            y[i] = -1;
        }
        MPI_OK(MPI_Irecv(y, 2, con, peer, 5, MPI_COMM_WORLD, &rq[0]));
        MPI_OK(MPI_Isend(x, 2, con, peer, 5, MPI_COMM_WORLD, &rq[1]));
        MPI_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
        for (i = 0; i < 8; i++)
            CHECK(y[i] == peer + i, "y[%d] = %d", i, y[i]);
    }

    /* An uncommitted type cannot be sent. */
    {
        MPI_Datatype u;
        int z = 0;
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        MPI_OK(MPI_Type_contiguous(1, MPI_INT, &u));
        CHECK_CLASS(MPI_Send(&z, 1, u, peer, 6, MPI_COMM_WORLD), MPI_ERR_TYPE);
        MPI_OK(MPI_Type_free(&u));
    }

    MPI_OK(MPI_Type_free(&vec));
    MPI_OK(MPI_Type_free(&stv));
    MPI_OK(MPI_Type_free(&st));
    MPI_OK(MPI_Type_free(&sub));
    MPI_OK(MPI_Type_free(&con));
    MPI_OK(MPI_Finalize());
    return 0;
}
