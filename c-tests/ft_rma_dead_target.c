/* oxmpi-test: ranks=4 mpich=skip expect-exit=137 expect-exit-threads=139 timeout=60 */
/* RMA with a failed rank (issue 22, item 4): after world rank 3 dies (oxt_die), a survivor's
 * passive-target epoch touching it (lock, put, flush, unlock) and a fence over the window fail
 * with MPIX_ERR_PROC_FAILED (class) instead of succeeding on the dead rank's memory or waiting;
 * epochs between survivors still work. The job's status is the death's.
 * mpich=skip: MPICH 4.0.2 (ch4) has no working ULFM in this build (see ulfm_revoke.c). */
#define _DEFAULT_SOURCE
#include "oxtest.h"
#include <unistd.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, *buf;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size == 4, "needs 4 ranks, got %d", size);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_Win win;
    MPI_OK(MPI_Win_allocate(2 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &buf, &win));
    MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    buf[0] = buf[1] = 0;
    /* An epoch to every rank, opened while all live (no lock taken). */
    MPI_OK(MPI_Win_lock_all(MPI_MODE_NOCHECK, win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 3)
        oxt_die();
    /* Wait until this rank knows of the death. */
    for (;;) {
        MPI_Group g;
        int n = 0;
        MPI_OK(MPIX_Comm_failure_ack(MPI_COMM_WORLD));
        MPI_OK(MPIX_Comm_failure_get_acked(MPI_COMM_WORLD, &g));
        MPI_OK(MPI_Group_size(g, &n));
        MPI_OK(MPI_Group_free(&g));
        if (n == 1)
            break;
        usleep(1000);
    }
    int v = 7, got = -1;
    CHECK_CLASS(MPI_Put(&v, 1, MPI_INT, 3, 0, 1, MPI_INT, win), MPIX_ERR_PROC_FAILED);
    CHECK_CLASS(MPI_Get(&got, 1, MPI_INT, 3, 0, 1, MPI_INT, win), MPIX_ERR_PROC_FAILED);
    CHECK_CLASS(MPI_Accumulate(&v, 1, MPI_INT, 3, 1, 1, MPI_INT, MPI_SUM, win), MPIX_ERR_PROC_FAILED);
    CHECK_CLASS(MPI_Win_flush(3, win), MPIX_ERR_PROC_FAILED);
    /* A survivor is still reachable: a put to the right survivor, read back. */
    int right = (rank + 1) % 3;
    MPI_OK(MPI_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, win));
    MPI_OK(MPI_Win_flush(right, win));
    MPI_OK(MPI_Get(&got, 1, MPI_INT, right, 0, 1, MPI_INT, win));
    MPI_OK(MPI_Win_flush(right, win));
    CHECK(got == 7, "get from a survivor gave %d, expected 7", got);
    CHECK_CLASS(MPI_Win_unlock_all(win), MPIX_ERR_PROC_FAILED);
    CHECK_CLASS(MPI_Win_lock(MPI_LOCK_SHARED, 3, 0, win), MPIX_ERR_PROC_FAILED);
    CHECK_CLASS(MPI_Win_lock_all(0, win), MPIX_ERR_PROC_FAILED);
    /* A fence is a barrier over the window's group, the dead rank included (a survivor that saw
     * the failure first revokes the window's communicator: the others may see that instead). */
    int rc = MPI_Win_fence(0, win), cls = -1;
    CHECK(rc != MPI_SUCCESS, "MPI_Win_fence with a dead member succeeded");
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPIX_ERR_PROC_FAILED || cls == MPIX_ERR_REVOKED, "MPI_Win_fence gave error class %d", cls);
    MPI_Finalize();
    return 0;
}
