/* oxmpi-test: ranks=1,2,4,8 */
/* MPI_Barrier ordering: in round k, rank d=k%size delays before entering the barrier
   while polling (Iprobe) for messages that the other ranks send only after leaving
   the barrier; it must never see one before it has entered. */
#include "oxtest.h"

int main(int argc, char **argv)
{
    int rank, size;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int rounds = size < 4 ? 4 : size;

    for (int k = 0; k < rounds; k++) {
        int d = k % size;
        if (rank == d) {
            double t0 = MPI_Wtime();
            while (MPI_Wtime() - t0 < 0.005) {
                int flag = 0;
                MPI_Status st;
                MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, 100 + k, MPI_COMM_WORLD, &flag, &st));
                CHECK(!flag, "round %d: got a post-barrier message from rank %d before entering the barrier",
                      k, st.MPI_SOURCE);
            }
            MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
            for (int i = 0; i < size - 1; i++) {
                int v;
                MPI_Status st;
                MPI_OK(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 100 + k, MPI_COMM_WORLD, &st));
                CHECK(v == k * 1000 + st.MPI_SOURCE, "round %d: payload %d from %d", k, v, st.MPI_SOURCE);
            }
        } else {
            MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
            int v = k * 1000 + rank;
            MPI_OK(MPI_Send(&v, 1, MPI_INT, d, 100 + k, MPI_COMM_WORLD));
        }
    }
    /* many back-to-back barriers */
    for (int i = 0; i < 10; i++)
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Barrier(MPI_COMM_SELF));
    MPI_OK(MPI_Finalize());
    return 0;
}
