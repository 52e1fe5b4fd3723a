/* oxmpi-test: ranks=1,2,4,8 */
/* MPI_Comm_rank/MPI_Comm_size on MPI_COMM_WORLD and MPI_COMM_SELF; ranks are distinct. */
#include "oxtest.h"

int main(int argc, char **argv)
{
    int rank = -1, size = -1, srank = -1, ssize = -1;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(size >= 1, "world size %d", size);
    CHECK(rank >= 0 && rank < size, "world rank %d, size %d", rank, size);
    MPI_OK(MPI_Comm_rank(MPI_COMM_SELF, &srank));
    MPI_OK(MPI_Comm_size(MPI_COMM_SELF, &ssize));
    CHECK(srank == 0, "self rank %d", srank);
    CHECK(ssize == 1, "self size %d", ssize);

    /* Every rank reports (rank, size) to rank 0, which checks they form 0..size-1. */
    int msg[2] = {rank, size};
    if (rank == 0) {
        char *seen = calloc((size_t)size, 1);
        seen[0] = 1;
        for (int i = 1; i < size; i++) {
            MPI_Status st;
            int in[2];
            MPI_OK(MPI_Recv(in, 2, MPI_INT, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &st));
            CHECK(in[1] == size, "rank %d reports size %d, rank 0 has %d", in[0], in[1], size);
            CHECK(in[0] == st.MPI_SOURCE, "rank %d reported its rank as %d", st.MPI_SOURCE, in[0]);
            CHECK(in[0] > 0 && in[0] < size && !seen[in[0]], "rank %d duplicate or out of range", in[0]);
            seen[in[0]] = 1;
        }
        free(seen);
    } else {
        MPI_OK(MPI_Send(msg, 2, MPI_INT, 0, 5, MPI_COMM_WORLD));
    }

    /* MPI_COMM_SELF is usable for communication with oneself. */
    int a = 42 + rank, b = -1;
    MPI_Status st;
    MPI_OK(MPI_Sendrecv(&a, 1, MPI_INT, 0, 3, &b, 1, MPI_INT, 0, 3, MPI_COMM_SELF, &st));
    CHECK(b == a, "self sendrecv gave %d, expected %d", b, a);
    CHECK(st.MPI_SOURCE == 0, "self sendrecv source %d", st.MPI_SOURCE);

    MPI_OK(MPI_Finalize());
    return 0;
}
