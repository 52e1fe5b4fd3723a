/* oxmpi-test: ranks=1,2,3,4,8 */
/* MPI_Comm_idup is nonblocking: ranks may issue idups of different parents in different orders,
   and user collectives on the parent may run while it is pending; the new communicators pair up
   in issue order per parent and isolate their traffic. */
#include "oxtest.h"

int main(int argc, char **argv)
{
    int rank, size, n;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_Comm a, b, da1, da2, db;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &a));
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &b));
    MPI_Request r[3];
    /* different issue orders across parents on even and odd ranks */
    if (rank % 2 == 0) {
        MPI_OK(MPI_Comm_idup(a, &da1, &r[0]));
        MPI_OK(MPI_Comm_idup(b, &db, &r[1]));
        MPI_OK(MPI_Comm_idup(a, &da2, &r[2]));
    } else {
        MPI_OK(MPI_Comm_idup(b, &db, &r[1]));
        MPI_OK(MPI_Comm_idup(a, &da1, &r[0]));
        MPI_OK(MPI_Comm_idup(a, &da2, &r[2]));
    }
    /* a user collective on a parent while its idups are pending */
    int one = 1, sum = 0;
    MPI_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, a));
    CHECK(sum == size, "allreduce during idup: %d", sum);
    MPI_OK(MPI_Waitall(3, r, MPI_STATUSES_IGNORE));
    MPI_Comm all[3] = {da1, da2, db};
    for (int i = 0; i < 3; i++) {
        MPI_OK(MPI_Comm_size(all[i], &n));
        CHECK(n == size, "idup'ed communicator %d has %d ranks", i, n);
    }
    /* traffic on da1 and da2 stays apart: a ring on each, da2 first */
    int right = (rank + 1) % size, left = (rank + size - 1) % size, v1 = -1, v2 = -1, t1 = 100 + rank, t2 = 200 + rank;
    MPI_Request q[2];
    MPI_OK(MPI_Irecv(&v1, 1, MPI_INT, left, 0, da1, &q[0]));
    MPI_OK(MPI_Irecv(&v2, 1, MPI_INT, left, 0, da2, &q[1]));
    MPI_OK(MPI_Send(&t2, 1, MPI_INT, right, 0, da2));
    MPI_OK(MPI_Send(&t1, 1, MPI_INT, right, 0, da1));
    MPI_OK(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
    CHECK(v1 == 100 + left && v2 == 200 + left, "idup'ed communicators mixed traffic: %d %d", v1, v2);
    for (int i = 0; i < 3; i++)
        MPI_OK(MPI_Comm_free(&all[i]));
    MPI_OK(MPI_Comm_free(&a));
    MPI_OK(MPI_Comm_free(&b));
    MPI_Finalize();
    return 0;
}
