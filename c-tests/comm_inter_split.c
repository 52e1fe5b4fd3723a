/* oxmpi-test: ranks=2,3,4,6,8 */
/* MPI_Comm_split of an intercommunicator: the members of each color in the two groups form an
   intercommunicator (ordered by key), a color missing on one side gives MPI_COMM_NULL. */
#include "oxtest.h"

int main(int argc, char **argv)
{
    int rank, size;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_Comm half, inter, part;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half));
    int lr, ls, rs;
    MPI_OK(MPI_Comm_rank(half, &lr));
    MPI_OK(MPI_Comm_size(half, &ls));
    MPI_OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 9, &inter));
    MPI_OK(MPI_Comm_remote_size(inter, &rs));
    /* color = local rank % 2; keys reverse the local order */
    int color = lr % 2;
    MPI_OK(MPI_Comm_split(inter, color, -lr, &part));
    int remote_with_color = (rs + 1 - color) / 2; /* remote local ranks with that parity */
    if (remote_with_color == 0) {
        CHECK(part == MPI_COMM_NULL, "rank %d: color %d missing remotely but got a communicator", rank, color);
    } else {
        int flag, n, r, m;
        MPI_OK(MPI_Comm_test_inter(part, &flag));
        CHECK(flag, "split of an intercommunicator is not an intercommunicator");
        MPI_OK(MPI_Comm_size(part, &n));
        MPI_OK(MPI_Comm_rank(part, &r));
        MPI_OK(MPI_Comm_remote_size(part, &m));
        int mine = (ls + 1 - color) / 2;
        CHECK(n == mine && m == remote_with_color, "rank %d: sizes %d/%d, expected %d/%d", rank, n, m, mine, remote_with_color);
        /* reversed key order: the highest local rank of my color is rank 0 */
        int expect = 0;
        for (int q = lr + 2; q < ls; q += 2)
            expect++;
        CHECK(r == expect, "rank %d: split rank %d, expected %d", rank, r, expect);
        /* every member talks to remote rank 0 of its color part */
        int token = 1000 * (rank % 2) + r, got;
        MPI_Request sreq;
        MPI_OK(MPI_Isend(&token, 1, MPI_INT, 0, 5, part, &sreq));
        if (r == 0) {
            MPI_Status st;
            for (int i = 0; i < m; i++) {
                MPI_OK(MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 5, part, &st));
                CHECK(got / 1000 == 1 - rank % 2 && got % 1000 == st.MPI_SOURCE, "bad message %d from %d", got, st.MPI_SOURCE);
            }
        }
        MPI_OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Comm_free(&part));
    }
    MPI_OK(MPI_Comm_free(&inter));
    MPI_OK(MPI_Comm_free(&half));
    MPI_Finalize();
    return 0;
}
