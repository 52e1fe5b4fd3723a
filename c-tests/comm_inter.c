/* oxmpi-test: ranks=2,3,4,8 */
/* Intercommunicators: MPI_COMM_WORLD split into even and odd ranks, joined with
   MPI_Intercomm_create. Checks MPI_Comm_test_inter, sizes and ranks (local group), remote size and
   group, point-to-point between the groups (ranks address the remote group, statuses give the
   sender's remote rank, also with MPI_ANY_SOURCE), MPI_ERR_RANK for a rank outside the remote
   group, MPI_Comm_compare, dup, MPI_Intercomm_merge orders (high = 0 first; on a tie the group of
   the lower rank 0 first), MPI_Barrier on intercommunicators, and a second intercommunicator whose
   leaders are not local rank 0 (peer_comm a dup of MPI_COMM_WORLD). */
#include "oxtest.h"

static int rank, size, parity, ne, no;

/* World rank of rank r of the group of parity p (p = 0: evens). */
static int world_of(int p, int r) { return 2 * r + p; }

/* Rank of world rank w in a merged communicator holding the group of parity `first` first. */
static int merged_rank(int first, int w)
{
    int nfirst = first == 0 ? ne : no;
    return w % 2 == first ? w / 2 : nfirst + w / 2;
}

/* Every local rank sends its world rank to remote rank (local rank mod remote size), tag 10 +
   local rank; every rank receives what the remote group sends it with MPI_ANY_SOURCE. */
static void exchange(MPI_Comm inter)
{
    int lrank, lsize, rsize;
    MPI_OK(MPI_Comm_rank(inter, &lrank));
    MPI_OK(MPI_Comm_size(inter, &lsize));
    MPI_OK(MPI_Comm_remote_size(inter, &rsize));
    /* the leaders with explicit ranks, before any MPI_ANY_TAG receive can take the message */
    if (lrank == 0) {
        int v = -1;
        MPI_Status st;
        MPI_OK(MPI_Sendrecv(&rank, 1, MPI_INT, 0, 3, &v, 1, MPI_INT, 0, 3, inter, &st));
        CHECK(v == 1 - parity && st.MPI_SOURCE == 0, "leader got %d from source %d", v, st.MPI_SOURCE);
    }
    MPI_Request req;
    MPI_OK(MPI_Isend(&rank, 1, MPI_INT, lrank % rsize, 10 + lrank, inter, &req));
    int expected = 0;
    for (int j = 0; j < rsize; j++)
        expected += j % lsize == lrank;
    for (int i = 0; i < expected; i++) {
        int v = -1;
        MPI_Status st;
        MPI_OK(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, inter, &st));
        int j = v / 2; /* the sender's rank in its group */
        CHECK(v % 2 != parity, "got world rank %d from my own group", v);
        CHECK(st.MPI_SOURCE == j && st.MPI_TAG == 10 + j, "status source %d tag %d, expected %d %d (value %d)", st.MPI_SOURCE, st.MPI_TAG, j, 10 + j, v);
    }
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
}

/* Merged communicator checks: size, rank, and a ring by rank order. */
static void check_merged(MPI_Comm m, int first)
{
    int r, n;
    MPI_OK(MPI_Comm_size(m, &n));
    MPI_OK(MPI_Comm_rank(m, &r));
    CHECK(n == size && r == merged_rank(first, rank), "merged (first %d): rank %d size %d, expected %d %d", first, r, n, merged_rank(first, rank), size);
    int flag;
    MPI_OK(MPI_Comm_test_inter(m, &flag));
    CHECK(!flag, "the merged communicator is an intercommunicator");
    /* ring: receive the world rank of the previous merged rank */
    int prev = (r + n - 1) % n, v = -1, expect = -1;
    for (int w = 0; w < size; w++)
        if (merged_rank(first, w) == prev)
            expect = w;
    MPI_OK(MPI_Sendrecv(&rank, 1, MPI_INT, (r + 1) % n, 4, &v, 1, MPI_INT, prev, 4, m, MPI_STATUS_IGNORE));
    CHECK(v == expect, "merged ring: got %d from rank %d, expected world rank %d", v, prev, expect);
}

