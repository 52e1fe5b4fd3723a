/* oxmpi-test: ranks=2,3,4 timeout=60 mpich=skip */
/* Revoke, free, reuse (issue 22, items 1 and 3): neither a message nor a revocation of a freed
 * communicator may reach the communicator that reuses its context id. Every iteration: each
 * rank sends to its right neighbour on C0, nobody receives; the last rank revokes C0 and
 * everybody frees it at once (the revocation may still be on its way); C1 is created by dup,
 * split or shrink of MPI_COMM_WORLD, or (the usual recovery) C1 = shrink(C0) before C0 is
 * freed and C2 = dup(C1) after, which takes C0's context id. Then each rank receives from its
 * left neighbour on the new communicator and must get its message; after an exchange with every
 * rank (so the revoker's revocation has arrived everywhere: messages between two ranks arrive in
 * order) operations on it must still succeed.
 * mpich=skip: MPICH 4.0.2 (ch4) has no working ULFM without failures in this build (see
 * ulfm_revoke.c). */
#include "oxtest.h"
#include <stdlib.h>

#define ITERS 60
#define TAG 9

enum { BY_DUP, BY_SPLIT, BY_SHRINK, BY_SHRINK_OF_REVOKED, METHODS };
static const char *names[] = {"dup", "split", "shrink", "shrink of the revoked communicator, then dup"};

static void exchange_all(MPI_Comm c, int it, int rank, int size, const char *what, int method)
{
    int *in = oxt_malloc(sizeof(int) * (size_t)size), *out = oxt_malloc(sizeof(int) * (size_t)size);
    MPI_Request *r = oxt_malloc(sizeof(MPI_Request) * 2 * (size_t)size);
    for (int p = 0; p < size; p++) {
        in[p] = -1;
        out[p] = it * 10000 + rank * 100 + p;
        MPI_OK(MPI_Irecv(&in[p], 1, MPI_INT, p, TAG + 1, c, &r[p]));
    }
    for (int p = 0; p < size; p++)
        MPI_OK(MPI_Isend(&out[p], 1, MPI_INT, p, TAG + 1, c, &r[size + p]));
    int rc = MPI_Waitall(2 * size, r, MPI_STATUSES_IGNORE);
    CHECK(rc == MPI_SUCCESS, "iteration %d (%s): %s exchange on the new communicator failed with %d (revoked by the old "
          "communicator's revocation?)", it, names[method], what, rc);
    for (int p = 0; p < size; p++)
        CHECK(in[p] == it * 10000 + p * 100 + rank, "iteration %d (%s): got %d from rank %d, expected %d", it, names[method],
              in[p], p, it * 10000 + p * 100 + rank);
    free(in);
    free(out);
    free(r);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int it = 0; it < ITERS; it++) {
        int method = it % METHODS;
        MPI_Comm c0, c1 = MPI_COMM_NULL, shrunk = MPI_COMM_NULL;
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c0));
        int stale = -(it + 1);
        /* The last rank's revocation may overtake this send (then it fails, and nothing is sent). */
        int rc = MPI_Send(&stale, 1, MPI_INT, right, TAG, c0);
        if (rc != MPI_SUCCESS)
            CHECK_CLASS(rc, MPIX_ERR_REVOKED);
        if (rank == size - 1)
            MPI_OK(MPIX_Comm_revoke(c0));
        if (method == BY_SHRINK_OF_REVOKED)
            MPI_OK(MPIX_Comm_shrink(c0, &shrunk));
        MPI_OK(MPI_Comm_free(&c0));
        if (method == BY_DUP)
            MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c1));
        else if (method == BY_SPLIT)
            MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 1, rank, &c1));
        else if (method == BY_SHRINK)
            MPI_OK(MPIX_Comm_shrink(MPI_COMM_WORLD, &c1));
        else
            MPI_OK(MPI_Comm_dup(shrunk, &c1));
        int mine = it * 1000 + rank, got = 0;
        MPI_Request r[2];
        MPI_OK(MPI_Irecv(&got, 1, MPI_INT, left, TAG, c1, &r[0]));
        MPI_OK(MPI_Isend(&mine, 1, MPI_INT, right, TAG, c1, &r[1]));
        rc = MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
        CHECK(rc == MPI_SUCCESS, "iteration %d (%s): the first receive on the new communicator failed with %d", it,
              names[method], rc);
        CHECK(got == it * 1000 + left, "iteration %d (%s): received %d on the new communicator, expected %d%s", it,
              names[method], got, it * 1000 + left, got < 0 ? " (the revoked communicator's message)" : "");
        exchange_all(c1, it, rank, size, "first", method);
        exchange_all(c1, it, rank, size, "second", method);
        MPI_OK(MPI_Barrier(c1));
        MPI_OK(MPI_Comm_free(&c1));
        if (shrunk != MPI_COMM_NULL)
            MPI_OK(MPI_Comm_free(&shrunk));
    }
    MPI_Finalize();
    return 0;
}
