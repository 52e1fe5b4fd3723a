/* oxmpi-test: ranks=1,2,3,4,8 */
/* MPI_Comm_create (collective over the parent) and MPI_Comm_create_group (collective over the
   group only) from groups of MPI_COMM_WORLD: members get a communicator ranked as in the group,
   the others MPI_COMM_NULL; MPI_Comm_group of the result gives the group back. */
#include "oxtest.h"

int main(int argc, char **argv)
{
    int rank, size, r, n, res;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_Group world, evens_rev;
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    /* even world ranks, in reverse order */
    int ne = (size + 1) / 2, ranks[64];
    for (int i = 0; i < ne; i++)
        ranks[i] = 2 * (ne - 1 - i);
    MPI_OK(MPI_Group_incl(world, ne, ranks, &evens_rev));

    MPI_Comm c;
    MPI_OK(MPI_Comm_create(MPI_COMM_WORLD, evens_rev, &c));
    CHECK((rank % 2 == 0) == (c != MPI_COMM_NULL), "Comm_create membership wrong on rank %d", rank);
    if (c != MPI_COMM_NULL) {
        MPI_OK(MPI_Comm_rank(c, &r));
        MPI_OK(MPI_Comm_size(c, &n));
        CHECK(n == ne && r == ne - 1 - rank / 2, "Comm_create: rank %d size %d", r, n);
        MPI_Group back;
        MPI_OK(MPI_Comm_group(c, &back));
        MPI_OK(MPI_Group_compare(back, evens_rev, &res));
        CHECK(res == MPI_IDENT, "group of the new communicator compares %d", res);
        MPI_OK(MPI_Group_free(&back));
        int sum = 0, one = 1;
        MPI_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c));
        CHECK(sum == ne, "allreduce on created comm: %d", sum);
        MPI_OK(MPI_Comm_free(&c));
    }

    /* create_group: only the members call it */
    if (rank % 2 == 0) {
        MPI_OK(MPI_Comm_create_group(MPI_COMM_WORLD, evens_rev, 5, &c));
        CHECK(c != MPI_COMM_NULL, "create_group returned MPI_COMM_NULL to a member");
        MPI_OK(MPI_Comm_rank(c, &r));
        CHECK(r == ne - 1 - rank / 2, "create_group rank %d", r);
        MPI_OK(MPI_Barrier(c));
        MPI_OK(MPI_Comm_free(&c));
    }
    MPI_OK(MPI_Group_free(&evens_rev));

    /* MPI 2.2: ranks pass different, disjoint groups; each group becomes its own communicator.
       Lower half and upper half of the world (the middle rank of an odd size is in no group). */
    {
        int half = size / 2, mine[64], nm = 0, in = rank < 2 * half;
        MPI_Group g;
        if (in)
            for (int i = 0; i < half; i++)
                mine[nm++] = (rank < half ? 0 : half) + (half - 1 - i); /* reversed */
        MPI_OK(MPI_Group_incl(world, nm, mine, &g));
        MPI_OK(MPI_Comm_create(MPI_COMM_WORLD, g, &c));
        if (in && half > 0) {
            CHECK(c != MPI_COMM_NULL, "disjoint create: MPI_COMM_NULL for a member");
            MPI_OK(MPI_Comm_size(c, &n));
            CHECK(n == half, "disjoint create: size %d, expected %d", n, half);
            MPI_OK(MPI_Comm_rank(c, &r));
            CHECK(r == half - 1 - rank % half, "disjoint create: rank %d", r);
            int sum = 0, one = rank;
            MPI_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c));
            int lo = rank < half ? 0 : half, want = half * lo + half * (half - 1) / 2;
            CHECK(sum == want, "disjoint create: sum of world ranks %d, expected %d", sum, want);
            MPI_OK(MPI_Comm_free(&c));
        } else {
            CHECK(c == MPI_COMM_NULL, "disjoint create: a non-member got a communicator");
        }
        MPI_OK(MPI_Group_free(&g));
    }
    MPI_OK(MPI_Group_free(&world));
    MPI_Finalize();
    return 0;
}
