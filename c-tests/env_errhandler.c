/* oxmpi-test: ranks=1,2,4 */
/* MPI_Comm_set/get_errhandler with MPI_ERRORS_RETURN and a user handler from
   MPI_Comm_create_errhandler, which must be called with the right communicator and code. */
#include "oxtest.h"

static int calls = 0, last_code = -1;
static MPI_Comm last_comm = MPI_COMM_NULL;

static void handler(MPI_Comm *comm, int *code, ...)
{
    calls++;
    last_code = *code;
    last_comm = *comm;
}

int main(int argc, char **argv)
{
    int rank, size, rc, cls;
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL, got = MPI_ERRHANDLER_NULL;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));

    /* default is MPI_ERRORS_ARE_FATAL */
    MPI_OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &got));
    CHECK(got == MPI_ERRORS_ARE_FATAL, "default errhandler of MPI_COMM_WORLD is not MPI_ERRORS_ARE_FATAL");

    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &got));
    CHECK(got == MPI_ERRORS_RETURN, "get_errhandler after set(MPI_ERRORS_RETURN) differs");

    int x = 1;
    rc = MPI_Send(&x, 1, MPI_INT, size, 0, MPI_COMM_WORLD); /* invalid rank */
    CHECK(rc != MPI_SUCCESS, "send to rank %d succeeded", size);
    MPI_OK(MPI_Error_class(rc, &cls));
    CHECK(cls == MPI_ERR_RANK, "send to invalid rank: class %d, expected MPI_ERR_RANK", cls);

    /* a predefined handler's handle, as get_errhandler hands it out, may be freed (MPICH, Open MPI) */
    for (int i = 0; i < 3; i++) {
        MPI_OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &got));
        MPI_OK(MPI_Errhandler_free(&got));
        CHECK(got == MPI_ERRHANDLER_NULL, "MPI_Errhandler_free of a predefined handler did not set MPI_ERRHANDLER_NULL");
    }
    MPI_OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &got));
    CHECK(got == MPI_ERRORS_RETURN, "the handler changed after freeing its handle");

    /* user handler */
    MPI_OK(MPI_Comm_create_errhandler(handler, &eh));
    CHECK(eh != MPI_ERRHANDLER_NULL, "created errhandler is MPI_ERRHANDLER_NULL");
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh));
    MPI_OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &got));
    CHECK(got == eh, "get_errhandler does not return the user handler");
    MPI_OK(MPI_Errhandler_free(&got));
    CHECK(got == MPI_ERRHANDLER_NULL, "MPI_Errhandler_free did not set MPI_ERRHANDLER_NULL");

    CHECK(calls == 0, "handler called %d times before any error", calls);
    rc = MPI_Send(&x, 1, MPI_INT, size + 3, 0, MPI_COMM_WORLD);
    CHECK(calls == 1, "handler called %d times after one error", calls);
    CHECK(last_comm == MPI_COMM_WORLD, "handler got the wrong communicator");
    MPI_OK(MPI_Error_class(last_code, &cls));
    CHECK(cls == MPI_ERR_RANK, "handler got code %d of class %d, expected MPI_ERR_RANK", last_code, cls);
    CHECK(rc != MPI_SUCCESS, "erroneous send returned MPI_SUCCESS after the user handler returned");

    /* MPI_Comm_call_errhandler passes the code through unchanged */
    MPI_OK(MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_OTHER));
    CHECK(calls == 2, "handler called %d times after MPI_Comm_call_errhandler", calls);
    CHECK(last_code == MPI_ERR_OTHER, "call_errhandler: handler got %d, expected MPI_ERR_OTHER", last_code);

    /* handler on MPI_COMM_SELF is independent */
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, eh));
    rc = MPI_Send(&x, 1, MPI_INT, 1, 0, MPI_COMM_SELF); /* rank 1 invalid in SELF */
    CHECK(calls == 3, "handler on MPI_COMM_SELF: %d calls", calls);
    CHECK(last_comm == MPI_COMM_SELF, "handler on MPI_COMM_SELF got the wrong communicator");
    MPI_OK(MPI_Error_class(last_code, &cls));
    CHECK(cls == MPI_ERR_RANK, "SELF: handler got class %d, expected MPI_ERR_RANK", cls);

    /* the handler stays attached after MPI_Errhandler_free of the user's handle */
    MPI_OK(MPI_Errhandler_free(&eh));
    CHECK(eh == MPI_ERRHANDLER_NULL, "MPI_Errhandler_free did not set MPI_ERRHANDLER_NULL");
    rc = MPI_Send(&x, 1, MPI_INT, -7, 0, MPI_COMM_WORLD);
    CHECK(calls == 4, "handler not called after MPI_Errhandler_free of an attached handler (%d calls)", calls);

    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    rc = MPI_Send(&x, 1, MPI_INT, size, 0, MPI_COMM_WORLD);
    CHECK(calls == 4, "user handler still called after replacing it");
    CHECK(rc != MPI_SUCCESS, "send to invalid rank succeeded");

    /* communication still works */
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Finalize());
    return 0;
}
