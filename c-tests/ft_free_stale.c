/* oxmpi-test: ranks=2,3,4 timeout=60 mpich=skip */
/* A communicator freed with messages nobody received must not hand them to the communicator
 * that reuses its context id (issue 22, item 1, without revocation). Every iteration: each rank
 * sends to its right neighbour on C0 (an eager message, and in the rendezvous variant also a
 * large nonblocking send), nobody receives; C0 is freed; C1 is created (dup, split or
 * create, so it gets C0's context id back); each rank receives from its left neighbour on C1
 * and must get C1's message, then finds nothing else pending on C1. The large sends on the freed
 * C0 must still complete (nobody will ever receive them, and the sender must not hang).
 * Many iterations in one run: each one reuses the context id of the one before.
 * mpich=skip: MPICH 4.0.2 hands the message of the freed communicator to its successor (the
 * leak this test catches), and never completes the unreceived large send. */
#include "oxtest.h"
#include <stdlib.h>
#include <string.h>

#define ITERS 60
#define TAG 7
#define BIG (256 * 1024)

enum { BY_DUP, BY_SPLIT, BY_CREATE, METHODS };

static MPI_Comm make(int method, int rank)
{
    MPI_Comm c = MPI_COMM_NULL;
    if (method == BY_DUP) {
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    } else if (method == BY_SPLIT) {
        MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &c));
    } else {
        MPI_Group g;
        MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &g));
        MPI_OK(MPI_Comm_create(MPI_COMM_WORLD, g, &c));
        MPI_OK(MPI_Group_free(&g));
    }
    return c;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    unsigned char *big = oxt_malloc(BIG);
    for (int it = 0; it < ITERS; it++) {
        int method = it % METHODS, rendezvous = (it / METHODS) % 2;
        MPI_Comm c0 = make(method, rank);
        int stale = -(it + 1);
        MPI_OK(MPI_Send(&stale, 1, MPI_INT, right, TAG, c0));
        MPI_Request big_req = MPI_REQUEST_NULL;
        if (rendezvous) {
            oxt_fill(big, BIG, (unsigned)it);
            MPI_OK(MPI_Isend(big, BIG, MPI_BYTE, right, TAG, c0, &big_req));
        }
        MPI_OK(MPI_Comm_free(&c0));
        MPI_Comm c1 = make((method + 1) % METHODS, rank);
        int fresh = it * 1000 + left, got = 0;
        int mine = it * 1000 + rank;
        MPI_Request r[2];
        MPI_Status st;
        MPI_OK(MPI_Irecv(&got, 1, MPI_INT, left, TAG, c1, &r[0]));
        MPI_OK(MPI_Isend(&mine, 1, MPI_INT, right, TAG, c1, &r[1]));
        MPI_OK(MPI_Wait(&r[0], &st));
        MPI_OK(MPI_Wait(&r[1], MPI_STATUS_IGNORE));
        CHECK(got == fresh, "iteration %d (%s, %s): received %d on the new communicator, expected %d%s", it,
              method == BY_DUP ? "dup" : method == BY_SPLIT ? "split" : "create", rendezvous ? "rendezvous" : "eager", got,
              fresh, got < 0 ? " (the freed communicator's message)" : "");
        int count = -1;
        MPI_OK(MPI_Get_count(&st, MPI_INT, &count));
        CHECK(count == 1, "iteration %d: %d ints received, expected 1", it, count);
        /* Every message sent on c1 before the barrier has been received: nothing may be left. */
        MPI_OK(MPI_Barrier(c1));
        int flag = 1;
        MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, c1, &flag, &st));
        CHECK(!flag, "iteration %d: a message from rank %d tag %d is pending on the new communicator (from the freed one)", it,
              st.MPI_SOURCE, st.MPI_TAG);
        if (rendezvous)
            MPI_OK(MPI_Wait(&big_req, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Comm_free(&c1));
    }
    free(big);
    MPI_Finalize();
    return 0;
}
