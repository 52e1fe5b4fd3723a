/* oxmpi-test: ranks=3,4 mpich=skip expect=fail timeout=60 */
/* oxmpi-test: env-matrix=FT_DEATH=segv|bus|fpe|abort|exit|pthread_exit */
/* oxmpi-test: expect-stdout="survivors ok" expect-stderr="the other ranks go on (failure survival is on)" */
/* Every way a rank can die, in both rank modes (issue 22): the last rank dies after a barrier by
 * FT_DEATH: a segmentation fault (a store through NULL), SIGBUS, an integer division by zero,
 * abort(), exit(3) before MPI_Finalize, or pthread_exit from main. In threads mode the rank is
 * a thread of the host process: it must end alone, be marked failed, and leave the others
 * running, as a dead process in processes mode. The survivors (MPI_ERRORS_RETURN, which turns
 * failure survival on) see MPIX_ERR_PROC_FAILED from a receive from it, revoke, acknowledge,
 * shrink, check an allreduce and an agreement over the survivors, and rank 0 prints
 * "survivors ok". The job's status is the death's (non-zero). */
#define _GNU_SOURCE
#include "oxtest.h"
#include <pthread.h>
#include <signal.h>

static volatile int zero;

static void die(const char *how)
{
    fflush(stdout);
    if (!strcmp(how, "segv"))
        *(volatile int *)(uintptr_t)zero = 1;
    else if (!strcmp(how, "bus"))
        raise(SIGBUS);
    else if (!strcmp(how, "fpe"))
        zero = 7 / zero;
    else if (!strcmp(how, "abort"))
        abort();
    else if (!strcmp(how, "exit"))
        exit(3);
    else if (!strcmp(how, "pthread_exit"))
        pthread_exit(NULL);
    CHECK(0, "FT_DEATH=%s: unknown (segv, bus, fpe, abort, exit, pthread_exit) or the rank did not die", how);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, x = 0, rc;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *how = getenv("FT_DEATH");
    CHECK(how, "set FT_DEATH");
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    int victim = size - 1;
    if (rank == victim)
        die(how);

    /* A survivor that got here first may have revoked the communicator already. */
    int cls;
    rc = MPI_Recv(&x, 1, MPI_INT, victim, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPIX_ERR_PROC_FAILED || cls == MPIX_ERR_REVOKED, "receive from the dead rank: class %d", cls);
    rc = MPI_Barrier(MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPIX_ERR_PROC_FAILED || cls == MPIX_ERR_REVOKED, "barrier with a dead member: class %d", cls);
    MPI_OK(MPIX_Comm_revoke(MPI_COMM_WORLD));
    MPI_OK(MPIX_Comm_failure_ack(MPI_COMM_WORLD));
    MPI_Comm s;
    MPI_OK(MPIX_Comm_shrink(MPI_COMM_WORLD, &s));
    int ssize, sum = -1;
    MPI_OK(MPI_Comm_size(s, &ssize));
    CHECK(ssize == size - 1, "%d survivors, expected %d", ssize, size - 1);
    MPI_OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, s));
    CHECK(sum == (size - 1) * (size - 2) / 2, "allreduce over the survivors gave %d", sum);
    int flag = rank == 0 ? 0x3 : ~0;
    MPI_OK(MPIX_Comm_agree(s, &flag));
    CHECK(flag == 0x3, "agreed 0x%x, expected 0x3", flag);
    MPI_OK(MPI_Comm_free(&s));
    if (rank == 0)
        printf("survivors ok\n");
    MPI_Finalize();
    return 0;
}
