/* oxmpi-test: ranks=2,4,8 */
/* After MPI_Finalize a rank may leave early, by returning from main or by calling exit(0), while
   the others still work: that ends only that rank, in both rank modes. The last rank checks that
   the others' messages all arrived before it finishes. */
#define _POSIX_C_SOURCE 200809L
#include "oxtest.h"
#include <time.h>

int main(int argc, char **argv)
{
    int rank, size;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int last = size - 1;
    if (rank != last) {
        MPI_OK(MPI_Send(&rank, 1, MPI_INT, last, 0, MPI_COMM_WORLD));
        MPI_Finalize();
        if (rank % 2)
            exit(0);
        return 0;
    }
    struct timespec pause = {0, 100 * 1000 * 1000};
    nanosleep(&pause, NULL); /* the others are gone by now */
    for (int i = 0; i < size - 1; i++) {
        int v;
        MPI_OK(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
    printf("rank %d: still running after the others left\n", rank);
    MPI_Finalize();
    return 0;
}
