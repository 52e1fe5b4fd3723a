/* oxmpi-test: ranks=2,3,4,8 */
/* MPI_Bcast, MPI_Reduce and MPI_Allreduce on an intercommunicator between the even and the odd
   ranks of MPI_COMM_WORLD: the root passes MPI_ROOT, the rest of its group MPI_PROC_NULL, the
   other group the root's rank; MPI_Allreduce gives each group the reduction of the other's data. */
#include "oxtest.h"

int main(int argc, char **argv)
{
    int rank, size;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int parity = rank % 2, ne = (size + 1) / 2, no = size / 2;
    int lrank = rank / 2;
    MPI_Comm half, inter;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, parity, rank, &half));
    MPI_OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - parity, 5, &inter));
    long sum_even = 0, sum_odd = 0;
    for (int w = 0; w < size; w++)
        *(w % 2 ? &sum_odd : &sum_even) += w;

    for (int rootgroup = 0; rootgroup < 2; rootgroup++) {
        /* the root is the last rank of its group */
        int rootlocal = (rootgroup ? no : ne) - 1;
        int root = parity == rootgroup ? (lrank == rootlocal ? MPI_ROOT : MPI_PROC_NULL) : rootlocal;
        int buf[3] = {-1, -1, -1};
        if (root == MPI_ROOT) {
            buf[0] = rank; buf[1] = 42; buf[2] = -7;
        }
        MPI_OK(MPI_Bcast(buf, 3, MPI_INT, root, inter));
        if (root == MPI_ROOT)
            CHECK(buf[0] == rank && buf[1] == 42 && buf[2] == -7, "the root's buffer changed");
        else if (root == MPI_PROC_NULL)
            CHECK(buf[0] == -1, "an idle rank of the root group received data");
        else
            CHECK(buf[0] == 2 * rootlocal + rootgroup && buf[1] == 42 && buf[2] == -7, "bcast got %d %d %d", buf[0], buf[1], buf[2]);

        /* reduce: the other group's world ranks (sum) and local ranks (max) */
        long in[2] = {rank, lrank}, out[2] = {-1, -1};
        if (root == MPI_PROC_NULL) /* nothing is significant here: any count, type and op (as mpi4py passes) */
            MPI_OK(MPI_Reduce(NULL, NULL, 0, MPI_BYTE, MPI_SUM, root, inter));
        else
            MPI_OK(MPI_Reduce(in, out, 2, MPI_LONG, MPI_SUM, root, inter));
        if (root == MPI_ROOT) {
            long expect = rootgroup ? sum_even : sum_odd;
            int other = rootgroup ? ne : no;
            CHECK(out[0] == expect && out[1] == (long)other * (other - 1) / 2, "reduce got %ld %ld, expected %ld", out[0], out[1], expect);
        } else {
            CHECK(out[0] == -1, "a non-root received a reduce result");
        }
    }

    long in[2] = {rank, 1}, out[2] = {-1, -1};
    MPI_OK(MPI_Allreduce(in, out, 2, MPI_LONG, MPI_SUM, inter));
    CHECK(out[0] == (parity ? sum_even : sum_odd) && out[1] == (parity ? ne : no), "allreduce got %ld %ld", out[0], out[1]);
    int mx = -1;
    MPI_OK(MPI_Allreduce(&rank, &mx, 1, MPI_INT, MPI_MAX, inter));
    CHECK(mx == (parity ? 2 * (ne - 1) : 2 * (no - 1) + 1), "allreduce max %d", mx);
    MPI_OK(MPI_Comm_free(&inter));
    MPI_OK(MPI_Comm_free(&half));
    MPI_Finalize();
    return 0;
}
