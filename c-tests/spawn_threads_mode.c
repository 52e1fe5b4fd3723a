/* oxmpi-test: ranks=1,2 modes=threads env=OXMPI_UNIVERSE_SIZE=5,OXMPI_FIBERS=1 */
/* Threads-mode spawn: MPI_UNIVERSE_SIZE is what mpiexec was given; the children spawned through
   /proc/self/exe (the host's file, meaning the spawning rank's program) are ranks of this very
   process (same pid) with their own instance of the program (fresh globals, the parents' left
   alone) and their own argv. The info key wdir gives a child its own working directory, also when
   the job's ranks are fibers (OXMPI_FIBERS=1): that child then runs as a kernel thread beside
   them, and talks with its fiber parents both ways; the parents' working directory stays. */
#define _DEFAULT_SOURCE
#include "oxtest.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int global; /* 0 in every fresh instance of the program */

int main(int argc, char **argv)
{
    int rank, size, flag, *usize, rc, len, i, got[2];
    char msg[MPI_MAX_ERROR_STRING], exe[4096];
    MPI_Comm parent, inter;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_OK(MPI_Comm_get_parent(&parent));
    if (parent != MPI_COMM_NULL && argc == 2 && strcmp(argv[1], "wdir-child") == 0) {
        char cwd[4096];
        CHECK(getcwd(cwd, sizeof cwd), "getcwd");
        int len = (int)strlen(cwd) + 1, token;
        MPI_OK(MPI_Recv(&token, 1, MPI_INT, 0, 2, parent, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Send(cwd, len, MPI_CHAR, 0, 3, parent));
        MPI_OK(MPI_Send(&token, 1, MPI_INT, 0, 4, parent));
        MPI_OK(MPI_Comm_disconnect(&parent));
        MPI_OK(MPI_Finalize());
        return 0;
    }
    if (parent != MPI_COMM_NULL) {
        CHECK(argc == 2 && strcmp(argv[1], "child") == 0, "child argv: argc %d", argc);
        CHECK(global == 0, "a spawned rank's global is %d, not its own fresh 0", global);
        global = 7;
        int mine[2] = {(int)getpid(), global};
        MPI_OK(MPI_Send(mine, 2, MPI_INT, 0, 1, parent));
        MPI_OK(MPI_Comm_disconnect(&parent));
        MPI_OK(MPI_Finalize());
        return 0;
    }
    global = 100 + rank;
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &usize, &flag));
    CHECK(flag && *usize == 5, "MPI_UNIVERSE_SIZE %d, want 5", flag ? *usize : -1);
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    CHECK(n > 0, "readlink");
    exe[n] = 0;

    /* wdir: the child (a kernel thread even among fibers) works in /tmp, the parents stay */
    char before[4096], after[4096], theirs[4096];
    CHECK(getcwd(before, sizeof before), "getcwd");
    MPI_Info info;
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "wdir", "/tmp"));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    char *wargs[] = {"wdir-child", NULL};
    rc = MPI_Comm_spawn(exe, wargs, 1, info, 0, MPI_COMM_WORLD, &inter, MPI_ERRCODES_IGNORE);
    if (rc != MPI_SUCCESS) {
        MPI_Error_string(rc, msg, &len);
        CHECK(0, "spawn with wdir: %s", msg);
    }
    if (rank == 0) {
        int token = 4242, back = 0;
        MPI_OK(MPI_Send(&token, 1, MPI_INT, 0, 2, inter));
        MPI_OK(MPI_Recv(theirs, sizeof theirs, MPI_CHAR, 0, 3, inter, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Recv(&back, 1, MPI_INT, 0, 4, inter, MPI_STATUS_IGNORE));
        CHECK(strcmp(theirs, "/tmp") == 0, "the wdir child works in %s, not /tmp", theirs);
        CHECK(back == token, "the wdir child sent back %d", back);
    }
    MPI_OK(MPI_Comm_disconnect(&inter));
    CHECK(getcwd(after, sizeof after) && strcmp(before, after) == 0, "the parent's directory changed from %s to %s", before, after);
    MPI_OK(MPI_Info_free(&info));
    char *args[] = {"child", NULL};

    int errcodes[2] = {-1, -1};
    MPI_OK(MPI_Comm_spawn(exe, args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, errcodes));
    CHECK(errcodes[0] == MPI_SUCCESS && errcodes[1] == MPI_SUCCESS, "errcodes %d %d", errcodes[0], errcodes[1]);
    if (rank == 0)
        for (i = 0; i < 2; i++) {
            MPI_OK(MPI_Recv(got, 2, MPI_INT, i, 1, inter, MPI_STATUS_IGNORE));
            CHECK(got[0] == (int)getpid(), "child %d runs in pid %d, not the job's %d", i, got[0], (int)getpid());
            CHECK(got[1] == 7, "child %d's global %d", i, got[1]);
        }
    CHECK(global == 100 + rank, "the parent's global changed to %d", global);
    MPI_OK(MPI_Comm_disconnect(&inter));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Finalize());
    if (rank == 0)
        printf("spawn_threads_mode OK\n");
    return 0;
}
