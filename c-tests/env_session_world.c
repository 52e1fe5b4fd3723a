/* oxmpi-test: ranks=1,2,4,8 */
/* MPI-4 sessions beside the World model (MPI 4.1 sections 11.3 and 11.4): a session opened
   before MPI_Init and used after it, a communicator made from MPI_COMM_WORLD's group with
   MPI_Comm_create_from_group (congruent with MPI_COMM_WORLD). A session opened after
   MPI_Finalize is in env_session_reinit.c. MPI_Initialized and MPI_Finalized
   answer for MPI_Init and MPI_Finalize only. */
#include "oxtest.h"

static void flags(int want_init, int want_fin)
{
    int init = -1, fin = -1;
    MPI_OK(MPI_Initialized(&init));
    MPI_OK(MPI_Finalized(&fin));
    CHECK(init == want_init && fin == want_fin, "MPI_Initialized %d, MPI_Finalized %d; want %d, %d", init, fin, want_init,
          want_fin);
}

/* A ring exchange and a barrier over `comm` of `n` ranks. */
static void ring(MPI_Comm comm)
{
    int rank, n, tok, got = -1;
    MPI_Request rq[2];
    MPI_OK(MPI_Comm_rank(comm, &rank));
    MPI_OK(MPI_Comm_size(comm, &n));
    tok = 100 + rank;
    MPI_OK(MPI_Irecv(&got, 1, MPI_INT, (rank + n - 1) % n, 1, comm, &rq[0]));
    MPI_OK(MPI_Isend(&tok, 1, MPI_INT, (rank + 1) % n, 1, comm, &rq[1]));
    MPI_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    CHECK(got == 100 + (rank + n - 1) % n, "ring got %d", got);
    MPI_OK(MPI_Barrier(comm));
}

/* A communicator over mpi://WORLD of session `s`. */
static MPI_Comm world_of(MPI_Session s, const char *tag)
{
    MPI_Group g;
    MPI_Comm c;
    MPI_OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
    MPI_OK(MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    MPI_OK(MPI_Group_free(&g));
    return c;
}

int main(int argc, char **argv)
{
    MPI_Session before;
    MPI_Comm sc, wc;
    MPI_Group wg;
    int cmp, rank, srank;

    flags(0, 0);
    MPI_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &before));
    sc = world_of(before, "org.oxmpi.test.before");
    ring(sc);
    flags(0, 0);

    MPI_OK(MPI_Init(&argc, &argv));
    flags(1, 0);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_rank(sc, &srank));
    CHECK(rank == srank, "rank %d in MPI_COMM_WORLD, %d in the session's communicator", rank, srank);
    MPI_OK(MPI_Comm_compare(sc, MPI_COMM_WORLD, &cmp));
    CHECK(cmp == MPI_CONGRUENT, "the session's world communicator compares %d with MPI_COMM_WORLD", cmp);
    ring(sc);
    ring(MPI_COMM_WORLD);

    /* MPI_Comm_create_from_group on a World-model group. */
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    MPI_OK(MPI_Comm_create_from_group(wg, "org.oxmpi.test.world-group", MPI_INFO_NULL, MPI_ERRORS_RETURN, &wc));
    MPI_OK(MPI_Group_free(&wg));
    MPI_OK(MPI_Comm_compare(wc, MPI_COMM_WORLD, &cmp));
    CHECK(cmp == MPI_CONGRUENT, "the communicator from MPI_COMM_WORLD's group compares %d", cmp);
    ring(wc);
    MPI_OK(MPI_Comm_free(&wc));

    MPI_OK(MPI_Comm_free(&sc));
    MPI_OK(MPI_Session_finalize(&before));
    ring(MPI_COMM_WORLD);
    MPI_OK(MPI_Finalize());
    flags(1, 1);

    return 0;
}
