/* Used by scripts/multihost.sh: a job on several (fake) hosts, started by oxmpi's mpiexec -hosts.
 * Usage: multihost-world EXPECTED_SIZE [die|sleep]. Every rank prints
 * "rank R of N host H var V cwd D" (H: $OXMPI_FAKE_HOST, set by scripts/fake-host.sh; V:
 * $MULTIHOST_VAR, given with -genv; D: the working directory), after checking that the ranks form
 * one world that reaches across hosts (allreduce, a ring of sends). With "die", the last rank
 * SIGKILLs itself while the others wait in MPI_Barrier; with "sleep", every rank sleeps in a
 * barrier-free loop until killed. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank, size, sum = 0, got = -1;
    int expected = argc > 1 ? atoi(argv[1]) : -1;
    const char *what = argc > 2 ? argv[2] : "";
    char cwd[4096];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != expected) {
        fprintf(stderr, "multihost-world: rank %d: world of %d, expected %d\n", rank, size, expected);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Sendrecv(&rank, 1, MPI_INT, (rank + 1) % size, 0, &got, 1, MPI_INT, (rank + size - 1) % size, 0,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (sum != size * (size - 1) / 2 || got != (rank + size - 1) % size) {
        fprintf(stderr, "multihost-world: rank %d: sum %d, got %d from the left\n", rank, sum, got);
        MPI_Abort(MPI_COMM_WORLD, 4);
    }
    if (!getcwd(cwd, sizeof cwd))
        strcpy(cwd, "?");
    printf("rank %d of %d host %s var %s cwd %s\n", rank, size, getenv("OXMPI_FAKE_HOST") ? getenv("OXMPI_FAKE_HOST") : "-",
           getenv("MULTIHOST_VAR") ? getenv("MULTIHOST_VAR") : "-", cwd);
    fflush(stdout);
    if (!strcmp(what, "die")) {
        if (rank == size - 1)
            raise(SIGKILL);
        MPI_Barrier(MPI_COMM_WORLD);
    } else if (!strcmp(what, "sleep")) {
        for (;;)
            sleep(1);
    }
    MPI_Finalize();
    return 0;
}
