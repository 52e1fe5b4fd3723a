/* RMA latency and bandwidth between ranks 0 and 1 (2 ranks): for each size from 8 B to 4 MiB,
   rank 0 does MPI_Put (then MPI_Get) + MPI_Win_flush of that size to rank 1 inside one
   MPI_Win_lock_all epoch, on a window from MPI_Win_allocate, and on one from MPI_Win_create
   over malloc'ed memory. Prints one line per (window, op, size): microseconds per operation
   (put/get + flush, median of 5 repetitions) and MB/s.
   Usage: rma_latency [--max BYTES] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXSZ (4 << 20)

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void run(const char *kind, MPI_Win win, char *buf, int rank, long max)
{
    for (int op = 0; op < 2; op++) {
        for (long sz = 8; sz <= max; sz = (sz * 4 > max && sz < max) ? max : sz * 4) {
            int iters = sz <= 65536 ? 2000 : (sz <= 1 << 20 ? 200 : 50);
            double t[5];
            for (int rep = 0; rep < 5; rep++) {
                MPI_Barrier(MPI_COMM_WORLD);
                double t0 = MPI_Wtime();
                if (rank == 0) {
                    for (int i = 0; i < iters; i++) {
                        if (op == 0)
                            MPI_Put(buf, (int)sz, MPI_BYTE, 1, 0, (int)sz, MPI_BYTE, win);
                        else
                            MPI_Get(buf, (int)sz, MPI_BYTE, 1, 0, (int)sz, MPI_BYTE, win);
                        MPI_Win_flush(1, win);
                    }
                }
                t[rep] = (MPI_Wtime() - t0) / iters;
                MPI_Barrier(MPI_COMM_WORLD);
            }
            qsort(t, 5, sizeof t[0], cmp);
            if (rank == 0)
                printf("%-8s %-4s %8ld B %10.3f us %10.1f MB/s\n", kind, op ? "get" : "put", sz, t[2] * 1e6, sz / t[2] / 1e6);
        }
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    long max = MAXSZ;
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--max"))
            max = atol(argv[i + 1]);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char *buf = malloc(MAXSZ);
    memset(buf, rank, MAXSZ);
    char *mem;
    MPI_Win win;
    MPI_Win_allocate(MAXSZ, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    MPI_Win_lock_all(0, win);
    run("allocate", win, buf, rank, max);
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    char *user = malloc(MAXSZ);
    MPI_Win_create(user, MAXSZ, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_lock_all(0, win);
    run("create", win, buf, rank, max);
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    free(user);
    free(buf);
    MPI_Finalize();
    return 0;
}
