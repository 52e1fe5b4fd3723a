/* oxmpi-test: ranks=1,2 modes=threads */
/* exec from a threads-mode rank would replace the host process and every rank in it: each form
   of the exec family is refused with EPERM (the rank goes on), while a forked child of the rank
   still execs (its own process). The processes-mode counterpart is ordinary exec, not tested. */
#define _GNU_SOURCE
#include "oxtest.h"
#include <errno.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank;
    char *args[] = {"true", NULL}, *envp[] = {NULL};
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
#define REFUSED(call)                                                                              \
    do {                                                                                           \
        errno = 0;                                                                                 \
        int rc_ = (call);                                                                          \
        CHECK(rc_ == -1 && errno == EPERM, #call " gave %d, errno %d; want -1, EPERM", rc_, errno); \
    } while (0)
    REFUSED(execv("/bin/true", args));
    REFUSED(execve("/bin/true", args, envp));
    REFUSED(execvp("true", args));
    REFUSED(execvpe("true", args, envp));
    REFUSED(execl("/bin/true", "true", (char *)NULL));
    REFUSED(execlp("true", "true", (char *)NULL));
    REFUSED(execle("/bin/true", "true", (char *)NULL, envp));
    int fd = open("/bin/true", O_RDONLY | O_CLOEXEC);
    CHECK(fd >= 0, "open /bin/true");
    REFUSED(fexecve(fd, args, envp));
    close(fd);
    /* A forked child is a process of its own: its exec runs. */
    pid_t pid = fork();
    CHECK(pid >= 0, "fork");
    if (pid == 0) {
        execl("/bin/sh", "sh", "-c", "exit 7", (char *)NULL);
        _exit(99);
    }
    int status;
    CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 7, "child status %d, want exit 7 from sh", status);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Finalize());
    if (rank == 0)
        printf("env_exec OK\n");
    return 0;
}
