/* Collective sweep (not run by the tests): times MPI_Bcast, MPI_Reduce or MPI_Allreduce (root 0,
 * MPI_SUM on doubles for the reductions) at 8 B, 64 B, 512 B, 4 KiB, 32 KiB, 256 KiB, 1 MiB and
 * 4 MiB (up to MAX). For each size it runs a warm-up and 3 timed repetitions of a few calls and
 * prints the best repetition's time per call, the slowest rank's:
 *   bcast 8 1.234          (collective, bytes, microseconds)
 * Usage: coll_sweep bcast|reduce|allreduce [MAX]   (MAX default 4194304)
 * Force oxmpi's algorithm with OXMPI_BCAST_ALGORITHM=... etc. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *what = argc > 1 ? argv[1] : "bcast";
    long max = argc > 2 ? atol(argv[2]) : 4L << 20;
    int op = strcmp(what, "bcast") == 0 ? 0 : strcmp(what, "reduce") == 0 ? 1 : 2;
    double *s = malloc((size_t)max), *r = malloc((size_t)max);
    for (long i = 0; i < max / 8; i++)
        s[i] = r[i] = rank + i % 7;
    static const long sizes[] = {8, 64, 512, 4096, 32768, 262144, 1 << 20, 4 << 20};
    for (int k = 0; k < 8 && sizes[k] <= max; k++) {
        long bytes = sizes[k];
        int n = (int)(bytes / 8);
        int iters = bytes <= 4096 ? 40 : bytes <= 65536 ? 16 : bytes <= 1 << 20 ? 6 : 3;
        double best = 1e30;
        for (int rep = -1; rep < 3; rep++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            for (int i = 0; i < iters; i++) {
                if (op == 0)
                    MPI_Bcast(s, n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
                else if (op == 1)
                    MPI_Reduce(s, r, n, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
                else
                    MPI_Allreduce(s, r, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            }
            double t = (MPI_Wtime() - t0) / iters, tmax;
            MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            if (rep >= 0 && tmax < best)
                best = tmax;
        }
        if (rank == 0)
            printf("%s %ld %.1f\n", what, bytes, best * 1e6);
    }
    free(s);
    free(r);
    MPI_Finalize();
    return 0;
}
