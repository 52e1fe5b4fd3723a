/* Tiny ring test used by scripts/test.sh when c-tests/p2p_blocking.c is absent.
 * Built with the system MPICH (mpicc.mpich), run under oxmpi's mpiexec: checks that an
 * unmodified MPICH binary (NEEDED libmpich.so.12) works with oxmpi. Exit status 0 = pass. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define ROUNDS 100

static void check(int cond, int rank, const char *what)
{
    if (!cond) {
        fprintf(stderr, "mpich-hello: rank %d: %s\n", rank, what);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

int main(int argc, char **argv)
{
    int rank, size, round, token, buf[64], i;
    MPI_Status st;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    check(size >= 2, rank, "needs at least 2 ranks");

    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    for (round = 0; round < ROUNDS; round++) {
        if (rank == 0) {
            token = round;
            MPI_Send(&token, 1, MPI_INT, next, 7, MPI_COMM_WORLD);
            MPI_Recv(&token, 1, MPI_INT, prev, 7, MPI_COMM_WORLD, &st);
            check(token == round + size - 1, rank, "wrong token after one lap");
        } else {
            MPI_Recv(&token, 1, MPI_INT, prev, 7, MPI_COMM_WORLD, &st);
            check(st.MPI_SOURCE == prev && st.MPI_TAG == 7, rank, "wrong status");
            token++;
            MPI_Send(&token, 1, MPI_INT, next, 7, MPI_COMM_WORLD);
        }
    }

    /* A bigger message with ANY_SOURCE/ANY_TAG and MPI_Get_count. */
    for (i = 0; i < 64; i++)
        buf[i] = rank * 1000 + i;
    if (rank != 0) {
        MPI_Send(buf, 64, MPI_INT, 0, rank, MPI_COMM_WORLD);
    } else {
        for (int n = 1; n < size; n++) {
            int count;
            MPI_Recv(buf, 64, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            MPI_Get_count(&st, MPI_INT, &count);
            check(count == 64 && st.MPI_TAG == st.MPI_SOURCE, rank, "wrong count or tag");
            check(buf[5] == st.MPI_SOURCE * 1000 + 5, rank, "wrong payload");
        }
    }

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpich-hello: %d ranks, %d ring laps: OK\n", size, ROUNDS);
    MPI_Finalize();
    return 0;
}
