/* oxmpi-test: ranks=8 mpich=skip expect-exit=137 expect-exit-threads=139 timeout=120 */
/* Two failures, two recoveries (issue 22, "Done when"): a ring and an allreduce every
 * iteration on a duplicate of MPI_COMM_WORLD, every result checked; world rank 3 dies (oxt_die) at
 * iteration FIRST and world rank 6 at iteration SECOND. A rank whose operation fails revokes the
 * communicator (which frees the survivors still blocked on it), acknowledges the failures,
 * shrinks it, frees it and works on a duplicate of the shrunk one, which takes the freed one's
 * context id; the survivors go on from the lowest iteration any of them was in (an iteration
 * gives the same results when done again). The ring uses one tag throughout, so a message left
 * unreceived on the revoked and freed communicator (a ring value for a rank that gave up early)
 * would match on its successor: before context generations the ring got such values or the
 * allreduce a wrong sum with MPI_SUCCESS. The job's status is the first death's: 128 + SIGKILL,
 * or in threads mode (a rank is a thread: it dies by a crash of its own thread) 128 + SIGSEGV.
 * mpich=skip: MPICH 4.0.2 (ch4) has no working ULFM in this build (see ulfm_revoke.c). */
#define _DEFAULT_SOURCE
#include "oxtest.h"
#include <signal.h>

#define ITERS 2000
#define FIRST 593
#define SECOND 1186
#define TAG 5

/* One iteration on `c`: MPI_SUCCESS or the first error (results checked when they arrive). */
static int iteration(MPI_Comm c, int it)
{
    int rank, size;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int out = it * 1000 + rank, in = -1;
    int rc = MPI_Sendrecv(&out, 1, MPI_INT, right, TAG, &in, 1, MPI_INT, left, TAG, c, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS)
        return rc;
    CHECK(in == it * 1000 + left, "iteration %d ring (%d ranks): got %d, expected %d%s", it, size, in, it * 1000 + left,
          in / 1000 != it ? " (a message of another iteration: a freed communicator's?)" : "");
    long v = rank + it, sum = -1;
    rc = MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, c);
    if (rc != MPI_SUCCESS)
        return rc;
    long want = (long)size * (size - 1) / 2 + (long)size * it;
    CHECK(sum == want, "iteration %d allreduce (%d ranks): got %ld, expected %ld", it, size, sum, want);
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int wrank, wsize;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    CHECK(wsize == 8, "run with 8 ranks (got %d)", wsize);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_Comm c;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    int recoveries = 0;
    for (int it = 0; it < ITERS;) {
        if ((wrank == 3 && it == FIRST) || (wrank == 6 && it == SECOND))
            oxt_die();
        int rc = iteration(c, it);
        if (rc == MPI_SUCCESS) {
            it++;
            continue;
        }
        int cls;
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPIX_ERR_PROC_FAILED || cls == MPIX_ERR_REVOKED, "iteration %d failed with class %d, expected "
              "MPIX_ERR_PROC_FAILED or MPIX_ERR_REVOKED", it, cls);
        MPI_OK(MPIX_Comm_revoke(c));
        MPI_OK(MPIX_Comm_failure_ack(c));
        MPI_Comm s;
        MPI_OK(MPIX_Comm_shrink(c, &s));
        MPI_OK(MPI_Comm_free(&c));
        MPI_OK(MPI_Comm_dup(s, &c));
        MPI_OK(MPI_Comm_free(&s));
        /* Resume where the slowest survivor was: the others redo what they already did. */
        int from = -1;
        MPI_OK(MPI_Allreduce(&it, &from, 1, MPI_INT, MPI_MIN, c));
        CHECK(from <= it && from >= it - 1, "resuming at iteration %d from %d", from, it);
        it = from;
        recoveries++;
    }
    int n;
    MPI_OK(MPI_Comm_size(c, &n));
    CHECK(n == 6, "%d survivors at the end, expected 6", n);
    CHECK(recoveries == 2, "%d recoveries, expected 2 (one per failure)", recoveries);
    MPI_OK(MPI_Barrier(c));
    MPI_OK(MPI_Comm_free(&c));
    MPI_Finalize();
    return 0;
}
