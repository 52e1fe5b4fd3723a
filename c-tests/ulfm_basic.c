/* oxmpi-test: ranks=4 mpich=skip expect-exit=137 expect-exit-threads=139 timeout=30 */
/* oxmpi-test: expect-stderr="oxmpi: rank 3 " expect-stderr="the other ranks go on (failure survival is on)" */
/* Surviving the loss of a rank (ULFM), in both modes: rank 3 dies after a barrier (oxt_die:
 * SIGKILL, or in threads mode a crash of its thread); the others, with
 * MPI_ERRORS_RETURN, see MPIX_ERR_PROC_FAILED from operations with it, acknowledge the failure,
 * shrink MPI_COMM_WORLD and go on; revoke frees ranks blocked on a survivor. The job's exit
 * status is the dead rank's (128 + the signal). */
#include "oxtest.h"
#include <signal.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, x = 0, rc;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size == 4, "needs 4 ranks, got %d", size);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 3)
        oxt_die();

    /* Receives from and sends to the dead rank fail (a large send: a rendezvous never answered). */
    rc = MPI_Recv(&x, 1, MPI_INT, 3, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK_CLASS(rc, MPIX_ERR_PROC_FAILED);
    enum { BIG = 1 << 16 };
    int *big = oxt_malloc(BIG * sizeof(int));
    rc = MPI_Send(big, BIG, MPI_INT, 3, 1, MPI_COMM_WORLD);
    CHECK_CLASS(rc, MPIX_ERR_PROC_FAILED);
    MPI_Request req;
    MPI_OK(MPI_Isend(big, BIG, MPI_INT, 3, 2, MPI_COMM_WORLD, &req));
    rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    CHECK_CLASS(rc, MPIX_ERR_PROC_FAILED);
    free(big);

    /* A wildcard receive fails while the failure is unacknowledged... */
    MPI_OK(MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &req));
    rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    CHECK_CLASS(rc, MPIX_ERR_PROC_FAILED_PENDING);
    MPI_OK(MPIX_Comm_failure_ack(MPI_COMM_WORLD));
    MPI_Group failed, world_group;
    MPI_OK(MPIX_Comm_failure_get_acked(MPI_COMM_WORLD, &failed));
    int nf, r0 = 0, w0 = -1;
    MPI_OK(MPI_Group_size(failed, &nf));
    CHECK(nf == 1, "%d acknowledged failures, expected 1", nf);
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
    MPI_OK(MPI_Group_translate_ranks(failed, 1, &r0, world_group, &w0));
    CHECK(w0 == 3, "the acknowledged failure is rank %d, expected 3", w0);
    MPI_OK(MPI_Group_free(&failed));
    MPI_OK(MPI_Group_free(&world_group));
    /* ...and works once it is acknowledged. */
    if (rank == 1) {
        x = 41;
        MPI_OK(MPI_Send(&x, 1, MPI_INT, 0, 7, MPI_COMM_WORLD));
    } else if (rank == 0) {
        MPI_Status st;
        MPI_OK(MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &st));
        CHECK(x == 41 && st.MPI_SOURCE == 1, "got %d from %d", x, st.MPI_SOURCE);
    }

    /* The survivors' communicator works for collectives. */
    MPI_Comm s;
    MPI_OK(MPIX_Comm_shrink(MPI_COMM_WORLD, &s));
    int ssize, srank, sum = -1;
    MPI_OK(MPI_Comm_size(s, &ssize));
    MPI_OK(MPI_Comm_rank(s, &srank));
    CHECK(ssize == 3 && srank == rank, "shrunk communicator: size %d rank %d", ssize, srank);
    MPI_OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, s));
    CHECK(sum == 3, "allreduce over the survivors gave %d, expected 3", sum);

    /* Agreement over the survivors: bitwise AND; the failure is acknowledged, so no error. */
    int flag = rank == 1 ? 0x0f : ~0;
    MPI_OK(MPIX_Comm_agree(MPI_COMM_WORLD, &flag));
    CHECK(flag == 0x0f, "agreed flag 0x%x, expected 0xf", flag);

    /* Revocation: ranks 1 and 2 wait for rank 0, which revokes instead of sending. */
    MPI_Comm d;
    MPI_OK(MPI_Comm_dup(s, &d));
    MPI_OK(MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN));
    if (rank == 0) {
        MPI_OK(MPIX_Comm_revoke(d));
        rc = MPI_Send(&x, 1, MPI_INT, 1, 9, d);
        CHECK_CLASS(rc, MPIX_ERR_REVOKED);
    } else {
        rc = MPI_Recv(&x, 1, MPI_INT, 0, 9, d, MPI_STATUS_IGNORE);
        CHECK_CLASS(rc, MPIX_ERR_REVOKED);
    }
    /* Agreement still works on a revoked communicator. */
    flag = 1;
    MPI_OK(MPIX_Comm_agree(d, &flag));
    CHECK(flag == 1, "agreed flag %d on the revoked communicator", flag);
    MPI_OK(MPI_Comm_free(&d));
    MPI_OK(MPI_Comm_free(&s));
    MPI_Finalize();
    return 0;
}
