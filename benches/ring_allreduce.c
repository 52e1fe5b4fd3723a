/* Oversubscription benchmark (the TMPI result, seed 003 section 6.2): every rank passes a token
 * around a ring with MPI_Sendrecv, then all ranks do a small MPI_Allreduce; repeated. Run with more
 * ranks than cores (16 on 2 cores). Prints the median time per iteration over several repetitions:
 *   iter_ms=X
 * Uses MPI_Sendrecv, MPI_Allreduce and MPI_Barrier only. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int rank, size, iters = argc > 1 ? atoi(argv[1]) : 20, reps = 5;
    double times[16];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int r = -1; r < reps; r++) { /* r == -1: warm-up */
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++) {
            double token = rank, got = -1, sum = 0, mine = rank + i;
            MPI_Sendrecv(&token, 1, MPI_DOUBLE, right, 1, &got, 1, MPI_DOUBLE, left, 1, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
            if (got != left) {
                fprintf(stderr, "rank %d: ring token %g, expected %d\n", rank, got, left);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
            MPI_Allreduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            if (sum != (double)size * (size - 1) / 2 + (double)size * i) {
                fprintf(stderr, "rank %d: allreduce %g wrong\n", rank, sum);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        }
        double t = (MPI_Wtime() - t0) / iters;
        MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (r >= 0)
            times[r] = t;
    }
    qsort(times, reps, sizeof(double), cmp);
    if (rank == 0)
        printf("# ring+allreduce: %d ranks, %d iterations x %d repetitions\niter_ms=%.4f\n", size, iters, reps,
               times[reps / 2] * 1e3);
    MPI_Finalize();
    return 0;
}
