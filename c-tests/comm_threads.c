/* oxmpi-test: ranks=1,2,4 */
/* MPI_THREAD_MULTIPLE: two threads per rank create and free communicators at the same time, each
   from its own parent (collectives on one communicator must not be concurrent, on different ones
   they may be). Context ids must never collide: each new communicator carries a ring exchange
   that would mix up the threads' messages if two of them shared a context id. */
#include "oxtest.h"
#include <pthread.h>

static int rank, size;
static MPI_Comm parents[2];

static void *worker(void *arg)
{
    int index = *(int *)arg;
    MPI_Comm parent = parents[index];
    for (int i = 0; i < 150; i++) {
        MPI_Comm c;
        MPI_OK(MPI_Comm_dup(parent, &c));
        int token = index * 1000 + i, got = -1;
        int right = (rank + 1) % size, left = (rank + size - 1) % size;
        MPI_OK(MPI_Sendrecv(&token, 1, MPI_INT, right, 0, &got, 1, MPI_INT, left, 0, c, MPI_STATUS_IGNORE));
        CHECK(got == token, "thread %d iteration %d got %d, expected %d", index, i, got, token);
        MPI_OK(MPI_Comm_free(&c));
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    static int index[2] = {0, 1};
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &parents[0]));
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &parents[1]));
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        CHECK(pthread_create(&t[i], NULL, worker, &index[i]) == 0, "pthread_create");
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    MPI_OK(MPI_Comm_free(&parents[0]));
    MPI_OK(MPI_Comm_free(&parents[1]));
    MPI_Finalize();
    return 0;
}
