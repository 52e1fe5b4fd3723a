/* oxmpi-test: ranks=2,3,4,8 */
/* Persistent collectives initialized in the same order on every rank but started in different
   orders (MPI 4.1 section 6.13 allows it): odd ranks start them in reverse. Each must still
   combine with its own counterparts on the other ranks: an allreduce with SUM, one with MAX, a
   bcast and an intercommunicator-free barrier, over several rounds, mixed with a nonblocking
   collective started in between. Before the fix the ranks paired different collectives and got
   wrong sums silently. */
#include "oxtest.h"

int main(int argc, char **argv)
{
    int rank, size;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int a, b, ra, rb, bc[4];
    MPI_Request r[4];
    MPI_OK(MPI_Allreduce_init(&a, &ra, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]));
    MPI_OK(MPI_Allreduce_init(&b, &rb, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]));
    MPI_OK(MPI_Bcast_init(bc, 4, MPI_INT, size - 1, MPI_COMM_WORLD, MPI_INFO_NULL, &r[2]));
    MPI_OK(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &r[3]));
    for (int it = 0; it < 20; it++) {
        a = rank + it;
        b = 100 * rank - it;
        for (int i = 0; i < 4; i++)
            bc[i] = rank == size - 1 ? 1000 * it + i : -1;
        int x = rank, xs = -1;
        MPI_Request nb;
        if (rank % 2) {
            for (int i = 3; i >= 0; i--) {
                MPI_OK(MPI_Start(&r[i]));
                if (i == 2)
                    MPI_OK(MPI_Iallreduce(&x, &xs, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &nb));
            }
        } else {
            MPI_OK(MPI_Iallreduce(&x, &xs, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &nb));
            MPI_OK(MPI_Startall(4, r));
        }
        MPI_OK(MPI_Waitall(4, r, MPI_STATUSES_IGNORE));
        MPI_OK(MPI_Wait(&nb, MPI_STATUS_IGNORE));
        int want_a = size * (size - 1) / 2 + size * it, want_b = 100 * (size - 1) - it;
        CHECK(ra == want_a, "iteration %d: allreduce SUM %d, expected %d", it, ra, want_a);
        CHECK(rb == want_b, "iteration %d: allreduce MAX %d, expected %d", it, rb, want_b);
        CHECK(xs == size * (size - 1) / 2, "iteration %d: iallreduce %d", it, xs);
        for (int i = 0; i < 4; i++)
            CHECK(bc[i] == 1000 * it + i, "iteration %d: bcast[%d] = %d", it, i, bc[i]);
    }
    for (int i = 0; i < 4; i++)
        MPI_OK(MPI_Request_free(&r[i]));
    MPI_OK(MPI_Finalize());
    return 0;
}
