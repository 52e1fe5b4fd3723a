/* oxmpi demo: a token goes once around the ring 0 -> 1 -> ... -> N-1 -> 0.
 * Each rank adds its rank number to the token and prints a line; rank 0 prints the total,
 * which must be 0 + 1 + ... + (N-1). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size, token;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    if (rank == 0) {
        token = 0;
        printf("rank 0 of %d: starting the token at 0\n", size);
        fflush(stdout);
        if (size > 1) {
            MPI_Send(&token, 1, MPI_INT, next, 0, MPI_COMM_WORLD);
            MPI_Recv(&token, 1, MPI_INT, prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        int expected = size * (size - 1) / 2;
        printf("rank 0: the token came back with total %d (expected %d): %s\n", token, expected,
               token == expected ? "OK" : "WRONG");
        fflush(stdout);
        MPI_Finalize();
        return token == expected ? 0 : 1;
    }
    MPI_Recv(&token, 1, MPI_INT, prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    token += rank;
    printf("rank %d of %d: got the token from rank %d, passing %d to rank %d\n", rank, size, prev, token,
           next);
    fflush(stdout);
    MPI_Send(&token, 1, MPI_INT, next, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
