/* Used by scripts/foreign-launch.sh: started by a foreign launcher (mpiexec.mpich), the ranks
 * must form ONE job of the expected size, not that many singletons.
 * Usage: foreign-world EXPECTED_SIZE [die]. Prints "world ok: N ranks" on rank 0; exit status 0 =
 * pass. With "die", the last rank SIGKILLs itself mid-job while the others wait for it in
 * MPI_Barrier: the launcher must end the job (nonzero status, no hang). */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

static void check(int cond, int rank, const char *what)
{
    if (!cond) {
        fprintf(stderr, "foreign-world: rank %d: %s\n", rank, what);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
}

int main(int argc, char **argv)
{
    int rank, size, sum = 0, flag = 0, *appnum = NULL;
    int expected = argc > 1 ? atoi(argv[1]) : -1;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    check(size == expected, rank, "MPI_COMM_WORLD does not have the size the launcher was asked for");
    /* Distinct ranks 0..size-1 that reach each other. */
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    check(sum == size * (size - 1) / 2, rank, "the ranks are not 0..size-1");
    int token = rank, from = -1;
    MPI_Sendrecv(&token, 1, MPI_INT, (rank + 1) % size, 1, &from, 1, MPI_INT, (rank + size - 1) % size, 1,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    check(from == (rank + size - 1) % size, rank, "ring message from the wrong rank");
    if (argc > 2 && strcmp(argv[2], "die") == 0) {
        if (rank == size - 1)
            raise(SIGKILL);
        MPI_Barrier(MPI_COMM_WORLD);
        check(0, rank, "MPI_Barrier returned although a rank was killed");
    }
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag);
    check(flag && *appnum == 0, rank, "MPI_APPNUM is not 0");
    if (rank == 0)
        printf("world ok: %d ranks\n", size);
    MPI_Finalize();
    return 0;
}
