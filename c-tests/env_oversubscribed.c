/* oxmpi-test: ranks=16,32 timeout=90 */
/* oxmpi-test: env=- env=OXMPI_FIBERS=0 */
/* Many more ranks than cores (in threads mode oxmpi then runs ranks as fibers on one carrier
   thread per core; OXMPI_FIBERS=0 runs them as kernel threads). Every rank must make progress
   also while another rank is blocked in the kernel outside MPI:
   1. a ring exchange and any-source traffic to rank 0, repeated;
   2. each even rank receives from the odd rank above it on a helper thread and pthread_joins it
      (MPI_THREAD_MULTIPLE): the main thread sits in pthread_join, not in MPI, while its partner,
      which shares its carrier, must still run to send;
   3. rank 1 sleeps 50 ms outside MPI while the others exchange, then joins in;
   4. private globals and static locals per rank, and MPI_Is_thread_main in the main thread only.
   Standard MPI; also run with MPICH. */
#define _POSIX_C_SOURCE 200809L
#include "oxtest.h"
#include <pthread.h>
#include <time.h>

static int my_rank_global = -1; /* per rank in threads mode (private instance) */

static int counter(void)
{
    static int calls; /* static local: per rank too */
    return ++calls;
}

struct job {
    int from;
    int got;
    int is_main;
};

static void *receiver(void *p)
{
    struct job *j = p;
    MPI_OK(MPI_Recv(&j->got, 1, MPI_INT, j->from, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Is_thread_main(&j->is_main));
    return NULL;
}

int main(int argc, char **argv)
{
    int provided, rank, size, flag;
    MPI_OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    my_rank_global = rank;
    MPI_OK(MPI_Is_thread_main(&flag));
    CHECK(flag, "MPI_Is_thread_main is false in the main thread");

    /* 1. ring + any-source to rank 0 */
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int i = 0; i < 50; i++) {
        int token = rank * 1000 + i, got = -1;
        MPI_OK(MPI_Sendrecv(&token, 1, MPI_INT, right, 1, &got, 1, MPI_INT, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(got == left * 1000 + i, "ring iteration %d: got %d from %d", i, got, left);
        counter();
    }
    if (rank == 0) {
        int seen[64] = {0};
        for (int i = 0; i < (size - 1) * 5; i++) {
            int v;
            MPI_Status st;
            MPI_OK(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &st));
            CHECK(v == st.MPI_SOURCE * 10 + seen[st.MPI_SOURCE], "any-source: %d from %d (message %d)", v, st.MPI_SOURCE, seen[st.MPI_SOURCE]);
            seen[st.MPI_SOURCE]++;
        }
    } else {
        for (int i = 0; i < 5; i++) {
            int v = rank * 10 + i;
            MPI_OK(MPI_Send(&v, 1, MPI_INT, 0, 2, MPI_COMM_WORLD));
        }
    }

    /* 2. the main thread waits in pthread_join while a helper thread receives */
    if (rank % 2 == 0 && rank + 1 < size) {
        struct job j = {rank + 1, -1, -1};
        pthread_t t;
        CHECK(pthread_create(&t, NULL, receiver, &j) == 0, "pthread_create");
        CHECK(pthread_join(t, NULL) == 0, "pthread_join");
        CHECK(j.got == (rank + 1) * 7, "helper thread got %d", j.got);
        CHECK(j.is_main == 0, "MPI_Is_thread_main is true in a helper thread");
    } else if (rank % 2 == 1) {
        int v = rank * 7;
        MPI_OK(MPI_Send(&v, 1, MPI_INT, rank - 1, 7, MPI_COMM_WORLD));
    }

    /* 3. rank 1 sleeps outside MPI while the others exchange among themselves */
    if (rank == 1) {
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
    } else {
        int peer = rank ^ 2;
        if (peer >= size || peer == 1)
            peer = rank; /* exchange with oneself */
        for (int i = 0; i < 20; i++) {
            int a = rank, b = -1;
            MPI_OK(MPI_Sendrecv(&a, 1, MPI_INT, peer, 3, &b, 1, MPI_INT, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(b == peer, "exchange with %d got %d", peer, b);
        }
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    /* 4. private state */
    CHECK(my_rank_global == rank, "global shows rank %d", my_rank_global);
    CHECK(counter() == 51, "static local counted %d calls, expected 51", counter() - 1);
    MPI_Finalize();
    return 0;
}
