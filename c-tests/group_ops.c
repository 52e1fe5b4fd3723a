/* oxmpi-test: ranks=1,2,3,4,8 */
/* MPI groups (MPI 4.1 section 7.3) from MPI_COMM_WORLD's group: size/rank, incl/excl, range_incl/
   range_excl with positive and negative strides, union/intersection/difference order, compare,
   translate_ranks (MPI_PROC_NULL, non-members), empty results, and the error classes of bad ranks,
   counts, ranges and groups under MPI_ERRORS_RETURN. Groups are local: no communication. */
#include "oxtest.h"

static int n_;
static int rank_;

/* Require that group g has exactly the world ranks m[0..k). */
static void check_members(MPI_Group g, const int *m, int k, int line)
{
    MPI_Group world;
    int size, me, w[64], idx[64];
    MPI_OK(MPI_Group_size(g, &size));
    CHECK(size == k, "line %d: group size %d, expected %d", line, size, k);
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    for (int i = 0; i < k; i++)
        idx[i] = i;
    MPI_OK(MPI_Group_translate_ranks(g, k, idx, world, w));
    for (int i = 0; i < k; i++)
        CHECK(w[i] == m[i], "line %d: member %d is world rank %d, expected %d", line, i, w[i], m[i]);
    MPI_OK(MPI_Group_rank(g, &me));
    int expect = MPI_UNDEFINED;
    for (int i = 0; i < k; i++)
        if (m[i] == rank_)
            expect = i;
    CHECK(me == expect, "line %d: MPI_Group_rank %d, expected %d", line, me, expect);
    MPI_OK(MPI_Group_free(&world));
}
#define MEMBERS(g, ...)                                                                  \
    do {                                                                                 \
        int m_[] = {__VA_ARGS__};                                                        \
        check_members((g), m_, (int)(sizeof m_ / sizeof m_[0]), __LINE__);               \
    } while (0)

