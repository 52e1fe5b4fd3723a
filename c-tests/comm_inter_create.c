/* oxmpi-test: ranks=2,3,4,5,8 */
/* Communicator constructors on an intercommunicator (MPI 4.1 section 7.4.2): MPI_Comm_create with
   subsets of the local group (some members, all, an empty side), MPI_Comm_split_type (an
   intercommunicator between the two groups' members of the type), MPI_Comm_idup and
   MPI_Comm_idup_with_info; point-to-point and an allreduce on each result. MPI_Comm_create_group
   is defined on intracommunicators only and fails with MPI_ERR_COMM. */
#include "oxtest.h"
#include "oxcoll.h"

static int side; /* 0 or 1: which group of the intercommunicator this process is in */

/* Checks an intercommunicator result: sizes, then every member sends to remote rank 0 and the
   remote rank 0 hears from all; then an allreduce, whose result is the remote group's sum. */
static void talk(MPI_Comm c, int n, int m, const char *what)
{
    int flag, ln, rn, r;
    MPI_OK(MPI_Comm_test_inter(c, &flag));
    CHECK(flag, "%s: not an intercommunicator", what);
    MPI_OK(MPI_Comm_size(c, &ln));
    MPI_OK(MPI_Comm_remote_size(c, &rn));
    CHECK(ln == n && rn == m, "%s: sizes %d/%d, expected %d/%d", what, ln, rn, n, m);
    MPI_OK(MPI_Comm_rank(c, &r));
    int token = 1000 * side + r, got;
    MPI_Request sreq;
    MPI_OK(MPI_Isend(&token, 1, MPI_INT, 0, 7, c, &sreq));
    if (r == 0) {
        MPI_Status st;
        for (int i = 0; i < m; i++) {
            MPI_OK(MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 7, c, &st));
            CHECK(got / 1000 == 1 - side && got % 1000 == st.MPI_SOURCE, "%s: bad message %d from %d", what, got, st.MPI_SOURCE);
        }
    }
    MPI_OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    int mine = 1000 * side + r + 1, sum = 0;
    MPI_OK(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, c));
    int expect = m * (1000 * (1 - side) + 1) + m * (m - 1) / 2;
    CHECK(sum == expect, "%s: allreduce gave %d, expected %d", what, sum, expect);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    side = rank % 2;
    MPI_Comm half, inter, made;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, side, rank, &half));
    int lr, ls, rs;
    MPI_OK(MPI_Comm_rank(half, &lr));
    MPI_OK(MPI_Comm_size(half, &ls));
    MPI_OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, side ? 0 : 1, 9, &inter));
    MPI_OK(MPI_Comm_remote_size(inter, &rs));
    MPI_Group local, evens, empty = MPI_GROUP_EMPTY;
    MPI_OK(MPI_Comm_group(inter, &local));

    /* The even local ranks, highest first: the odd ones get MPI_COMM_NULL. */
    int ranks[8], ne = 0;
    for (int q = ls - 1; q >= 0; q--)
        if (q % 2 == 0)
            ranks[ne++] = q;
    MPI_OK(MPI_Group_incl(local, ne, ranks, &evens));
    MPI_OK(MPI_Comm_create(inter, evens, &made));
    if (lr % 2) {
        CHECK(made == MPI_COMM_NULL, "rank %d: not in the group but got a communicator", rank);
    } else {
        int r;
        MPI_OK(MPI_Comm_rank(made, &r));
        CHECK(r == (ls - 1) / 2 - lr / 2, "rank %d: create rank %d, expected the group's order %d", rank, r, (ls - 1) / 2 - lr / 2);
        talk(made, ne, (rs + 1) / 2, "create(evens)");
        MPI_OK(MPI_Comm_free(&made));
    }

    /* Side 0 passes its whole group, side 1 an empty one: nobody gets a communicator; the same
       with both sides empty. */
    MPI_OK(MPI_Comm_create(inter, side ? empty : local, &made));
    CHECK(made == MPI_COMM_NULL, "rank %d: the remote subset is empty but got a communicator", rank);
    MPI_OK(MPI_Comm_create(inter, empty, &made));
    CHECK(made == MPI_COMM_NULL, "rank %d: both subsets empty but got a communicator", rank);

    /* The whole local group: a copy of the intercommunicator's groups. */
    MPI_OK(MPI_Comm_create(inter, local, &made));
    talk(made, ls, rs, "create(all)");
    MPI_OK(MPI_Comm_free(&made));

    /* split_type: every rank shares the node (MPICH and oxmpi run on one node here); reversed
       keys, except on MPICH 4.0.2, whose split_type of an intercommunicator with keys that
       reorder crashes when the groups differ in size (5 ranks): equal keys keep the order there. */
    int reverse = !oxc_is_mpich();
    MPI_OK(MPI_Comm_split_type(inter, MPI_COMM_TYPE_SHARED, reverse ? -lr : 0, MPI_INFO_NULL, &made));
    CHECK(made != MPI_COMM_NULL, "rank %d: split_type gave MPI_COMM_NULL", rank);
    int r, expect = reverse ? ls - 1 - lr : lr;
    MPI_OK(MPI_Comm_rank(made, &r));
    CHECK(r == expect, "rank %d: split_type rank %d, expected %d", rank, r, expect);
    talk(made, ls, rs, "split_type");
    MPI_OK(MPI_Comm_free(&made));
    MPI_OK(MPI_Comm_split_type(inter, MPI_UNDEFINED, 0, MPI_INFO_NULL, &made));
    CHECK(made == MPI_COMM_NULL, "rank %d: split_type MPI_UNDEFINED gave a communicator", rank);

    /* Two idups in flight at once, then both used. */
    MPI_Comm d1, d2;
    MPI_Request reqs[2];
    MPI_Info info;
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "mpi_assert_no_any_tag", "false"));
    MPI_OK(MPI_Comm_idup(inter, &d1, &reqs[0]));
    MPI_OK(MPI_Comm_idup_with_info(inter, info, &d2, &reqs[1]));
    MPI_OK(MPI_Info_free(&info));
    /* Point-to-point on the parent while the idups are pending: rank r swaps with remote rank r
       (the ranks both groups have). */
    if (lr < rs) {
        int out = 100 * side + lr, in = -1;
        MPI_OK(MPI_Sendrecv(&out, 1, MPI_INT, lr, 4, &in, 1, MPI_INT, lr, 4, inter, MPI_STATUS_IGNORE));
        CHECK(in == 100 * (1 - side) + lr, "rank %d: got %d from remote rank %d during the idups", rank, in, lr);
    }
    MPI_OK(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));
    int cmp;
    MPI_OK(MPI_Comm_compare(inter, d1, &cmp));
    CHECK(cmp == MPI_CONGRUENT, "rank %d: idup compares %d, expected MPI_CONGRUENT", rank, cmp);
    talk(d2, ls, rs, "idup_with_info");
    talk(d1, ls, rs, "idup");
    MPI_OK(MPI_Comm_free(&d1));
    MPI_OK(MPI_Comm_free(&d2));

    /* MPI_Comm_create_group needs an intracommunicator (MPI 4.1 section 7.4.2). */
    MPI_OK(MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN));
    CHECK_CLASS(MPI_Comm_create_group(inter, local, 3, &made), MPI_ERR_COMM);

    /* Side 1 passes the remote group, not a subset of its local one: both sides fail with
       MPI_ERR_GROUP instead of side 0 waiting. oxmpi only: the standard leaves an erroneous
       collective call undefined (MPICH 4.0.2 does not check the group). */
    if (!oxc_is_mpich()) {
        MPI_Group remote;
        MPI_OK(MPI_Comm_remote_group(inter, &remote));
        CHECK_CLASS(MPI_Comm_create(inter, side ? remote : local, &made), MPI_ERR_GROUP);
        MPI_OK(MPI_Group_free(&remote));
        /* The intercommunicator still works afterwards. */
        MPI_OK(MPI_Comm_create(inter, local, &made));
        talk(made, ls, rs, "create after an error");
        MPI_OK(MPI_Comm_free(&made));
    }

    MPI_OK(MPI_Group_free(&evens));
    MPI_OK(MPI_Group_free(&local));
    MPI_OK(MPI_Comm_free(&inter));
    MPI_OK(MPI_Comm_free(&half));
    MPI_Finalize();
    return 0;
}
