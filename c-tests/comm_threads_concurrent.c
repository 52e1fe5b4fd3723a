/* oxmpi-test: ranks=2,4 timeout=60 env-matrix=OXT_OP=dup|idup|create_group|split|same_parent_tags */
/* MPI_THREAD_MULTIPLE: four threads per rank create communicators at the same time, each thread
   from its own parent, and the threads of different ranks reach their parents in different orders
   (thread t of rank r works on parent (t + r) mod 4). Each rank's threads then compete for the
   rank's free context ids against threads of other ranks working on other parents: the
   agreement must neither hand the same context id to two communicators of one rank nor wait
   for another thread's communicator (a livelock or deadlock ends in the runner's time-out).
   Every new communicator carries a ring exchange that would mix up two communicators sharing a
   context id. OXT_OP picks the constructor (all of them, in turn, when unset):
     dup, idup, create_group, split (MPI_Comm_split with one color), and
     same_parent_tags (MPI_Comm_create_group on one parent, MPI_COMM_WORLD, told apart by tag, as
     MPI 4.1 section 7.4.2 allows for concurrent calls).
   Unset (as in the runner's --mpich runs) leaves out create_group: MPICH 4.0.2 crashes in it
   (signal 11 inside PMPI_Comm_create_group) when threads call it on different parents. */
#include "oxtest.h"
#include <pthread.h>

#define THREADS 4
#define ITERS 25

static int rank, size;
static MPI_Comm parents[THREADS];
static MPI_Group world_group;
static const char *op;

static void ring(MPI_Comm c, int token_base, int i)
{
    int n, me;
    MPI_OK(MPI_Comm_size(c, &n));
    MPI_OK(MPI_Comm_rank(c, &me));
    CHECK(n == size && me == rank, "new communicator: rank %d of %d, expected %d of %d", me, n, rank, size);
    int token = token_base * 1000 + i, got = -1;
    MPI_OK(MPI_Sendrecv(&token, 1, MPI_INT, (me + 1) % n, 7, &got, 1, MPI_INT, (me + n - 1) % n, 7, c, MPI_STATUS_IGNORE));
    CHECK(got == token, "%s: parent %d iteration %d got %d, expected %d", op, token_base, i, got, token);
}

static void *worker(void *arg)
{
    int t = *(int *)arg;
    int p = (t + rank) % THREADS;
    MPI_Comm parent = strcmp(op, "same_parent_tags") == 0 ? MPI_COMM_WORLD : parents[p];
    for (int i = 0; i < ITERS; i++) {
        MPI_Comm c = MPI_COMM_NULL;
        if (strcmp(op, "dup") == 0) {
            MPI_OK(MPI_Comm_dup(parent, &c));
        } else if (strcmp(op, "idup") == 0) {
            MPI_Request r;
            MPI_OK(MPI_Comm_idup(parent, &c, &r));
            MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        } else if (strcmp(op, "create_group") == 0) {
            MPI_OK(MPI_Comm_create_group(parent, world_group, 0, &c));
        } else if (strcmp(op, "split") == 0) {
            MPI_OK(MPI_Comm_split(parent, 3, rank, &c));
        } else {
            MPI_OK(MPI_Comm_create_group(parent, world_group, 100 + p, &c));
        }
        CHECK(c != MPI_COMM_NULL, "%s gave MPI_COMM_NULL", op);
        ring(c, p, i);
        MPI_OK(MPI_Comm_free(&c));
    }
    return NULL;
}

static void run(const char *which)
{
    op = which;
    static int index[THREADS];
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++) {
        index[t] = t;
        CHECK(pthread_create(&th[t], NULL, worker, &index[t]) == 0, "pthread_create");
    }
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
}

int main(int argc, char **argv)
{
    int provided;
    MPI_OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
    for (int p = 0; p < THREADS; p++)
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &parents[p]));
    const char *which = getenv("OXT_OP");
    if (which) {
        run(which);
    } else {
        const char *all[] = {"dup", "idup", "split", "same_parent_tags"};
        for (int k = 0; k < 4; k++)
            run(all[k]);
    }
    for (int p = 0; p < THREADS; p++)
        MPI_OK(MPI_Comm_free(&parents[p]));
    MPI_OK(MPI_Group_free(&world_group));
    MPI_Finalize();
    return 0;
}
