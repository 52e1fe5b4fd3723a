/* oxmpi-test: ranks=1,2 modes=threads env=OXMPI_UNIVERSE_SIZE=5,OXMPI_FIBERS=1 */
/* Threads-mode spawn: MPI_UNIVERSE_SIZE is what mpiexec was given; the children spawned through
   /proc/self/exe (the host's file, meaning the spawning rank's program) are ranks of this very
   process (same pid) with their own instance of the program (fresh globals, the parents' left
   alone) and their own argv. With ranks as fibers (OXMPI_FIBERS=1) the info key wdir is refused
   with MPI_ERR_SPAWN and a message naming the fix, nothing is taken, and the next spawn works. */
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

    /* wdir cannot be given to a fiber: refused at the root, reported at every rank */
    MPI_Info info;
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "wdir", "/tmp"));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    char *args[] = {"child", NULL};
    rc = MPI_Comm_spawn(exe, args, 1, info, 0, MPI_COMM_WORLD, &inter, MPI_ERRCODES_IGNORE);
    CHECK_CLASS(rc, MPI_ERR_SPAWN);
    if (rank == 0) {
        MPI_OK(MPI_Error_string(rc, msg, &len));
        CHECK(strstr(msg, "OXMPI_FIBERS=0"), "message names the fix: %s", msg);
    }
    MPI_OK(MPI_Info_free(&info));

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
