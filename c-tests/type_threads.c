/* oxmpi-test: ranks=2,4 timeout=60 */
/* MPI_THREAD_MULTIPLE with non-contiguous derived datatypes in nonblocking operations: three
   threads per rank exchange vectors with the pair partner (rank ^ 1) at the same time, each on its
   own tag, completing with MPI_Wait, MPI_Test and MPI_Waitall, so request ids are released and
   reused by other threads all the time. Each receive must hold its own thread's data, with the
   gaps untouched. */
#include "oxtest.h"
#include <pthread.h>

#define NT 3
#define ITERS 60
#define VEXT 10 /* extent of vector(3, 2, 4) of ints: (3-1)*4+2 */
#define SENT (-5)

static int rank, peer;
static MPI_Datatype vec;

static int is_data(int p) { return (p % VEXT) % 4 < 2; }

static void *worker(void *arg)
{
    int t = *(int *)arg;
    for (int it = 0; it < ITERS; it++) {
        /* Alternate small (eager) and large (rendezvous) messages. */
        int n = (it % 3 == 0) ? 700 : 2 + it % 5;
        int *s = oxt_malloc(sizeof(int) * (size_t)n * VEXT), *r = oxt_malloc(sizeof(int) * (size_t)n * VEXT);
        for (int p = 0; p < n * VEXT; p++) {
            s[p] = is_data(p) ? rank * 1000000 + t * 100000 + it * 100 + p % 100 : SENT;
            r[p] = SENT;
        }
        MPI_Request q[2];
        MPI_OK(MPI_Irecv(r, n, vec, peer, t, MPI_COMM_WORLD, &q[0]));
        MPI_OK(MPI_Isend(s, n, vec, peer, t, MPI_COMM_WORLD, &q[1]));
        switch (it % 3) {
        case 0:
            MPI_OK(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
            break;
        case 1:
            MPI_OK(MPI_Wait(&q[1], MPI_STATUS_IGNORE));
            MPI_OK(MPI_Wait(&q[0], MPI_STATUS_IGNORE));
            break;
        default: {
            int flag = 0;
            while (!flag)
                MPI_OK(MPI_Test(&q[0], &flag, MPI_STATUS_IGNORE));
            MPI_OK(MPI_Wait(&q[1], MPI_STATUS_IGNORE));
        }
        }
        for (int p = 0; p < n * VEXT; p++) {
            int want = is_data(p) ? peer * 1000000 + t * 100000 + it * 100 + p % 100 : SENT;
            CHECK(r[p] == want, "thread %d iteration %d: int %d is %d, expected %d", t, it, p, r[p], want);
        }
        free(s);
        free(r);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided, size;
    MPI_OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    peer = rank ^ 1;
    MPI_OK(MPI_Type_vector(3, 2, 4, MPI_INT, &vec));
    MPI_OK(MPI_Type_commit(&vec));
    static int index[NT] = {0, 1, 2};
    pthread_t th[NT];
    for (int i = 0; i < NT; i++)
        CHECK(pthread_create(&th[i], NULL, worker, &index[i]) == 0, "pthread_create");
    for (int i = 0; i < NT; i++)
        pthread_join(th[i], NULL);
    MPI_OK(MPI_Type_free(&vec));
    MPI_OK(MPI_Finalize());
    return 0;
}
