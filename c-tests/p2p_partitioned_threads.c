/* oxmpi-test: ranks=2,4,8 timeout=60 */
/* Partitioned communication under MPI_THREAD_MULTIPLE, its intended use: on the sending rank of
   each pair, 4 threads fill and ready their own partitions (thread t: partitions t, t+4, ...)
   of one request at the same time; on the receiving rank, 4 threads poll MPI_Parrived on their
   own receive partitions (half as many, twice as large) and check the data as it arrives. The
   requests are restarted for every iteration. */
#define _POSIX_C_SOURCE 200809L
#include "oxtest.h"
#include <pthread.h>

#define NT 4
#define SP 16
#define RP 8
#define PCOUNT 3000 /* ints per send partition */
#define ITERS 5

static int peer, iter;
static int *buf;
static MPI_Request req;

static int value(int it, long k)
{
    return it * 7777777 + (int)k;
}

static void *sender_thread(void *arg)
{
    int t = (int)(long)arg;
    for (int p = t; p < SP; p += NT) {
        for (long k = (long)p * PCOUNT; k < (long)(p + 1) * PCOUNT; k++)
            buf[k] = value(iter, k);
        MPI_OK(MPI_Pready(p, req));
    }
    return NULL;
}

static void *receiver_thread(void *arg)
{
    int t = (int)(long)arg;
    long per = (long)SP * PCOUNT / RP;
    for (int p = t; p < RP; p += NT) {
        int flag = 0;
        while (!flag)
            MPI_OK(MPI_Parrived(req, p, &flag));
        for (long k = p * per; k < (p + 1) * per; k++)
            CHECK(buf[k] == value(iter, k), "iter %d: element %ld of arrived partition %d is %d", iter, k, p, buf[k]);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int rank, size, provided;
    MPI_OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    CHECK(provided == MPI_THREAD_MULTIPLE, "MPI_THREAD_MULTIPLE not provided (%d)", provided);
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    peer = rank ^ 1;
    int sender = (rank & 1) == 0;
    if (peer < size) {
        buf = oxt_malloc((size_t)SP * PCOUNT * sizeof(int));
        if (sender)
            MPI_OK(MPI_Psend_init(buf, SP, PCOUNT, MPI_INT, peer, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
        else
            MPI_OK(MPI_Precv_init(buf, RP, (MPI_Count)SP * PCOUNT / RP, MPI_INT, peer, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
        for (iter = 0; iter < ITERS; iter++) {
            pthread_t th[NT];
            MPI_Status st;
            if (!sender)
                for (long k = 0; k < (long)SP * PCOUNT; k++)
                    buf[k] = -1;
            MPI_OK(MPI_Start(&req));
            for (long t = 0; t < NT; t++)
                CHECK(pthread_create(&th[t], NULL, sender ? sender_thread : receiver_thread, (void *)t) == 0, "pthread_create");
            for (int t = 0; t < NT; t++)
                CHECK(pthread_join(th[t], NULL) == 0, "pthread_join");
            MPI_OK(MPI_Wait(&req, &st));
            if (!sender)
                CHECK_STATUS(st, peer, 9, MPI_INT, SP * PCOUNT);
        }
        MPI_OK(MPI_Request_free(&req));
        free(buf);
    }
    MPI_OK(MPI_Finalize());
    return 0;
}
