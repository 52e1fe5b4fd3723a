/* oxmpi-test: ranks=1,2,4 mpich=skip */
/* mpich=skip: MPICH 4.0.2 ignores a session's error handler (an unknown process set name is fatal
   under MPI_ERRORS_RETURN), does not check session handles (MPI_SESSION_NULL succeeds), and
   asserts in MPI_Comm_create_from_group(MPI_GROUP_EMPTY) at one rank. */
/* Errors of MPI-4 sessions (MPI 4.1 sections 9.3 and 11.3): the session's error handler
   (MPI_ERRORS_RETURN, a user handler made with MPI_Session_create_errhandler,
   MPI_Session_call_errhandler), an unknown process set name (MPI_ERR_ARG), MPI_GROUP_EMPTY in
   MPI_Comm_create_from_group (MPI_COMM_NULL); then, with MPI_COMM_SELF's and MPI_COMM_WORLD's
   handlers returning, invalid and finalised session handles (MPI_ERR_SESSION). */
#include "oxtest.h"

static int handled = 0, handled_code = 0;
static MPI_Session handled_on = MPI_SESSION_NULL;

static void on_session_error(MPI_Session *s, int *code, ...)
{
    handled++;
    handled_code = *code;
    handled_on = *s;
}

int main(int argc, char **argv)
{
    MPI_Session s, stale;
    MPI_Errhandler eh, got;
    MPI_Group g;
    MPI_Comm c;
    MPI_Info info;
    int rc, n, len = 0;

    MPI_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    MPI_OK(MPI_Session_get_errhandler(s, &got));
    CHECK(got == MPI_ERRORS_RETURN, "the session's handler is not MPI_ERRORS_RETURN");
    rc = MPI_Group_from_session_pset(s, "mpi://NO-SUCH-SET", &g);
    CHECK_CLASS(rc, MPI_ERR_ARG);
    rc = MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 1000, &len, NULL);
    CHECK_CLASS(rc, MPI_ERR_ARG);

    MPI_OK(MPI_Session_create_errhandler(on_session_error, &eh));
    MPI_OK(MPI_Session_set_errhandler(s, eh));
    MPI_OK(MPI_Session_get_errhandler(s, &got));
    CHECK(got == eh, "MPI_Session_get_errhandler does not give the handler set");
    rc = MPI_Session_get_pset_info(s, "mpi://NO-SUCH-SET", &info);
    CHECK_CLASS(rc, MPI_ERR_ARG);
    CHECK(handled == 1 && handled_on == s, "the user handler ran %d times", handled);
    MPI_OK(MPI_Session_call_errhandler(s, MPI_ERR_OTHER));
    CHECK(handled == 2 && handled_code == MPI_ERR_OTHER, "call_errhandler: %d calls, code %d", handled, handled_code);
    MPI_OK(MPI_Errhandler_free(&eh));
    MPI_OK(MPI_Session_set_errhandler(s, MPI_ERRORS_RETURN));

    MPI_OK(MPI_Comm_create_from_group(MPI_GROUP_EMPTY, "org.oxmpi.test.empty", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    CHECK(c == MPI_COMM_NULL, "the empty group gave a communicator");
    MPI_OK(MPI_Group_from_session_pset(s, "mpi://SELF", &g));
    rc = MPI_Comm_create_from_group(g, NULL, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c);
    CHECK_CLASS(rc, MPI_ERR_ARG);
    MPI_OK(MPI_Group_free(&g));

    /* Errors without a valid session go to MPI_COMM_SELF's handler (MPICH: MPI_COMM_WORLD's). */
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    rc = MPI_Session_get_num_psets(MPI_SESSION_NULL, MPI_INFO_NULL, &n);
    CHECK_CLASS(rc, MPI_ERR_SESSION);
    rc = MPI_Group_from_session_pset((MPI_Session)MPI_COMM_WORLD, "mpi://WORLD", &g);
    CHECK_CLASS(rc, MPI_ERR_SESSION);
    stale = s;
    MPI_OK(MPI_Session_finalize(&s));
    rc = MPI_Session_get_num_psets(stale, MPI_INFO_NULL, &n);
    CHECK_CLASS(rc, MPI_ERR_SESSION);
    rc = MPI_Session_finalize(&stale);
    CHECK_CLASS(rc, MPI_ERR_SESSION);
    MPI_OK(MPI_Finalize());
    return 0;
}
