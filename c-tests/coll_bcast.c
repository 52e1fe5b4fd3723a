/* oxmpi-test: ranks=1,2,3,4,5,8,12 timeout=60 */
/* MPI_Bcast from every root: 0, 1 and 1 MiB bytes, several datatypes (int, double, char,
   MPI_DOUBLE_INT pairs), back-to-back broadcasts with changing roots, and a pre-posted wildcard
   receive that collective traffic must not match. */
#include "oxtest.h"

int main(int argc, char **argv)
{
    int rank, size;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    size_t big = 1 << 20;
    unsigned char *buf = oxt_malloc(big);
    int sizes[3] = {0, 1, (int)big};

    for (int root = 0; root < size; root++) {
        for (int k = 0; k < 3; k++) {
            unsigned seed = (unsigned)(root * 3 + k + 1);
            if (rank == root)
                oxt_fill(buf, (size_t)sizes[k], seed);
            else
                memset(buf, 0, (size_t)sizes[k] + 1);
            MPI_OK(MPI_Bcast(buf, sizes[k], MPI_BYTE, root, MPI_COMM_WORLD));
            long bad = oxt_verify(buf, (size_t)sizes[k], seed);
            CHECK(bad < 0, "root %d, %d bytes: wrong byte at %ld", root, sizes[k], bad);
            if (rank != root && sizes[k] < (int)big)
                CHECK(buf[sizes[k]] == 0, "root %d: byte past the %d-byte message written", root, sizes[k]);
        }

        int iv[1000];
        double dv[777];
        char cv[13];
        struct { double v; int i; } pv[5];
        for (int i = 0; i < 1000; i++)
            iv[i] = rank == root ? i * 31 - root : -1;
        for (int i = 0; i < 777; i++)
            dv[i] = rank == root ? i * 0.25 + root : -1;
        for (int i = 0; i < 13; i++)
            cv[i] = rank == root ? (char)('a' + i + root) : 0;
        for (int i = 0; i < 5; i++) {
            pv[i].v = rank == root ? i * 1.5 : 0;
            pv[i].i = rank == root ? i + root : 0;
        }
        MPI_OK(MPI_Bcast(iv, 1000, MPI_INT, root, MPI_COMM_WORLD));
        MPI_OK(MPI_Bcast(dv, 777, MPI_DOUBLE, root, MPI_COMM_WORLD));
        MPI_OK(MPI_Bcast(cv, 13, MPI_CHAR, root, MPI_COMM_WORLD));
        MPI_OK(MPI_Bcast(pv, 5, MPI_DOUBLE_INT, root, MPI_COMM_WORLD));
        for (int i = 0; i < 1000; i++)
            CHECK(iv[i] == i * 31 - root, "root %d: int [%d] = %d", root, i, iv[i]);
        for (int i = 0; i < 777; i++)
            CHECK(dv[i] == i * 0.25 + root, "root %d: double [%d] = %g", root, i, dv[i]);
        for (int i = 0; i < 13; i++)
            CHECK(cv[i] == (char)('a' + i + root), "root %d: char [%d] = %d", root, i, cv[i]);
        for (int i = 0; i < 5; i++)
            CHECK(pv[i].v == i * 1.5 && pv[i].i == i + root, "root %d: pair [%d] = (%g,%d)", root, i, pv[i].v, pv[i].i);
    }

    /* a wildcard receive posted across broadcasts gets only the user message */
    int in = -1, out = rank + 1000, x;
    MPI_Request rq;
    MPI_Status st;
    MPI_OK(MPI_Irecv(&in, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &rq));
    for (int k = 0; k < 20; k++) {
        x = rank == k % size ? k : -1;
        MPI_OK(MPI_Bcast(&x, 1, MPI_INT, k % size, MPI_COMM_WORLD));
        CHECK(x == k, "back-to-back bcast %d got %d", k, x);
    }
    MPI_OK(MPI_Send(&out, 1, MPI_INT, (rank + 1) % size, 5, MPI_COMM_WORLD));
    MPI_OK(MPI_Wait(&rq, &st));
    CHECK(in == (rank + size - 1) % size + 1000 && st.MPI_TAG == 5, "wildcard receive got %d tag %d", in, st.MPI_TAG);

    x = 42;
    MPI_OK(MPI_Bcast(&x, 1, MPI_INT, 0, MPI_COMM_SELF));
    CHECK(x == 42, "MPI_COMM_SELF bcast changed the buffer to %d", x);
    free(buf);
    MPI_OK(MPI_Finalize());
    return 0;
}