int main(int argc, char **argv)
{
    MPI_Group world, self, g, h, u;
    int n, r, res, a[16], b[16];
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank_));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &n_));
    n = n_;
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));

    /* world and self */
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    MPI_OK(MPI_Group_size(world, &r));
    CHECK(r == n, "world group size %d", r);
    MPI_OK(MPI_Group_rank(world, &r));
    CHECK(r == rank_, "world group rank %d", r);
    MPI_OK(MPI_Comm_group(MPI_COMM_SELF, &self));
    MEMBERS(self, rank_);
    MPI_OK(MPI_Group_size(MPI_GROUP_EMPTY, &r));
    CHECK(r == 0, "MPI_GROUP_EMPTY size %d", r);
    MPI_OK(MPI_Group_rank(MPI_GROUP_EMPTY, &r));
    CHECK(r == MPI_UNDEFINED, "MPI_GROUP_EMPTY rank %d", r);

    /* incl: reversed world */
    for (int i = 0; i < n; i++)
        a[i] = n - 1 - i;
    MPI_OK(MPI_Group_incl(world, n, a, &g));
    check_members(g, a, n, __LINE__);
    MPI_OK(MPI_Group_compare(world, g, &res));
    CHECK(res == (n == 1 ? MPI_IDENT : MPI_SIMILAR), "compare(world, reversed) = %d", res);
    MPI_OK(MPI_Group_compare(world, world, &res));
    CHECK(res == MPI_IDENT, "compare(world, world) = %d", res);
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &h));
    MPI_OK(MPI_Group_compare(world, h, &res));
    CHECK(res == MPI_IDENT, "compare(world, second world handle) = %d", res);
    MPI_OK(MPI_Group_free(&h));
    CHECK(h == MPI_GROUP_NULL, "freed handle is not MPI_GROUP_NULL");
    MPI_OK(MPI_Group_compare(world, self, &res));
    CHECK(res == (n == 1 ? MPI_IDENT : MPI_UNEQUAL), "compare(world, self) = %d", res);

    /* translate_ranks world -> reversed, with MPI_PROC_NULL */
    for (int i = 0; i < n; i++)
        a[i] = i;
    a[n] = MPI_PROC_NULL;
    MPI_OK(MPI_Group_translate_ranks(world, n + 1, a, g, b));
    for (int i = 0; i < n; i++)
        CHECK(b[i] == n - 1 - i, "translate %d -> %d", i, b[i]);
    CHECK(b[n] == MPI_PROC_NULL, "MPI_PROC_NULL translated to %d", b[n]);
    MPI_OK(MPI_Group_translate_ranks(world, 0, NULL, g, NULL));
    MPI_OK(MPI_Group_free(&g));

    /* incl of the even ranks, translate to it: odd ranks are MPI_UNDEFINED */
    int ne = (n + 1) / 2;
    for (int i = 0; i < ne; i++)
        a[i] = 2 * i;
    MPI_OK(MPI_Group_incl(world, ne, a, &g));
    check_members(g, a, ne, __LINE__);
    for (int i = 0; i < n; i++)
        a[i] = i;
    MPI_OK(MPI_Group_translate_ranks(world, n, a, g, b));
    for (int i = 0; i < n; i++)
        CHECK(b[i] == (i % 2 ? MPI_UNDEFINED : i / 2), "translate %d to evens -> %d", i, b[i]);
    MPI_OK(MPI_Group_translate_ranks(world, 1, a, MPI_GROUP_EMPTY, b));
    CHECK(b[0] == MPI_UNDEFINED, "translate to MPI_GROUP_EMPTY -> %d", b[0]);

    /* excl of the even ranks = the odd ranks */
    for (int i = 0; i < ne; i++)
        a[i] = 2 * i;
    MPI_OK(MPI_Group_excl(world, ne, a, &h));
    int no = 0;
    for (int i = 1; i < n; i += 2)
        b[no++] = i;
    if (no == 0) {
        MPI_OK(MPI_Group_size(h, &r));
        CHECK(r == 0, "excl of everything has %d members", r);
    } else {
        check_members(h, b, no, __LINE__);
    }

    /* union, intersection, difference: order rules */
    MPI_OK(MPI_Group_union(h, g, &u)); /* odds then evens */
    for (int i = 0; i < no; i++)
        a[i] = b[i];
    for (int i = 0; i < ne; i++)
        a[no + i] = 2 * i;
    check_members(u, a, n, __LINE__);
    MPI_OK(MPI_Group_compare(u, world, &res));
    CHECK(res == (n <= 1 ? MPI_IDENT : MPI_SIMILAR), "compare(odds+evens, world) = %d", res);
    MPI_OK(MPI_Group_free(&u));
    MPI_OK(MPI_Group_union(g, world, &u)); /* evens then odds */
    for (int i = 0; i < ne; i++)
        a[i] = 2 * i;
    for (int i = 0; i < no; i++)
        a[ne + i] = b[i];
    check_members(u, a, n, __LINE__);
    MPI_OK(MPI_Group_free(&u));
    MPI_OK(MPI_Group_intersection(g, h, &u));
    MPI_OK(MPI_Group_size(u, &r));
    CHECK(r == 0, "evens & odds has %d members", r);
    MPI_OK(MPI_Group_free(&u));
    CHECK(u == MPI_GROUP_NULL, "freed empty result is not MPI_GROUP_NULL");
    for (int i = 0; i < n; i++)
        a[i] = n - 1 - i;
    MPI_OK(MPI_Group_incl(world, n, a, &u)); /* reversed */
    MPI_Group t;
    MPI_OK(MPI_Group_intersection(u, g, &t)); /* evens, in reversed order */
    for (int i = 0, k = 0; i < n; i++)
        if (a[i] % 2 == 0)
            b[k++] = a[i];
    check_members(t, b, ne, __LINE__);
    MPI_OK(MPI_Group_free(&t));
    MPI_OK(MPI_Group_difference(u, g, &t)); /* odds, in reversed order */
    for (int i = 0, k = 0; i < n; i++)
        if (a[i] % 2 == 1)
            b[k++] = a[i];
    if (no > 0)
        check_members(t, b, no, __LINE__);
    MPI_OK(MPI_Group_free(&t));
    MPI_OK(MPI_Group_difference(world, world, &t));
    MPI_OK(MPI_Group_size(t, &r));
    CHECK(r == 0, "world - world has %d members", r);
    MPI_OK(MPI_Group_free(&t));
    MPI_OK(MPI_Group_union(MPI_GROUP_EMPTY, self, &t));
    MEMBERS(t, rank_);
    MPI_OK(MPI_Group_free(&t));
    MPI_OK(MPI_Group_free(&u));
    MPI_OK(MPI_Group_free(&h));
    MPI_OK(MPI_Group_free(&g));

    /* range_incl / range_excl */
    int rg[3][3];
    rg[0][0] = 0, rg[0][1] = n - 1, rg[0][2] = 1;
    MPI_OK(MPI_Group_range_incl(world, 1, rg, &g));
    MPI_OK(MPI_Group_compare(g, world, &res));
    CHECK(res == MPI_IDENT, "range (0, n-1, 1) compare %d", res);
    MPI_OK(MPI_Group_free(&g));
    rg[0][0] = n - 1, rg[0][1] = 0, rg[0][2] = -1;
    MPI_OK(MPI_Group_range_incl(world, 1, rg, &g));
    for (int i = 0; i < n; i++)
        a[i] = n - 1 - i;
    check_members(g, a, n, __LINE__);
    MPI_OK(MPI_Group_free(&g));
    if (n == 8) {
        rg[0][0] = 0, rg[0][1] = 7, rg[0][2] = 3;  /* 0 3 6 */
        rg[1][0] = 7, rg[1][1] = 4, rg[1][2] = -3; /* 7 4 */
        rg[2][0] = 2, rg[2][1] = 2, rg[2][2] = 5;  /* 2 */
        MPI_OK(MPI_Group_range_incl(world, 3, rg, &g));
        MEMBERS(g, 0, 3, 6, 7, 4, 2);
        MPI_OK(MPI_Group_range_excl(world, 3, rg, &h));
        MEMBERS(h, 1, 5);
        MPI_OK(MPI_Group_free(&g));
        MPI_OK(MPI_Group_free(&h));
        rg[0][0] = 1, rg[0][1] = 7, rg[0][2] = 2; /* 1 3 5 7 */
        MPI_OK(MPI_Group_range_excl(world, 1, rg, &g));
        MEMBERS(g, 0, 2, 4, 6);
        MPI_OK(MPI_Group_free(&g));
    }
    if (n >= 3) {
        rg[0][0] = 2, rg[0][1] = 0, rg[0][2] = -2; /* 2 0 */
        MPI_OK(MPI_Group_range_incl(world, 1, rg, &g));
        MEMBERS(g, 2, 0);
        MPI_OK(MPI_Group_free(&g));
    }
    MPI_OK(MPI_Group_range_incl(world, 0, rg, &g));
    MPI_OK(MPI_Group_size(g, &r));
    CHECK(r == 0, "empty range_incl has %d members", r);
    MPI_OK(MPI_Group_free(&g));
    MPI_OK(MPI_Group_excl(world, 0, a, &g));
    MPI_OK(MPI_Group_compare(g, world, &res));
    CHECK(res == MPI_IDENT, "excl of nothing compare %d", res);
    MPI_OK(MPI_Group_free(&g));
    MPI_OK(MPI_Group_incl(world, 0, a, &g));
    MPI_OK(MPI_Group_size(g, &r));
    CHECK(r == 0, "incl of nothing has %d members", r);
    MPI_OK(MPI_Group_free(&g));

    /* errors */
    g = MPI_GROUP_NULL;
    a[0] = n;
    CHECK_CLASS(MPI_Group_incl(world, 1, a, &g), MPI_ERR_RANK);
    a[0] = -1;
    CHECK_CLASS(MPI_Group_incl(world, 1, a, &g), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Group_incl(world, -1, a, &g), MPI_ERR_ARG);
    a[0] = n;
    CHECK_CLASS(MPI_Group_excl(world, 1, a, &g), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Group_excl(world, -1, a, &g), MPI_ERR_ARG);
    a[0] = 0, a[1] = n;
    CHECK_CLASS(MPI_Group_translate_ranks(world, 2, a, self, b), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Group_translate_ranks(world, -1, a, self, b), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Group_translate_ranks(MPI_GROUP_EMPTY, 1, a, world, b), MPI_ERR_RANK);
    rg[0][0] = 0, rg[0][1] = 0, rg[0][2] = 0;
    CHECK_CLASS(MPI_Group_range_incl(world, 1, rg, &g), MPI_ERR_ARG);
    rg[0][0] = 0, rg[0][1] = n, rg[0][2] = 1;
    CHECK_CLASS(MPI_Group_range_incl(world, 1, rg, &g), MPI_ERR_ARG);
    rg[0][0] = -1, rg[0][1] = 0, rg[0][2] = 1;
    CHECK_CLASS(MPI_Group_range_excl(world, 1, rg, &g), MPI_ERR_ARG);
    rg[0][0] = 0, rg[0][1] = 0, rg[0][2] = 1;
    rg[1][0] = 0, rg[1][1] = 0, rg[1][2] = 1;
    CHECK_CLASS(MPI_Group_range_incl(world, 2, rg, &g), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Group_range_incl(world, -1, rg, &g), MPI_ERR_ARG);
    if (n >= 2) {
        rg[0][0] = 1, rg[0][1] = 0, rg[0][2] = 1;
        CHECK_CLASS(MPI_Group_range_incl(world, 1, rg, &g), MPI_ERR_ARG);
    }
    CHECK(g == MPI_GROUP_NULL, "a failed call wrote a group handle");
    CHECK_CLASS(MPI_Group_size(MPI_GROUP_NULL, &r), MPI_ERR_GROUP);
    CHECK_CLASS(MPI_Group_rank(MPI_GROUP_NULL, &r), MPI_ERR_GROUP);
    CHECK_CLASS(MPI_Group_union(world, MPI_GROUP_NULL, &g), MPI_ERR_GROUP);
    CHECK_CLASS(MPI_Group_compare(MPI_GROUP_NULL, world, &res), MPI_ERR_GROUP);
    CHECK_CLASS(MPI_Group_size((MPI_Group)MPI_COMM_WORLD, &r), MPI_ERR_GROUP);
    CHECK_CLASS(MPI_Group_free(&g), MPI_ERR_GROUP);
    CHECK_CLASS(MPI_Group_size(world, NULL), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Group_union(world, world, NULL), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Comm_group(MPI_COMM_NULL, &g), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Comm_group(MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    g = MPI_GROUP_EMPTY;
    MPI_OK(MPI_Group_free(&g));
    CHECK(g == MPI_GROUP_NULL, "freeing MPI_GROUP_EMPTY left %x", (unsigned)g);
    MPI_OK(MPI_Group_size(MPI_GROUP_EMPTY, &r));

    /* many groups, freed in an interleaved order */
    MPI_Group many[64];
    for (int i = 0; i < 64; i++)
        MPI_OK(MPI_Group_incl(world, 1, &rank_, &many[i]));
    for (int i = 0; i < 64; i += 2)
        MPI_OK(MPI_Group_free(&many[i]));
    for (int i = 1; i < 64; i += 2) {
        MEMBERS(many[i], rank_);
        MPI_OK(MPI_Group_free(&many[i]));
    }

    MPI_OK(MPI_Group_free(&self));
    MPI_OK(MPI_Group_free(&world));
    MPI_Finalize();
    return 0;
}
