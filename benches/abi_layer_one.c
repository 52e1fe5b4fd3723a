/* One call pattern of benches/abi_layer.c, ITERS times, for counting instructions
 * (scripts/bench-abi-instructions.sh runs it under callgrind at two ITERS: the difference of
 * the counts over the difference of ITERS is the cost per call, without MPI_Init's).
 *
 * Usage: abi_layer_one comm_rank|sendrecv8|isend_wait8 ITERS
 */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc < 3)
        MPI_Abort(MPI_COMM_WORLD, 2);
    int iters = atoi(argv[2]), rank = -1;
    double sb = 1.0, rb = 0.0;
    MPI_Status st, sts[2];
    MPI_Request rq[2];
    if (!strcmp(argv[1], "comm_rank")) {
        for (int i = 0; i < iters; i++)
            MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    } else if (!strcmp(argv[1], "sendrecv8")) {
        for (int i = 0; i < iters; i++)
            MPI_Sendrecv(&sb, 1, MPI_DOUBLE, 0, 3, &rb, 1, MPI_DOUBLE, 0, 3, MPI_COMM_SELF, &st);
    } else if (!strcmp(argv[1], "isend_wait8")) {
        for (int i = 0; i < iters; i++) {
            MPI_Irecv(&rb, 1, MPI_DOUBLE, MPI_ANY_SOURCE, 4, MPI_COMM_SELF, &rq[0]);
            MPI_Isend(&sb, 1, MPI_DOUBLE, 0, 4, MPI_COMM_SELF, &rq[1]);
            MPI_Waitall(2, rq, sts);
        }
    } else {
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Finalize();
    return 0;
}
