/* oxmpi-test: ranks=1,2 */
/* A program that sets MPI_ERRORS_RETURN on MPI_COMM_WORLD only (most do) gets the error codes of
   calls that concern no communicator back (datatype, group, info, op calls), as with MPICH, instead
   of the job ending. With a handler set on MPI_COMM_SELF, that one decides (MPI 4.1 section 9.3);
   checked only on oxmpi (MPICH 4.0 always uses MPI_COMM_WORLD's). */
#include "oxtest.h"

static int class_of(int rc)
{
    int c;
    MPI_OK(MPI_Error_class(rc, &c));
    return c;
}

static int self_calls;
static void on_self(MPI_Comm *comm, int *code, ...)
{
    (void)code;
    self_calls++;
    CHECK(*comm == MPI_COMM_SELF, "MPI_COMM_SELF's handler got another communicator");
}

int main(int argc, char **argv)
{
    MPI_Datatype t;
    MPI_Group world, g;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int size;
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));

    int rc = MPI_Type_contiguous(-1, MPI_INT, &t);
    CHECK(rc != MPI_SUCCESS, "MPI_Type_contiguous(-1) succeeded");
    CHECK(class_of(rc) == MPI_ERR_COUNT || class_of(rc) == MPI_ERR_ARG, "MPI_Type_contiguous(-1): class %d", class_of(rc));
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    int bad = size + 5;
    rc = MPI_Group_incl(world, 1, &bad, &g);
    CHECK(class_of(rc) == MPI_ERR_RANK || class_of(rc) == MPI_ERR_ARG, "MPI_Group_incl(bad rank): class %d", class_of(rc));
    MPI_Info info = MPI_INFO_NULL;
    rc = MPI_Info_set(info, "k", "v");
    CHECK(class_of(rc) == MPI_ERR_INFO || class_of(rc) == MPI_ERR_ARG, "MPI_Info_set(MPI_INFO_NULL): class %d", class_of(rc));

    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_OK(MPI_Get_library_version(lib, &len));
    if (strstr(lib, "oxmpi")) {
        /* (MPICH 4.0.2 crashes here) */
        rc = MPI_Type_commit(NULL);
        CHECK(rc != MPI_SUCCESS, "MPI_Type_commit(NULL) succeeded");
        /* MPI_COMM_SELF's own handler, once set, takes these errors (MPI_COMM_WORLD's is fatal again) */
        MPI_Errhandler eh;
        MPI_OK(MPI_Comm_create_errhandler(on_self, &eh));
        MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, eh));
        MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
        rc = MPI_Type_contiguous(-1, MPI_INT, &t);
        CHECK(rc != MPI_SUCCESS && self_calls == 1, "MPI_COMM_SELF's handler not used (%d calls)", self_calls);
        MPI_OK(MPI_Errhandler_free(&eh));
    }
    MPI_OK(MPI_Group_free(&world));
    MPI_Finalize();
    return 0;
}
