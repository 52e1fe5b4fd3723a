/* oxmpi-test: ranks=3 mpmd="-genv OXT_ALL all -n 1 {exe} first : -n 2 -wdir /tmp {exe2} second" */
/* MPMD (mpiexec -n 1 prog1 : -n 2 prog2): one MPI_COMM_WORLD of 3 ranks, two programs (the
   second a copy of the first under another name), each rank with its segment's arguments and
   MPI_APPNUM (its segment's index, as with hydra), -wdir of the second segment only, -genv for
   both; the segments talk to each other (send, allreduce, split by MPI_APPNUM). */
#define _XOPEN_SOURCE 700
#include "oxtest.h"
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, flag = 0, *appnum = NULL;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size == 3, "size %d", size);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag);
    CHECK(flag && appnum, "MPI_APPNUM not set");
    int want = rank == 0 ? 0 : 1;
    CHECK(*appnum == want, "rank %d: MPI_APPNUM %d, expected %d", rank, *appnum, want);
    CHECK(argc == 2 && strcmp(argv[1], want ? "second" : "first") == 0, "rank %d: argc %d argv[1] %s", rank, argc, argc > 1 ? argv[1] : "(none)");
    size_t len = strlen(argv[0]);
    int copy = len > 2 && strcmp(argv[0] + len - 2, ".2") == 0;
    CHECK(copy == want, "rank %d runs %s", rank, argv[0]);
    /* MPI_INFO_ENV describes the rank's own program (its segment's command line). */
    char val[256] = "";
    int found = 0;
    MPI_Info_get(MPI_INFO_ENV, "argv", sizeof val - 1, val, &found);
    CHECK(!found || strcmp(val, want ? "second" : "first") == 0, "rank %d: MPI_INFO_ENV argv '%s'", rank, val);
    const char *all = getenv("OXT_ALL");
    CHECK(all && strcmp(all, "all") == 0, "rank %d: -genv OXT_ALL is '%s'", rank, all ? all : "(unset)");
    char cwd[PATH_MAX], tmp[PATH_MAX];
    CHECK(getcwd(cwd, sizeof cwd) && realpath("/tmp", tmp), "getcwd");
    if (want)
        CHECK(strcmp(cwd, tmp) == 0, "rank %d: working directory %s, expected /tmp (-wdir)", rank, cwd);
    else
        CHECK(strcmp(cwd, tmp) != 0 || (getenv("PWD") && strcmp(getenv("PWD"), "/tmp") == 0), "rank 0 got the second segment's -wdir");

    /* Across segments. */
    int sum = 0;
    MPI_Allreduce(appnum, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(sum == 2, "sum of MPI_APPNUM %d", sum);
    if (rank == 2) {
        int v = 42;
        MPI_Send(&v, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
    } else if (rank == 0) {
        int v = 0;
        MPI_Recv(&v, 1, MPI_INT, 2, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(v == 42, "got %d", v);
    }
    MPI_Comm app;
    MPI_Comm_split(MPI_COMM_WORLD, *appnum, rank, &app);
    int asize;
    MPI_Comm_size(app, &asize);
    CHECK(asize == (want ? 2 : 1), "rank %d: its program's communicator has %d ranks", rank, asize);
    MPI_Comm_free(&app);
    if (rank == 0)
        printf("mpmd ok\n");
    MPI_Finalize();
    return 0;
}
