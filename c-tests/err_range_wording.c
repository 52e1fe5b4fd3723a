/* oxmpi-test: ranks=2 mpich=skip */
/* Error messages write ranges unambiguously (issue 22, item 5): "0 to 1" for the ranks of a
 * 2-rank communicator, "0 to <MPI_TAG_UB>" for tags, not Rust's "0..2" beside "0..=N".
 * mpich=skip: the wording is oxmpi's. */
#include "oxtest.h"
#include <string.h>

static void expect_text(int rc, const char *want, const char *what)
{
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    CHECK(rc != MPI_SUCCESS, "%s succeeded", what);
    MPI_OK(MPI_Error_string(rc, s, &len));
    CHECK(strstr(s, want) != NULL, "%s: message \"%s\" does not contain \"%s\"", what, s, want);
    CHECK(strstr(s, "..") == NULL, "%s: message \"%s\" writes a range with \"..\"", what, s);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size, x = 0, *ub, flag = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size == 2, "needs 2 ranks, got %d", size);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    expect_text(MPI_Send(&x, 1, MPI_INT, 2, 0, MPI_COMM_WORLD), "0 to 1", "MPI_Send to rank 2");
    expect_text(MPI_Bcast(&x, 1, MPI_INT, 5, MPI_COMM_WORLD), "0 to 1", "MPI_Bcast from root 5");
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag));
    CHECK(flag, "MPI_TAG_UB is not set");
    char want[64];
    snprintf(want, sizeof want, "0 to %d", *ub);
    expect_text(MPI_Send(&x, 1, MPI_INT, 0, -5, MPI_COMM_WORLD), want, "MPI_Send with tag -5");
    MPI_Request r;
    expect_text(MPI_Irecv(&x, 1, MPI_INT, 0, -5, MPI_COMM_WORLD, &r), want, "MPI_Irecv with tag -5");
    MPI_Finalize();
    return 0;
}
