/* oxmpi-test: ranks=1,2 modes=processes mpich=skip */
/* MPI_Comm_accept/MPI_Comm_connect between two separately started jobs: this job's rank 0
   starts a second mpiexec (`mpiexec --join PID -n 2 THIS client SERVICE`, the same launcher
   binary, found as /proc/PPID/exe), which starts its ranks inside this job's segment. This job
   publishes a port under SERVICE and accepts; the other looks it up and connects. Both check a
   broadcast and an allreduce over the intercommunicator, then disconnect; the second mpiexec
   must exit with status 0. A job started without --join gets MPI_ERR_PORT for a connect to the
   port. A third mpiexec asked to join a job that does not exist fails with
   a message. (Debian's MPICH, over UCX, has no ports: mpich=skip.) */
#define _DEFAULT_SOURCE
#include "oxtest.h"
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void check_inter(MPI_Comm inter, int accepting, int rsize)
{
    int rank, v = accepting ? 31 : -1, x;
    MPI_OK(MPI_Comm_rank(inter, &rank));
    MPI_OK(MPI_Bcast(&v, 1, MPI_INT, accepting ? (rank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0, inter));
    if (!accepting)
        CHECK(v == 31, "bcast gave %d", v);
    x = accepting ? 1 : 10;
    MPI_OK(MPI_Allreduce(&x, &v, 1, MPI_INT, MPI_SUM, inter));
    CHECK(v == (accepting ? 10 : 1) * rsize, "allreduce gave %d with %d remote ranks", v, rsize);
    MPI_OK(MPI_Comm_disconnect(&inter));
}

/* Starts `mpiexec ARGS...` (this job's launcher); returns its pid. */
static pid_t launch(char **args)
{
    char exe[64];
    pid_t pid;
    snprintf(exe, sizeof exe, "/proc/%d/exe", (int)getppid());
    pid = fork();
    CHECK(pid >= 0, "fork");
    if (pid == 0) {
        execv(exe, args);
        _exit(126);
    }
    return pid;
}

int main(int argc, char **argv)
{
    int rank, size, status;
    char port[MPI_MAX_PORT_NAME], service[80], ppid[16];
    MPI_Comm inter;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    if (argc == 3 && strcmp(argv[1], "stranger") == 0) {
        /* a job of its own (no --join): the port belongs to another segment */
        int rc;
        MPI_OK(MPI_Lookup_name(argv[2], MPI_INFO_NULL, port));
        MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        rc = MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter);
        CHECK_CLASS(rc, MPI_ERR_PORT);
        MPI_OK(MPI_Finalize());
        return 0;
    }
    if (argc == 3 && strcmp(argv[1], "client") == 0) {
        CHECK(size == 2, "the joined job has %d ranks", size);
        if (rank == 0) {
            /* the server publishes before it starts us */
            MPI_OK(MPI_Lookup_name(argv[2], MPI_INFO_NULL, port));
        }
        MPI_OK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter));
        check_inter(inter, 0, atoi(argv[2] + strlen(argv[2]) - 1));
        MPI_OK(MPI_Finalize());
        return 0;
    }
    snprintf(ppid, sizeof ppid, "%d", (int)getppid());
    snprintf(service, sizeof service, "oxmpi-test-connect-jobs-%s-%d", ppid, size);
    pid_t other = 0;
    if (rank == 0) {
        char *bad[] = {"mpiexec", "--join", "999999999", "-n", "1", argv[0], NULL};
        char *args[] = {"mpiexec", "--join", ppid, "-n", "2", argv[0], "client", service, NULL};
        pid_t b = launch(bad);
        CHECK(waitpid(b, &status, 0) == b, "waitpid");
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) != 0, "joining no job must fail (status %d)", status);
        MPI_OK(MPI_Open_port(MPI_INFO_NULL, port));
        MPI_OK(MPI_Publish_name(service, MPI_INFO_NULL, port));
        char *stranger[] = {"mpiexec", "-n", "1", argv[0], "stranger", service, NULL};
        pid_t st = launch(stranger);
        CHECK(waitpid(st, &status, 0) == st, "waitpid");
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the job without --join ended with status %d", status);
        other = launch(args);
    }
    MPI_OK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter));
    check_inter(inter, 1, 2);
    if (rank == 0) {
        MPI_OK(MPI_Unpublish_name(service, MPI_INFO_NULL, port));
        MPI_OK(MPI_Close_port(port));
        CHECK(waitpid(other, &status, 0) == other, "waitpid");
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the joined job ended with status %d", status);
    }
    MPI_OK(MPI_Finalize());
    if (rank == 0)
        printf("connect_jobs OK\n");
    return 0;
}
