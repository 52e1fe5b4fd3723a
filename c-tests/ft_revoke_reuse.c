/* oxmpi-test: ranks=2,3,4,8 timeout=60 mpich=skip */
/* A revocation of a freed communicator never revokes the communicator that reuses its context
 * id (issue 22, item 3). Every iteration: the last rank revokes C0 and everybody frees C0 at
 * once, before the revocation has reached them; C1 = dup of MPI_COMM_WORLD takes C0's context
 * id. An exchange with every rank on C1 (after it, the revoker's revocation has arrived
 * everywhere: messages between two ranks arrive in order), then another one and a barrier on
 * C1, must all succeed.
 * mpich=skip: MPICH 4.0.2 (ch4) has no working ULFM without failures in this build (see
 * ulfm_revoke.c). */
#include "oxtest.h"
#include <stdlib.h>

#define ITERS 100

static int exchange_all(MPI_Comm c, int it, int rank, int size)
{
    int *in = oxt_malloc(sizeof(int) * (size_t)size), *out = oxt_malloc(sizeof(int) * (size_t)size);
    MPI_Request *r = oxt_malloc(sizeof(MPI_Request) * 2 * (size_t)size);
    for (int p = 0; p < size; p++) {
        in[p] = -1;
        out[p] = it * 1000 + rank;
        MPI_OK(MPI_Irecv(&in[p], 1, MPI_INT, p, 5, c, &r[p]));
    }
    for (int p = 0; p < size; p++)
        MPI_OK(MPI_Isend(&out[p], 1, MPI_INT, p, 5, c, &r[size + p]));
    int rc = MPI_Waitall(2 * size, r, MPI_STATUSES_IGNORE);
    for (int p = 0; rc == MPI_SUCCESS && p < size; p++)
        CHECK(in[p] == it * 1000 + p, "iteration %d: got %d from rank %d", it, in[p], p);
    free(in);
    free(out);
    free(r);
    return rc;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (int it = 0; it < ITERS; it++) {
        MPI_Comm c0, c1;
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c0));
        if (rank == size - 1)
            MPI_OK(MPIX_Comm_revoke(c0));
        MPI_OK(MPI_Comm_free(&c0));
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c1));
        int rc = exchange_all(c1, it, rank, size);
        CHECK(rc == MPI_SUCCESS, "iteration %d: the first exchange on the new communicator failed with %d (revoked by the "
              "freed communicator's revocation?)", it, rc);
        rc = exchange_all(c1, it, rank, size);
        CHECK(rc == MPI_SUCCESS, "iteration %d: the second exchange on the new communicator failed with %d (revoked by the "
              "freed communicator's revocation)", it, rc);
        rc = MPI_Barrier(c1);
        CHECK(rc == MPI_SUCCESS, "iteration %d: a barrier on the new communicator failed with %d", it, rc);
        MPI_OK(MPI_Comm_free(&c1));
    }
    MPI_Finalize();
    return 0;
}
