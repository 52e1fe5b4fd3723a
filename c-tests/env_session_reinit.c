/* oxmpi-test: ranks=1,2,4 mpich=skip */
/* mpich=skip: MPICH 4.0.2 crashes (SIGSEGV in MPI_Session_init) when a session is opened after
   the last one was finalised, which MPI 4.1 section 11.3.1 allows. */
/* Sessions opened again (MPI 4.1 sections 11.3 and 11.4): after the rank's only session ended,
   then after MPI_Finalize; each works for point-to-point and a barrier, and MPI_Initialized and
   MPI_Finalized answer for MPI_Init and MPI_Finalize only. */
#include "oxtest.h"

static void flags(int want_init, int want_fin)
{
    int init = -1, fin = -1;
    MPI_OK(MPI_Initialized(&init));
    MPI_OK(MPI_Finalized(&fin));
    CHECK(init == want_init && fin == want_fin, "MPI_Initialized %d, MPI_Finalized %d; want %d, %d", init, fin, want_init,
          want_fin);
}

/* Opens a session, runs a ring exchange and a barrier over its mpi://WORLD, finalises it. */
static void one_session(const char *tag)
{
    MPI_Session s;
    MPI_Group g;
    MPI_Comm c;
    MPI_Request rq[2];
    int rank, n, tok, got = -1;
    MPI_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    MPI_OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
    MPI_OK(MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    MPI_OK(MPI_Group_free(&g));
    MPI_OK(MPI_Comm_rank(c, &rank));
    MPI_OK(MPI_Comm_size(c, &n));
    tok = 10 * rank;
    MPI_OK(MPI_Irecv(&got, 1, MPI_INT, (rank + n - 1) % n, 0, c, &rq[0]));
    MPI_OK(MPI_Isend(&tok, 1, MPI_INT, (rank + 1) % n, 0, c, &rq[1]));
    MPI_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    CHECK(got == 10 * ((rank + n - 1) % n), "%s: ring got %d", tag, got);
    MPI_OK(MPI_Barrier(c));
    MPI_OK(MPI_Comm_free(&c));
    MPI_OK(MPI_Session_finalize(&s));
}

int main(int argc, char **argv)
{
    one_session("org.oxmpi.test.first");
    flags(0, 0);
    one_session("org.oxmpi.test.second");
    flags(0, 0);
    MPI_OK(MPI_Init(&argc, &argv));
    flags(1, 0);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Finalize());
    flags(1, 1);
    one_session("org.oxmpi.test.after-finalize");
    flags(1, 1);
    return 0;
}
