/* Time to spawn: one rank calls MPI_Comm_spawn of N copies of this program, REPS times; each
   time is from the call until it returned (the children are in MPI_Init's connect) plus one
   barrier over the intercommunicator (every child is up), then MPI_Comm_disconnect. Prints the
   best and the mean in milliseconds.
   Usage: spawn_time N [REPS]   (the parent runs as a 1-rank job) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Comm parent, inter;
    MPI_Init(&argc, &argv);
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL) {
        MPI_Barrier(parent);
        MPI_Comm_disconnect(&parent);
        MPI_Finalize();
        return 0;
    }
    int n = argc > 1 ? atoi(argv[1]) : 1, reps = argc > 2 ? atoi(argv[2]) : 5;
    double best = 1e30, sum = 0;
    for (int r = 0; r < reps; r++) {
        int errs[256];
        double t = MPI_Wtime();
        int rc = MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, n, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter,
                                n <= 256 ? errs : MPI_ERRCODES_IGNORE);
        if (rc != MPI_SUCCESS) {
            fprintf(stderr, "spawn_time: MPI_Comm_spawn of %d failed\n", n);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        MPI_Barrier(inter);
        t = MPI_Wtime() - t;
        MPI_Comm_disconnect(&inter);
        best = t < best ? t : best;
        sum += t;
    }
    printf("spawn %d ranks: best %.2f ms, mean %.2f ms over %d\n", n, best * 1e3, sum / reps * 1e3, reps);
    MPI_Finalize();
    return 0;
}
