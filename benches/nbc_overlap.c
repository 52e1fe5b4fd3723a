/* OSU-style overlap of MPI_Iallreduce (osu_iallreduce's method): pure = time of
   MPI_Iallreduce + MPI_Wait; then post MPI_Iallreduce, compute (a busy loop, no MPI calls) for
   `pure`, MPI_Wait: total. overlap = 1 - (total - compute) / pure, in percent (100: the
   collective ran entirely during the computation; 0: none of it did). Also the latency of
   MPI_Allreduce for comparison. Times are the maximum over ranks of the mean per call.
   Usage: nbc_overlap [doubles] [iterations]. Prints one line:
   count=N iallreduce_us=... allreduce_us=... overlap_pct=... */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static double busy(double us)
{
    double t0 = MPI_Wtime(), x = 0;
    while ((MPI_Wtime() - t0) * 1e6 < us)
        x += 1e-9;
    return x;
}

static double maxof(double v)
{
    double m;
    MPI_Allreduce(&v, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return m;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, n = argc > 1 ? atoi(argv[1]) : 1, iters = argc > 2 ? atoi(argv[2]) : 2000;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double *s = calloc(n, sizeof *s), *r = calloc(n, sizeof *r), sink = 0;
    MPI_Request q;
    for (int i = 0; i < iters / 10; i++) { /* warm-up */
        MPI_Iallreduce(s, r, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
    }
    double t = 0, t0;
    for (int i = 0; i < iters; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        MPI_Iallreduce(s, r, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        t += MPI_Wtime() - t0;
    }
    double pure = maxof(t / iters * 1e6);
    t = 0;
    for (int i = 0; i < iters; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        MPI_Allreduce(s, r, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        t += MPI_Wtime() - t0;
    }
    double blocking = maxof(t / iters * 1e6);
    double tc = 0;
    t = 0;
    for (int i = 0; i < iters; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        MPI_Iallreduce(s, r, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &q);
        double c0 = MPI_Wtime();
        sink += busy(pure);
        tc += MPI_Wtime() - c0;
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        t += MPI_Wtime() - t0;
    }
    double total = maxof(t / iters * 1e6), compute = maxof(tc / iters * 1e6);
    double overlap = 100.0 * (1.0 - (total - compute) / pure);
    if (overlap < 0)
        overlap = 0;
    if (rank == 0)
        printf("count=%d iallreduce_us=%.2f allreduce_us=%.2f overlap_pct=%.1f%s\n", n, pure, blocking, overlap, sink < 0 ? " " : "");
    free(s);
    free(r);
    MPI_Finalize();
    return 0;
}
