/* oxmpi-test: ranks=1,2,3,4,8 timeout=120 */
/* Collectives from several threads of every rank at once, each thread on its own communicator
   (MPI_THREAD_MULTIPLE; MPI orders collectives per communicator only): blocking Bcast, Reduce,
   Allreduce and Barrier, and nonblocking ones completed with MPI_Test loops, all checked. */
#include "oxtest.h"
#include <pthread.h>

enum { THREADS = 3, ITERS = 15, N = 513 };

static int rank, size;
static MPI_Comm comms[THREADS];

static void *worker(void *arg)
{
    int t = (int)(long)arg;
    MPI_Comm c = comms[t];
    int *v = oxt_malloc(sizeof(int) * N), *out = oxt_malloc(sizeof(int) * N);
    for (int it = 0; it < ITERS; it++) {
        int root = (it + t) % size;
        for (int i = 0; i < N; i++)
            v[i] = rank == root ? i * (t + 1) + it : -1;
        MPI_OK(MPI_Bcast(v, N, MPI_INT, root, c));
        for (int i = 0; i < N; i++)
            CHECK(v[i] == i * (t + 1) + it, "thread %d bcast it %d [%d] = %d", t, it, i, v[i]);
        for (int i = 0; i < N; i++)
            v[i] = rank + i + t;
        MPI_OK(MPI_Allreduce(v, out, N, MPI_INT, MPI_SUM, c));
        for (int i = 0; i < N; i++)
            CHECK(out[i] == size * (size - 1) / 2 + size * (i + t), "thread %d allreduce [%d] = %d", t, i, out[i]);
        MPI_OK(MPI_Reduce(v, out, N, MPI_INT, MPI_MAX, root, c));
        if (rank == root)
            for (int i = 0; i < N; i++)
                CHECK(out[i] == size - 1 + i + t, "thread %d reduce [%d] = %d", t, i, out[i]);
        MPI_Request r[2];
        int x = rank * (t + 1), sum = -1;
        MPI_OK(MPI_Iallreduce(&x, &sum, 1, MPI_INT, MPI_SUM, c, &r[0]));
        MPI_OK(MPI_Ibarrier(c, &r[1]));
        int done = 0;
        while (!done)
            MPI_OK(MPI_Testall(2, r, &done, MPI_STATUSES_IGNORE));
        CHECK(sum == (t + 1) * size * (size - 1) / 2, "thread %d iallreduce = %d", t, sum);
        MPI_OK(MPI_Barrier(c));
    }
    free(v);
    free(out);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    CHECK(provided == MPI_THREAD_MULTIPLE, "MPI_THREAD_MULTIPLE not provided (%d)", provided);
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    for (int t = 0; t < THREADS; t++)
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]));
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++)
        CHECK(pthread_create(&th[t], NULL, worker, (void *)(long)t) == 0, "pthread_create");
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    for (int t = 0; t < THREADS; t++)
        MPI_OK(MPI_Comm_free(&comms[t]));
    MPI_OK(MPI_Finalize());
    if (rank == 0)
        printf("coll_threads: OK\n");
    return 0;
}
