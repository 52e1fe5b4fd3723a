/* oxmpi-test: ranks=2,3,5 timeout=120 */
/* oxmpi-test: env=- env=OXMPI_BCAST_ALGORITHM=flat,OXMPI_REDUCE_ALGORITHM=flat */
/* A rank that finishes a collective early frees the communicator at once, while its peers
   have not even started the collective: the root of a small MPI_Bcast and the non-roots of a
   small MPI_Reduce, which oxmpi's `flat` algorithm (coll/flat.rs) lets return as soon as they
   published their data. In threads mode the communicator's shared arena must outlive the
   early rank's hold until every member took it (a late member must find the early one's
   record, not a fresh arena). The late ranks sometimes dawdle before the call to make that
   order likely. Standard MPI; also run with MPICH. */
#include "oxtest.h"

static void dawdle(int k)
{
    if (k % 3 == 0) {
        double t = MPI_Wtime();
        while (MPI_Wtime() - t < 2e-4)
            ;
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int k = 0; k < 300; k++) {
        MPI_Comm c;
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        int root = k % size;
        char b[256];
        if (rank == root) {
            memset(b, k & 0x7f, sizeof b);
        } else {
            memset(b, 0xff, sizeof b);
            dawdle(k);
        }
        int n = 1 + k % 256;
        MPI_OK(MPI_Bcast(b, n, MPI_CHAR, root, c));
        if (rank == root) {
            MPI_OK(MPI_Comm_free(&c));
            continue;
        }
        for (int i = 0; i < n; i++)
            CHECK(b[i] == (k & 0x7f), "iteration %d: byte %d is %d", k, i, b[i]);
        MPI_OK(MPI_Comm_free(&c));
    }
    for (int k = 0; k < 300; k++) {
        MPI_Comm c;
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        int root = k % size;
        long v = rank + k, sum = -1;
        if (rank == root)
            dawdle(k);
        MPI_OK(MPI_Reduce(&v, &sum, 1, MPI_LONG, MPI_SUM, root, c));
        MPI_OK(MPI_Comm_free(&c));
        if (rank == root)
            CHECK(sum == (long)size * (size - 1) / 2 + (long)size * k, "iteration %d: sum %ld", k, sum);
    }
    MPI_Finalize();
    return 0;
}
