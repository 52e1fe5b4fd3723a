/* Cost of the ABI layer per call (one rank, so no scheduling noise between ranks): the same source
 * built with `mpicc` (MPICH ABI) and `mpicc -mpi-abi` (MPI-5 standard ABI, through libmpi_abi.so.1's
 * conversions); the difference of the two builds' numbers is the layer's cost.
 *
 * For each call pattern: ns per iteration, the minimum over REPS repetitions of ITERS iterations
 * (the minimum is the least disturbed by other load on the machine).
 *   comm_rank   MPI_Comm_rank(MPI_COMM_WORLD)                  (handle in, int out)
 *   sendrecv8   MPI_Sendrecv of 8 bytes to self, with a status  (the blocking p2p path)
 *   isend_wait8 MPI_Irecv + MPI_Isend of 8 bytes to self + MPI_Waitall(2, statuses)
 *
 * Usage: abi_layer [ITERS] [REPS]     (defaults 200000, 15)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static double best(double *t, int n)
{
    double m = t[0];
    for (int i = 1; i < n; i++)
        if (t[i] < m)
            m = t[i];
    return m;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int iters = argc > 1 ? atoi(argv[1]) : 200000, reps = argc > 2 ? atoi(argv[2]) : 15, rank = -1;
    if (iters < 1 || reps < 1 || reps > 100)
        MPI_Abort(MPI_COMM_WORLD, 2);
    double t[100], sb = 1.0, rb = 0.0;
    MPI_Status st, sts[2];
    MPI_Request rq[2];
    for (int r = 0; r < reps; r++) {
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++)
            MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        t[r] = (MPI_Wtime() - t0) / iters * 1e9;
    }
    printf("comm_rank %.1f\n", best(t, reps));
    for (int r = 0; r < reps; r++) {
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++)
            MPI_Sendrecv(&sb, 1, MPI_DOUBLE, 0, 3, &rb, 1, MPI_DOUBLE, 0, 3, MPI_COMM_SELF, &st);
        t[r] = (MPI_Wtime() - t0) / iters * 1e9;
    }
    printf("sendrecv8 %.1f\n", best(t, reps));
    for (int r = 0; r < reps; r++) {
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++) {
            MPI_Irecv(&rb, 1, MPI_DOUBLE, MPI_ANY_SOURCE, 4, MPI_COMM_SELF, &rq[0]);
            MPI_Isend(&sb, 1, MPI_DOUBLE, 0, 4, MPI_COMM_SELF, &rq[1]);
            MPI_Waitall(2, rq, sts);
        }
        t[r] = (MPI_Wtime() - t0) / iters * 1e9;
    }
    printf("isend_wait8 %.1f\n", best(t, reps));
    if (rb != 1.0 || st.MPI_SOURCE != 0 || sts[0].MPI_TAG != 4)
        MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Finalize();
    return 0;
}