int main(int argc, char **argv)
{
    int r, n, flag, res;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    parity = rank % 2;
    ne = (size + 1) / 2;
    no = size / 2;
    int mine = parity ? no : ne, theirs = parity ? ne : no;

    MPI_Comm half, inter;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, parity, rank, &half));
    MPI_OK(MPI_Comm_test_inter(half, &flag));
    CHECK(!flag, "an intracommunicator tests as inter");
    MPI_OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - parity, 77, &inter));
    MPI_OK(MPI_Comm_test_inter(inter, &flag));
    CHECK(flag, "MPI_Comm_test_inter is false on an intercommunicator");
    MPI_OK(MPI_Comm_size(inter, &n));
    MPI_OK(MPI_Comm_rank(inter, &r));
    CHECK(n == mine && r == rank / 2, "local size %d rank %d, expected %d %d", n, r, mine, rank / 2);
    MPI_OK(MPI_Comm_remote_size(inter, &n));
    CHECK(n == theirs, "remote size %d, expected %d", n, theirs);

    /* local and remote groups against groups of MPI_COMM_WORLD */
    MPI_Group world, lg, rg, mine_g, theirs_g;
    int ranks[64];
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    for (int i = 0; i < mine; i++)
        ranks[i] = world_of(parity, i);
    MPI_OK(MPI_Group_incl(world, mine, ranks, &mine_g));
    for (int i = 0; i < theirs; i++)
        ranks[i] = world_of(1 - parity, i);
    MPI_OK(MPI_Group_incl(world, theirs, ranks, &theirs_g));
    MPI_OK(MPI_Comm_group(inter, &lg));
    MPI_OK(MPI_Comm_remote_group(inter, &rg));
    MPI_OK(MPI_Group_compare(lg, mine_g, &res));
    CHECK(res == MPI_IDENT, "local group compares %d", res);
    MPI_OK(MPI_Group_compare(rg, theirs_g, &res));
    CHECK(res == MPI_IDENT, "remote group compares %d", res);
    MPI_OK(MPI_Group_free(&lg));
    MPI_OK(MPI_Group_free(&rg));

    exchange(inter);

    /* a rank outside the remote group */
    MPI_OK(MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN));
    int rc = MPI_Send(&rank, 1, MPI_INT, theirs, 0, inter);
    CHECK_CLASS(rc, MPI_ERR_RANK);

    MPI_OK(MPI_Comm_compare(inter, inter, &res));
    CHECK(res == MPI_IDENT, "compare(inter, inter) = %d", res);
    MPI_OK(MPI_Comm_compare(inter, MPI_COMM_WORLD, &res));
    CHECK(res == MPI_UNEQUAL, "compare(inter, world) = %d", res);

    MPI_Comm dup;
    MPI_OK(MPI_Comm_dup(inter, &dup));
    MPI_OK(MPI_Comm_test_inter(dup, &flag));
    CHECK(flag, "the dup of an intercommunicator is not one");
    MPI_OK(MPI_Comm_compare(inter, dup, &res));
    CHECK(res == MPI_CONGRUENT, "compare(inter, dup) = %d", res);
    exchange(dup);
    MPI_OK(MPI_Barrier(dup));
    MPI_OK(MPI_Barrier(inter));

    /* merges: high = 0 first; on a tie, the group with the lower world rank as rank 0 (evens) */
    MPI_Comm m;
    MPI_OK(MPI_Intercomm_merge(inter, parity, &m));
    check_merged(m, 0);
    MPI_OK(MPI_Comm_free(&m));
    MPI_OK(MPI_Intercomm_merge(dup, !parity, &m));
    check_merged(m, 1);
    MPI_OK(MPI_Comm_free(&m));
    MPI_OK(MPI_Intercomm_merge(inter, 0, &m));
    check_merged(m, 0);
    MPI_OK(MPI_Comm_free(&m));
    MPI_OK(MPI_Intercomm_merge(dup, 1, &m));
    check_merged(m, 0);
    MPI_OK(MPI_Comm_free(&m));
    MPI_OK(MPI_Comm_free(&dup));

    /* leaders = last local rank, over a dup of MPI_COMM_WORLD; on a tie the group whose rank 0
       has the lower world rank comes first (MPICH's rule), not the group of the lower leader */
    MPI_Comm wdup, inter2;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &wdup));
    int remote_leader = world_of(1 - parity, theirs - 1);
    MPI_OK(MPI_Intercomm_create(half, mine - 1, wdup, remote_leader, 78, &inter2));
    exchange(inter2);
    MPI_OK(MPI_Barrier(inter2));
    MPI_OK(MPI_Intercomm_merge(inter2, 0, &m));
    check_merged(m, 0);
    MPI_OK(MPI_Comm_free(&m));
    MPI_OK(MPI_Comm_free(&inter2));
    MPI_OK(MPI_Comm_free(&wdup));

    MPI_OK(MPI_Comm_free(&inter));
    CHECK(inter == MPI_COMM_NULL, "MPI_Comm_free did not set MPI_COMM_NULL");
    MPI_OK(MPI_Group_free(&mine_g));
    MPI_OK(MPI_Group_free(&theirs_g));
    MPI_OK(MPI_Group_free(&world));
    MPI_OK(MPI_Comm_free(&half));
    MPI_Finalize();
    return 0;
}
