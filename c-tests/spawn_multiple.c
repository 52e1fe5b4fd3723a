/* oxmpi-test: ranks=1,2 modes=processes,threads env=OXMPI_UNIVERSE_SIZE=6,OXMPI_FIBERS=0 */
/* MPI_Comm_spawn_multiple of two commands (this program with different arguments, one of them
   MPI_ARGV_NULL-like empty): one world of 1 + 2 ranks, MPI_APPNUM 0 and 1, info key wdir, a
   gather over the intercommunicator. */
#define _DEFAULT_SOURCE
#include "oxtest.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank, size, flag, *appnum, v;
    MPI_Comm parent;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_OK(MPI_Comm_get_parent(&parent));
    if (parent != MPI_COMM_NULL) {
        MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag));
        CHECK(flag, "MPI_APPNUM is set");
        CHECK(size == 3, "children's world size %d", size);
        int want = rank == 0 ? 0 : 1;
        CHECK(*appnum == want, "rank %d: appnum %d, want %d", rank, *appnum, want);
        if (*appnum == 0)
            CHECK(argc == 2 && strcmp(argv[1], "first") == 0, "first command's arguments");
        else
            CHECK(argc == 1, "second command has MPI_ARGV_NULL (argc %d)", argc);
        char cwd[4096];
        CHECK(getcwd(cwd, sizeof cwd) && strcmp(cwd, "/tmp") == 0, "wdir: cwd is %s", cwd);
        v = 10 * (*appnum) + rank;
        MPI_OK(MPI_Gather(&v, 1, MPI_INT, NULL, 0, MPI_INT, 0, parent));
        MPI_OK(MPI_Comm_disconnect(&parent));
        MPI_OK(MPI_Finalize());
        return 0;
    }
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    CHECK(n > 0, "readlink");
    exe[n] = 0;
    char *cmds[2] = {exe, exe};
    char *args0[] = {"first", NULL};
    char **argvs[2] = {args0, MPI_ARGV_NULL};
    int maxprocs[2] = {1, 2}, errcodes[3];
    MPI_Info infos[2];
    for (int i = 0; i < 2; i++) {
        MPI_OK(MPI_Info_create(&infos[i]));
        MPI_OK(MPI_Info_set(infos[i], "wdir", "/tmp"));
    }
    MPI_Comm inter;
    MPI_OK(MPI_Comm_spawn_multiple(2, cmds, argvs, maxprocs, infos, 0, MPI_COMM_WORLD, &inter, errcodes));
    for (int i = 0; i < 3; i++)
        CHECK(errcodes[i] == MPI_SUCCESS, "errcodes[%d] = %d", i, errcodes[i]);
    int got[3] = {-1, -1, -1};
    MPI_OK(MPI_Gather(NULL, 0, MPI_INT, got, 1, MPI_INT, rank == 0 ? MPI_ROOT : MPI_PROC_NULL, inter));
    if (rank == 0)
        CHECK(got[0] == 0 && got[1] == 11 && got[2] == 12, "gathered %d %d %d", got[0], got[1], got[2]);
    MPI_OK(MPI_Comm_disconnect(&inter));
    for (int i = 0; i < 2; i++)
        MPI_OK(MPI_Info_free(&infos[i]));
    MPI_OK(MPI_Finalize());
    if (rank == 0)
        printf("spawn_multiple OK\n");
    return 0;
}
