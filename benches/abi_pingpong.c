/* Cost of each ABI layer on the p2p path: an 8-byte MPI_Send/MPI_Recv ping-pong between 2 ranks,
 * the same source built against the MPICH ABI (oxmpi's mpicc), Open MPI 4.1's (mpicc.openmpi,
 * run by oxmpi's mpiexec on oxmpi's libmpi.so.40) and the MPI-5 standard ABI (mpicc -mpi-abi);
 * scripts/bench-abi.sh builds and runs them. Only standard names, so it compiles with each header.
 *
 * Rank 0 prints "rt_ns X": ns per round trip, the fastest of REPS repetitions of ITERS round
 * trips each (the minimum is the least disturbed by other load), after a warm-up. Every message
 * is checked, so a broken layer gives no number.
 *
 * Usage: abi_pingpong [ITERS] [REPS]     (defaults 20000, 10)
 */
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
    long iters = argc > 1 ? atol(argv[1]) : 20000;
    int reps = argc > 2 ? atoi(argv[2]) : 10;
    if (size != 2 || iters < 1 || reps < 1) {
        if (rank == 0)
            fprintf(stderr, "abi_pingpong: needs 2 ranks, ITERS >= 1, REPS >= 1\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int peer = 1 - rank;
    unsigned char sb[8], rb[8];
    for (int i = 0; i < 8; i++)
        sb[i] = (unsigned char)(rank * 16 + i);
    double best = 1e30;
    for (int r = -1; r < reps; r++) { /* r = -1: warm-up */
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (long i = 0; i < iters; i++) {
            if (rank == 0) {
                MPI_Send(sb, 8, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
                MPI_Recv(rb, 8, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(rb, 8, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(sb, 8, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
            }
        }
        double ns = (MPI_Wtime() - t0) / (double)iters * 1e9;
        for (int i = 0; i < 8; i++)
            if (rb[i] != (unsigned char)(peer * 16 + i)) {
                fprintf(stderr, "abi_pingpong: rank %d received wrong data\n", rank);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        if (r >= 0 && ns < best)
            best = ns;
    }
    if (rank == 0)
        printf("rt_ns %.1f\n", best);
    MPI_Finalize();
    return 0;
}
