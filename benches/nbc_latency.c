/* Latency of nonblocking collectives + MPI_Wait against their blocking forms (the method of
   benches/nbc_overlap.c without the computation): MPI_Ialltoall, MPI_Igather, MPI_Iallgather
   and MPI_Iscan of `count` ints per block. Times are the maximum over ranks of the mean per call,
   each iteration after a barrier. Usage: nbc_latency [count] [iterations]. Prints one line:
   count=N ialltoall_us=... alltoall_us=... igather_us=... iallgather_us=... iscan_us=... */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static double maxof(double v)
{
    double m;
    MPI_Allreduce(&v, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return m;
}

static int n, size;
static int *s, *r;

static void run(int which, MPI_Request *q)
{
    switch (which) {
    case 0: MPI_Ialltoall(s, n, MPI_INT, r, n, MPI_INT, MPI_COMM_WORLD, q); break;
    case 1: MPI_Alltoall(s, n, MPI_INT, r, n, MPI_INT, MPI_COMM_WORLD); *q = MPI_REQUEST_NULL; break;
    case 2: MPI_Igather(s, n, MPI_INT, r, n, MPI_INT, 0, MPI_COMM_WORLD, q); break;
    case 3: MPI_Iallgather(s, n, MPI_INT, r, n, MPI_INT, MPI_COMM_WORLD, q); break;
    case 4: MPI_Iscan(s, r, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, q); break;
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, iters = argc > 2 ? atoi(argv[2]) : 2000;
    n = argc > 1 ? atoi(argv[1]) : 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    s = calloc((size_t)n * size, sizeof *s), r = calloc((size_t)n * size, sizeof *r);
    const char *names[] = {"ialltoall", "alltoall", "igather", "iallgather", "iscan"};
    printf("%s", rank == 0 ? "" : "");
    double res[5];
    for (int w = 0; w < 5; w++) {
        MPI_Request q;
        for (int i = 0; i < iters / 10; i++) {
            run(w, &q);
            MPI_Wait(&q, MPI_STATUS_IGNORE);
        }
        double t = 0, t0;
        for (int i = 0; i < iters; i++) {
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
            run(w, &q);
            MPI_Wait(&q, MPI_STATUS_IGNORE);
            t += MPI_Wtime() - t0;
        }
        res[w] = maxof(t / iters * 1e6);
    }
    if (rank == 0) {
        printf("count=%d", n);
        for (int w = 0; w < 5; w++)
            printf(" %s_us=%.2f", names[w], res[w]);
        printf("\n");
    }
    free(s), free(r);
    MPI_Finalize();
    return 0;
}
