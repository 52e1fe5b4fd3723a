/* oxmpi-test: ranks=1,2,3,4,8 timeout=30 mpich=skip */
/* ULFM calls without a failure, in both rank modes: revoking a communicator fails the pending
 * and later operations on it at every member, agreement and shrinking still work on it, and
 * the shrunk communicator (everybody survived) works.
 * mpich=skip: MPICH 4.0.2 (ch4) asserts in MPIX_Comm_failure_ack (ch4_comm.c line 46: not
 * implemented). */
#include "oxtest.h"

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, x = 0, rc;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm d;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    MPI_OK(MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN));
    /* No failure: nothing to acknowledge. */
    MPI_OK(MPIX_Comm_failure_ack(d));
    MPI_Group g;
    MPI_OK(MPIX_Comm_failure_get_acked(d, &g));
    int n = -1;
    MPI_OK(MPI_Group_size(g, &n));
    CHECK(n == 0, "%d acknowledged failures without a failure", n);
    if (g != MPI_GROUP_EMPTY)
        MPI_OK(MPI_Group_free(&g));
    /* The last rank revokes; everybody else is blocked on a receive from it. */
    if (rank == size - 1) {
        MPI_OK(MPIX_Comm_revoke(d));
        rc = MPI_Send(&x, 1, MPI_INT, 0, 3, d);
        CHECK_CLASS(rc, MPIX_ERR_REVOKED);
    } else {
        rc = MPI_Recv(&x, 1, MPI_INT, size - 1, 3, d, MPI_STATUS_IGNORE);
        CHECK_CLASS(rc, MPIX_ERR_REVOKED);
    }
    rc = MPI_Barrier(d);
    if (size > 1)
        CHECK_CLASS(rc, MPIX_ERR_REVOKED);
    int flag = rank == 0 ? 6 : 7;
    MPI_OK(MPIX_Comm_agree(d, &flag));
    CHECK(flag == 6, "agreed 0x%x, expected 0x6", flag);
    MPI_Comm s;
    MPI_OK(MPIX_Comm_shrink(d, &s));
    int ssize, srank, sum = 0;
    MPI_OK(MPI_Comm_size(s, &ssize));
    MPI_OK(MPI_Comm_rank(s, &srank));
    CHECK(ssize == size && srank == rank, "shrink without failures: size %d rank %d", ssize, srank);
    MPI_OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, s));
    CHECK(sum == size * (size - 1) / 2, "allreduce gave %d", sum);
    MPI_OK(MPI_Comm_free(&s));
    MPI_OK(MPI_Comm_free(&d));
    MPI_Finalize();
    return 0;
}
