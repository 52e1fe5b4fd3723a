/* Windowed bandwidth and message rate in the OSU style (osu_bw / osu_mbw_mr): rank 0 posts a
   window of W MPI_Isend of SIZE bytes to rank 1, which posts W MPI_Irecv; both MPI_Waitall, then
   rank 1 answers with a 4-byte ack. ITERS windows are timed after WARMUP untimed ones.
   Prints: size, MB/s and messages per second, one line per size.
   Usage: msg_rate [ITERS [W [SIZES...]]]   (exactly 2 ranks; default sizes 1 B to 4 MiB) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXW 256

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "msg_rate: run with exactly 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int iters = argc > 1 ? atoi(argv[1]) : 200, w = argc > 2 ? atoi(argv[2]) : 64;
    if (w < 1 || w > MAXW || iters < 1) {
        if (rank == 0)
            fprintf(stderr, "msg_rate: ITERS >= 1 and 1 <= W <= %d\n", MAXW);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long sizes[64];
    int nsizes = 0;
    if (argc > 3)
        for (int i = 3; i < argc && nsizes < 64; i++)
            sizes[nsizes++] = atol(argv[i]);
    else
        for (long s = 1; s <= 4L << 20; s *= 4)
            sizes[nsizes++] = s;
    long maxs = 1;
    for (int i = 0; i < nsizes; i++)
        maxs = sizes[i] > maxs ? sizes[i] : maxs;
    char *buf = malloc((size_t)maxs * w);
    memset(buf, rank + 1, (size_t)maxs * w);
    MPI_Request req[MAXW];
    static MPI_Status st[MAXW];
    int ack = 0;
    for (int k = 0; k < nsizes; k++) {
        long s = sizes[k];
        /* fewer windows for large messages: about the same bytes per size beyond 64 KiB */
        int it = s > 65536 ? (iters * 65536 / s > 10 ? (int)(iters * 65536 / s) : 10) : iters;
        int warm = it / 10 > 2 ? it / 10 : 2;
        double t0 = 0;
        for (int i = 0; i < warm + it; i++) {
            if (i == warm) {
                MPI_Barrier(MPI_COMM_WORLD);
                t0 = MPI_Wtime();
            }
            if (rank == 0) {
                for (int j = 0; j < w; j++)
                    MPI_Isend(buf + (size_t)j * s, (int)s, MPI_CHAR, 1, 100, MPI_COMM_WORLD, &req[j]);
                MPI_Waitall(w, req, st);
                MPI_Recv(&ack, 1, MPI_INT, 1, 101, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                for (int j = 0; j < w; j++)
                    MPI_Irecv(buf + (size_t)j * s, (int)s, MPI_CHAR, 0, 100, MPI_COMM_WORLD, &req[j]);
                MPI_Waitall(w, req, st);
                MPI_Send(&ack, 1, MPI_INT, 0, 101, MPI_COMM_WORLD);
            }
        }
        double t = MPI_Wtime() - t0;
        if (rank == 0)
            printf("%ld %.2f %.0f\n", s, (double)s * w * it / t / 1e6, (double)w * it / t);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
