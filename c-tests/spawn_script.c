/* oxmpi-test: ranks=1,2 modes=processes,threads env=OXMPI_UNIVERSE_SIZE=8 */
/* MPI_Comm_spawn_multiple of two #! scripts whose interpreter is this program: "a" runs it
   directly with an argument on the #! line, "b" runs "a" (a script as interpreter). Each child
   checks the argv execve(2) gives a script (interpreter as written, the #! argument as ONE word
   with its inner blanks, the script, then the spawn's arguments), in both modes: threads mode
   loads the interpreter as the rank's program itself. */
#define _DEFAULT_SOURCE
#include "oxtest.h"
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MARK "scripted  arg"

static void write_script(const char *path, const char *interp, const char *arg)
{
    FILE *f = fopen(path, "w");
    CHECK(f != NULL, "cannot create %s", path);
    fprintf(f, "#! %s%s%s \t\nthis line is never read\n", interp, arg ? " " : "", arg ? arg : "");
    CHECK(fclose(f) == 0, "close %s", path);
    CHECK(chmod(path, 0755) == 0, "chmod %s", path);
}

int main(int argc, char **argv)
{
    int rank, flag, *appnum, ok, all;
    MPI_Comm parent, inter;
    char exe[PATH_MAX], dir[PATH_MAX], a[PATH_MAX + 8], b[PATH_MAX + 8];
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_get_parent(&parent));
    if (parent != MPI_COMM_NULL) {
        /* argv: [exe, MARK, a, (b,) "x", "y z"] */
        MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag));
        CHECK(flag && (*appnum == 0 || *appnum == 1), "appnum");
        int k = *appnum == 0 ? 3 : 4;
        CHECK(argc == k + 2, "child %d: argc %d, want %d", *appnum, argc, k + 2);
        CHECK(strcmp(argv[1], MARK) == 0, "argv[1] '%s', want the #! argument '" MARK "'", argv[1]);
        CHECK(strstr(argv[2], "/a") != NULL, "argv[2] '%s', want script a", argv[2]);
        if (*appnum == 1)
            CHECK(strstr(argv[3], "/b") != NULL, "argv[3] '%s', want script b", argv[3]);
        CHECK(strcmp(argv[k], "x") == 0 && strcmp(argv[k + 1], "y z") == 0, "spawn arguments '%s' '%s'", argv[k], argv[k + 1]);
        ok = 1;
        MPI_OK(MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_SUM, parent));
        MPI_OK(MPI_Comm_disconnect(&parent));
        MPI_OK(MPI_Finalize());
        return 0;
    }
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    /* The interpreter line names this program's file (argv[0]: /proc/self/exe is the host in
       threads mode). */
    CHECK(realpath(argv[0], exe) != NULL, "realpath(%s)", argv[0]);
    if (rank == 0) {
        snprintf(dir, sizeof dir, "/tmp/oxmpi-spawn-script-XXXXXX");
        CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    }
    MPI_OK(MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD));
    snprintf(a, sizeof a, "%s/a", dir);
    snprintf(b, sizeof b, "%s/b", dir);
    if (rank == 0) {
        write_script(a, exe, MARK);
        write_script(b, a, NULL);
    }
    char *cmds[] = {a, b};
    char *args1[] = {"x", "y z", NULL};
    char **args[] = {args1, args1};
    int n[] = {1, 2}, errs[3] = {-1, -1, -1};
    MPI_Info infos[] = {MPI_INFO_NULL, MPI_INFO_NULL};
    MPI_OK(MPI_Comm_spawn_multiple(2, cmds, args, n, infos, 0, MPI_COMM_WORLD, &inter, errs));
    for (int i = 0; i < 3; i++)
        CHECK(errs[i] == MPI_SUCCESS, "errcodes[%d] = %d", i, errs[i]);
    ok = 0;
    MPI_OK(MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_SUM, inter));
    CHECK(all == 3, "%d of 3 children saw the right argv", all);
    MPI_OK(MPI_Comm_disconnect(&inter));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        CHECK(unlink(b) == 0 && unlink(a) == 0 && rmdir(dir) == 0, "cleanup of %s", dir);
        printf("spawn_script OK\n");
    }
    MPI_OK(MPI_Finalize());
    return 0;
}
