/* oxmpi-test: ranks=4 mpich=skip expect-exit=137 expect-exit-threads=139 timeout=30 */
/* oxmpi-test: expect-stderr="oxmpi: rank 3 " expect-stderr="the other ranks go on (failure survival is on)" */
/* Small collectives on MPI_COMM_WORLD meet in shared memory (oxmpi coll/arena.rs: the job
 * segment's world arena in processes mode, a per-communicator arena in threads mode). When a rank dies, the survivors (MPI_ERRORS_RETURN) must get
 * MPIX_ERR_PROC_FAILED from MPI_Barrier and MPI_Allreduce on MPI_COMM_WORLD instead of waiting
 * for it: first while waiting in an episode, then at once, every time. Then they shrink and
 * reduce on the survivors. The victim dies by oxt_die (SIGKILL, or a crash of its thread in
 * threads mode). */
#include "oxtest.h"
#include <signal.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, rc;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size == 4, "needs 4 ranks, got %d", size);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int one = 1, sum = 0;
    MPI_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum == 4, "allreduce before the failure gave %d", sum);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 3)
        oxt_die();

    for (int i = 0; i < 3; i++) {
        rc = MPI_Barrier(MPI_COMM_WORLD);
        CHECK_CLASS(rc, MPIX_ERR_PROC_FAILED);
        rc = MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        CHECK_CLASS(rc, MPIX_ERR_PROC_FAILED);
    }
    MPI_Comm s;
    MPI_OK(MPIX_Comm_shrink(MPI_COMM_WORLD, &s));
    sum = 0;
    MPI_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, s));
    CHECK(sum == 3, "allreduce on the survivors gave %d", sum);
    MPI_OK(MPI_Barrier(s));
    MPI_OK(MPI_Comm_free(&s));
    MPI_Finalize();
    return 0;
}
