/* oxmpi-test: ranks=1,2,4,8 */
/* MPI_Sendrecv and MPI_Sendrecv_replace around a ring (including size 1: to oneself),
   sizes up to 1 MiB, and with MPI_PROC_NULL partners. */
#include "oxtest.h"

static const int sizes[] = {0, 1, 8192, 100000, 1 << 20};
#define NS ((int)(sizeof sizes / sizeof sizes[0]))

int main(int argc, char **argv)
{
    int rank, size;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    unsigned char *sb = oxt_malloc(1 << 20), *rb = oxt_malloc(1 << 20);

    for (int i = 0; i < NS; i++) {
        int n = sizes[i];
        MPI_Status st;
        oxt_fill(sb, (size_t)n, (unsigned)(rank * 31 + i));
        MPI_OK(MPI_Sendrecv(sb, n, MPI_BYTE, right, i, rb, n, MPI_BYTE, left, i, MPI_COMM_WORLD, &st));
        CHECK_STATUS(st, left, i, MPI_BYTE, n);
        long bad = oxt_verify(rb, (size_t)n, (unsigned)(left * 31 + i));
        CHECK(bad < 0, "Sendrecv size %d: byte %ld wrong", n, bad);

        /* replace: the message travels all the way around the ring */
        oxt_fill(sb, (size_t)n, (unsigned)(rank * 7 + i));
        for (int hop = 0; hop < size; hop++) {
            MPI_OK(MPI_Sendrecv_replace(sb, n, MPI_BYTE, right, 50 + i, left, 50 + i, MPI_COMM_WORLD, &st));
            CHECK_STATUS(st, left, 50 + i, MPI_BYTE, n);
            int origin = ((rank - hop - 1) % size + size) % size;
            bad = oxt_verify(sb, (size_t)n, (unsigned)(origin * 7 + i));
            CHECK(bad < 0, "Sendrecv_replace size %d hop %d: byte %ld wrong", n, hop, bad);
        }
    }

    /* different send and receive types/counts */
    int iv[3] = {rank, rank + 1, rank + 2};
    double dv[2] = {0, 0};
    double ds[2] = {rank * 0.5, rank * 0.25};
    int ir[3];
    MPI_Status st;
    MPI_OK(MPI_Sendrecv(ds, 2, MPI_DOUBLE, right, 9, dv, 2, MPI_DOUBLE, left, 9, MPI_COMM_WORLD, &st));
    CHECK(dv[0] == left * 0.5 && dv[1] == left * 0.25, "double sendrecv got %g %g", dv[0], dv[1]);

    /* PROC_NULL partners */
    ir[0] = -99;
    MPI_OK(MPI_Sendrecv(iv, 3, MPI_INT, MPI_PROC_NULL, 1, ir, 3, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st));
    CHECK_STATUS(st, MPI_PROC_NULL, MPI_ANY_TAG, MPI_INT, 0);
    CHECK(ir[0] == -99, "receive from MPI_PROC_NULL modified the buffer");
    /* half PROC_NULL; the real halves are matched by pre-posted nonblocking operations so
       nothing relies on buffering */
    MPI_Request rq;
    MPI_OK(MPI_Irecv(ir, 3, MPI_INT, left, 2, MPI_COMM_WORLD, &rq));
    int other[3] = {0, 0, 0};
    MPI_OK(MPI_Sendrecv(iv, 3, MPI_INT, right, 2, other, 3, MPI_INT, MPI_PROC_NULL, 2, MPI_COMM_WORLD, &st));
    CHECK_STATUS(st, MPI_PROC_NULL, MPI_ANY_TAG, MPI_INT, 0);
    MPI_OK(MPI_Wait(&rq, &st));
    CHECK_STATUS(st, left, 2, MPI_INT, 3);
    CHECK(ir[0] == left && ir[2] == left + 2, "sendrecv to right / recv PROC_NULL: got %d %d", ir[0], ir[2]);
    ir[0] = ir[2] = -1;
    MPI_OK(MPI_Isend(iv, 3, MPI_INT, right, 3, MPI_COMM_WORLD, &rq));
    MPI_OK(MPI_Sendrecv(iv, 3, MPI_INT, MPI_PROC_NULL, 3, ir, 3, MPI_INT, left, 3, MPI_COMM_WORLD, &st));
    CHECK_STATUS(st, left, 3, MPI_INT, 3);
    CHECK(ir[0] == left && ir[2] == left + 2, "sendrecv with send to PROC_NULL got %d %d", ir[0], ir[2]);
    MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Sendrecv_replace(iv, 3, MPI_INT, MPI_PROC_NULL, 3, MPI_PROC_NULL, 3, MPI_COMM_WORLD, &st));
    CHECK_STATUS(st, MPI_PROC_NULL, MPI_ANY_TAG, MPI_INT, 0);
    CHECK(iv[0] == rank, "Sendrecv_replace with PROC_NULL modified the buffer");

    /* MPI_ANY_SOURCE / MPI_ANY_TAG on the receive side */
    MPI_OK(MPI_Sendrecv(iv, 1, MPI_INT, right, 4 + rank, ir, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG,
                        MPI_COMM_WORLD, &st));
    CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 4 + left && ir[0] == left, "ANY_SOURCE sendrecv: src %d tag %d v %d",
          st.MPI_SOURCE, st.MPI_TAG, ir[0]);

    free(sb);
    free(rb);
    MPI_OK(MPI_Finalize());
    return 0;
}
