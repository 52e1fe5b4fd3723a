/* oxmpi-test: ranks=3 mpich=skip expect-exit=137 expect-exit-threads=139 timeout=60 */
/* oxmpi-test: expect-stdout="survivors ok" */
/* A collective's own sends to a dead rank fail the collective (issue 22): rank 2 dies; once the
 * survivors know it (a receive from it failed), rank 0 roots collectives in which it sends to
 * rank 2 itself (3 ranks: the binomial trees and the linear algorithms send to every other rank
 * from the root): MPI_Ibcast, MPI_Iscatter, MPI_Scatter and MPI_Bcast of 64 KiB, each on its own
 * duplicate of MPI_COMM_WORLD (no shared-memory episode). The root must get
 * MPIX_ERR_PROC_FAILED, not MPI_SUCCESS as if the dead rank had its data; rank 1 gets MPI_SUCCESS
 * with the right data, or MPIX_ERR_PROC_FAILED / MPIX_ERR_REVOKED (a rank whose collective
 * failed revokes its communicator, the ULFM pattern, which frees rank 1 if the root gave up
 * before sending to it). Then the survivors shrink and go on. */
#include "oxtest.h"

enum { BIG = 1 << 14 };

static void check(int rc, MPI_Comm c, int rank, int *buf, int tag, const char *what)
{
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS) {
        MPI_Error_class(rc, &cls);
        MPI_OK(MPIX_Comm_revoke(c));
    }
    if (rank == 0)
        CHECK(cls == MPIX_ERR_PROC_FAILED, "%s at the root: class %d, expected MPIX_ERR_PROC_FAILED (%d)", what, cls,
              MPIX_ERR_PROC_FAILED);
    else if (cls == MPI_SUCCESS)
        CHECK(buf[0] == tag && buf[BIG / 2 - 1] == tag, "%s: rank 1 got %d, expected %d", what, buf[0], tag);
    else
        CHECK(cls == MPIX_ERR_PROC_FAILED || cls == MPIX_ERR_REVOKED, "%s at rank 1: class %d", what, cls);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, x;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size == 3, "run with 3 ranks (got %d)", size);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_Comm c, d[4];
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    for (int i = 0; i < 4; i++)
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d[i]));
    MPI_OK(MPI_Barrier(c));
    if (rank == 2)
        oxt_die();
    CHECK_CLASS(MPI_Recv(&x, 1, MPI_INT, 2, 0, c, MPI_STATUS_IGNORE), MPIX_ERR_PROC_FAILED);

    int *buf = oxt_malloc(BIG * sizeof(int)), *all = oxt_malloc(3 * BIG * sizeof(int));
    MPI_Request req;
    for (int i = 0; i < 3 * BIG; i++)
        all[i] = 10;
    for (int i = 0; i < BIG; i++)
        buf[i] = rank == 0 ? 11 : -1;
    MPI_OK(MPI_Ibcast(buf, BIG, MPI_INT, 0, d[0], &req));
    check(MPI_Wait(&req, MPI_STATUS_IGNORE), d[0], rank, buf, 11, "MPI_Ibcast");
    MPI_OK(MPI_Iscatter(all, BIG / 2, MPI_INT, buf, BIG / 2, MPI_INT, 0, d[1], &req));
    check(MPI_Wait(&req, MPI_STATUS_IGNORE), d[1], rank, buf, 10, "MPI_Iscatter");
    for (int i = 0; i < 3 * BIG; i++)
        all[i] = 12;
    check(MPI_Scatter(all, BIG / 2, MPI_INT, buf, BIG / 2, MPI_INT, 0, d[2]), d[2], rank, buf, 12, "MPI_Scatter");
    for (int i = 0; i < BIG; i++)
        buf[i] = rank == 0 ? 13 : -1;
    check(MPI_Bcast(buf, BIG, MPI_INT, 0, d[3]), d[3], rank, buf, 13, "MPI_Bcast");
    for (int i = 0; i < 4; i++)
        MPI_OK(MPI_Comm_free(&d[i]));

    MPI_OK(MPIX_Comm_revoke(c));
    MPI_OK(MPIX_Comm_failure_ack(c));
    MPI_Comm s;
    MPI_OK(MPIX_Comm_shrink(c, &s));
    int sum = -1;
    MPI_OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, s));
    CHECK(sum == 1, "allreduce over the survivors gave %d", sum);
    MPI_OK(MPI_Comm_free(&s));
    MPI_OK(MPI_Comm_free(&c));
    free(buf);
    free(all);
    if (rank == 0)
        printf("survivors ok\n");
    MPI_Finalize();
    return 0;
}
