/* oxmpi-test: ranks=3,4 timeout=60 */
/* MPI_THREAD_MULTIPLE: a communicator constructor waiting for a late member must not hold up
   another constructor of the same rank. Rank 0 runs two threads: one dups P1 (ranks 0 and 1), the
   other dups P2 (ranks 0 and 2) and then sends rank 1 the message rank 1 waits for before its own
   dup of P1. Legal MPI (no cycle: P2's dup needs ranks 0 and 2 only), but a context-id agreement
   where rank 0's P1 dup keeps the other thread from offering rank 0's free ids (or wins by a
   lower parent id while its member is away) waits forever. Repeated, with the ranks' roles kept. */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include "oxtest.h"
#include <pthread.h>
#include <time.h>

#define ITERS 10

static MPI_Comm p1, p2;

static void check_new(MPI_Comm parent, MPI_Comm c, int i)
{
    int r, pr, n;
    MPI_OK(MPI_Comm_rank(c, &r));
    MPI_OK(MPI_Comm_rank(parent, &pr));
    MPI_OK(MPI_Comm_size(c, &n));
    CHECK(r == pr && n == 2, "rank %d of %d, expected %d of 2", r, n, pr);
    int token = 100 * i + r, got = -1;
    MPI_OK(MPI_Sendrecv(&token, 1, MPI_INT, 1 - r, 0, &got, 1, MPI_INT, 1 - r, 0, c, MPI_STATUS_IGNORE));
    CHECK(got == 100 * i + 1 - r, "iteration %d: got %d from the partner, expected %d", i, got, 100 * i + 1 - r);
}

static void *dup_p1(void *arg)
{
    int i = *(int *)arg;
    MPI_Comm c;
    MPI_OK(MPI_Comm_dup(p1, &c));
    check_new(p1, c, i);
    MPI_OK(MPI_Comm_free(&c));
    return NULL;
}

int main(int argc, char **argv)
{
    int provided, rank;
    MPI_OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    /* P1 first, so that it has the lower context id. */
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, rank <= 1 ? 0 : MPI_UNDEFINED, rank, &p1));
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, rank == 0 || rank == 2 ? 0 : MPI_UNDEFINED, rank, &p2));
    for (int i = 0; i < ITERS; i++) {
        if (rank == 0) {
            pthread_t t;
            CHECK(pthread_create(&t, NULL, dup_p1, &i) == 0, "pthread_create");
            struct timespec ts = {0, 20000000}; /* lets the P1 dup start first (not needed for correctness) */
            nanosleep(&ts, NULL);
            MPI_Comm c;
            MPI_OK(MPI_Comm_dup(p2, &c));
            check_new(p2, c, i);
            MPI_OK(MPI_Comm_free(&c));
            MPI_OK(MPI_Send(&i, 1, MPI_INT, 1, 5, MPI_COMM_WORLD));
            pthread_join(t, NULL);
        } else if (rank == 1) {
            int got;
            MPI_OK(MPI_Recv(&got, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            dup_p1(&i);
        } else if (rank == 2) {
            MPI_Comm c;
            MPI_OK(MPI_Comm_dup(p2, &c));
            check_new(p2, c, i);
            MPI_OK(MPI_Comm_free(&c));
        }
    }
    if (p1 != MPI_COMM_NULL)
        MPI_OK(MPI_Comm_free(&p1));
    if (p2 != MPI_COMM_NULL)
        MPI_OK(MPI_Comm_free(&p2));
    MPI_Finalize();
    return 0;
}
