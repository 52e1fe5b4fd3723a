/* oxmpi-test: ranks=1 */
/* Every datatype constructor: size, lb/extent and true lb/extent against hand-computed values,
   MPI_Type_get_envelope/get_contents round trips, names, sticky MPI_LB/MPI_UB, freeing a type
   still used inside another one, and the error classes of bad arguments. */
#include "oxtest.h"

static void check_layout(MPI_Datatype t, int size, MPI_Aint lb, MPI_Aint ext, MPI_Aint tlb, MPI_Aint text, int line)
{
    int s;
    MPI_Aint l, e, tl, te;
    MPI_Count sx, lx, ex;
    MPI_OK(MPI_Type_size(t, &s));
    MPI_OK(MPI_Type_get_extent(t, &l, &e));
    MPI_OK(MPI_Type_get_true_extent(t, &tl, &te));
    MPI_OK(MPI_Type_size_x(t, &sx));
    MPI_OK(MPI_Type_get_extent_x(t, &lx, &ex));
    CHECK(s == size && sx == size, "line %d: size %d (x %lld), expected %d", line, s, (long long)sx, size);
    CHECK(l == lb && e == ext && lx == lb && ex == ext, "line %d: lb %ld extent %ld, expected %ld %ld", line, (long)l, (long)e, (long)lb, (long)ext);
    CHECK(tl == tlb && te == text, "line %d: true lb %ld true extent %ld, expected %ld %ld", line, (long)tl, (long)te, (long)tlb, (long)text);
}
#define LAYOUT(t, s, lb, e, tlb, te) check_layout(t, s, lb, e, tlb, te, __LINE__)

static void envelope(MPI_Datatype t, int ni, int na, int nd, int comb)
{
    int a, b, c, d;
    MPI_OK(MPI_Type_get_envelope(t, &a, &b, &c, &d));
    CHECK(a == ni && b == na && c == nd && d == comb, "envelope (%d,%d,%d,%d), expected (%d,%d,%d,%d)", a, b, c, d, ni, na, nd, comb);
}

int main(int argc, char **argv)
{
    MPI_Datatype con, vec, hvec, idx, hidx, iblk, hblk, st, sub, subf, res, dup, tmp, types[4];
    int ints[16];
    MPI_Aint addrs[8];
    int bl[3] = {2, 1, 3};
    int di[3] = {4, 0, 8};
    MPI_Aint dh[3] = {16, 0, 40};
    char name[MPI_MAX_OBJECT_NAME];
    int len;

    MPI_OK(MPI_Init(&argc, &argv));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    LAYOUT(MPI_INT, 4, 0, 4, 0, 4);
    LAYOUT(MPI_DOUBLE_INT, 12, 0, 16, 0, 12);
    envelope(MPI_INT, 0, 0, 0, MPI_COMBINER_NAMED);

    MPI_OK(MPI_Type_contiguous(3, MPI_INT, &con));
    LAYOUT(con, 12, 0, 12, 0, 12);
    envelope(con, 1, 0, 1, MPI_COMBINER_CONTIGUOUS);
    MPI_OK(MPI_Type_get_contents(con, 1, 0, 1, ints, addrs, types));
    CHECK(ints[0] == 3 && types[0] == MPI_INT, "contiguous contents %d %x", ints[0], (unsigned)types[0]);

    MPI_OK(MPI_Type_vector(3, 2, 4, MPI_INT, &vec));
    LAYOUT(vec, 24, 0, 40, 0, 40);
    envelope(vec, 3, 0, 1, MPI_COMBINER_VECTOR);
    MPI_OK(MPI_Type_get_contents(vec, 3, 0, 1, ints, addrs, types));
    CHECK(ints[0] == 3 && ints[1] == 2 && ints[2] == 4 && types[0] == MPI_INT, "vector contents");

    MPI_OK(MPI_Type_vector(2, 1, -2, MPI_INT, &tmp)); /* negative stride */
    LAYOUT(tmp, 8, -8, 12, -8, 12);
    MPI_OK(MPI_Type_free(&tmp));
    CHECK(tmp == MPI_DATATYPE_NULL, "Type_free sets MPI_DATATYPE_NULL");

    MPI_OK(MPI_Type_create_hvector(2, 3, 20, MPI_SHORT, &hvec));
    LAYOUT(hvec, 12, 0, 26, 0, 26);
    envelope(hvec, 2, 1, 1, MPI_COMBINER_HVECTOR);
    MPI_OK(MPI_Type_get_contents(hvec, 2, 1, 1, ints, addrs, types));
    CHECK(ints[0] == 2 && ints[1] == 3 && addrs[0] == 20 && types[0] == MPI_SHORT, "hvector contents");

    MPI_OK(MPI_Type_indexed(3, bl, di, MPI_DOUBLE, &idx)); /* blocks [32,48) [0,8) [64,88) */
    LAYOUT(idx, 48, 0, 88, 0, 88);
    envelope(idx, 7, 0, 1, MPI_COMBINER_INDEXED);
    MPI_OK(MPI_Type_get_contents(idx, 7, 0, 1, ints, addrs, types));
    CHECK(ints[0] == 3 && ints[1] == 2 && ints[3] == 3 && ints[4] == 4 && ints[6] == 8, "indexed contents");

    MPI_OK(MPI_Type_create_hindexed(3, bl, dh, MPI_INT, &hidx)); /* [16,24) [0,4) [40,52) */
    LAYOUT(hidx, 24, 0, 52, 0, 52);
    envelope(hidx, 4, 3, 1, MPI_COMBINER_HINDEXED);

    MPI_OK(MPI_Type_create_indexed_block(3, 2, di, MPI_FLOAT, &iblk)); /* [16,24) [0,8) [32,40) */
    LAYOUT(iblk, 24, 0, 40, 0, 40);
    envelope(iblk, 5, 0, 1, MPI_COMBINER_INDEXED_BLOCK);

    MPI_OK(MPI_Type_create_hindexed_block(3, 1, dh, MPI_DOUBLE, &hblk)); /* [16,24) [0,8) [40,48) */
    LAYOUT(hblk, 24, 0, 48, 0, 48);
    envelope(hblk, 2, 3, 1, MPI_COMBINER_HINDEXED_BLOCK);

    {
        /* struct { char c; double d[2]; int i; } as the C compiler lays it out */
        struct s { char c; double d[2]; int i; } x;
        int sbl[3] = {1, 2, 1};
        MPI_Aint sd[3], base;
        MPI_Datatype st_t[3] = {MPI_CHAR, MPI_DOUBLE, MPI_INT};
        MPI_OK(MPI_Get_address(&x, &base));
        MPI_OK(MPI_Get_address(&x.c, &sd[0]));
        MPI_OK(MPI_Get_address(&x.d, &sd[1]));
        MPI_OK(MPI_Get_address(&x.i, &sd[2]));
        for (int i = 0; i < 3; i++)
            sd[i] = MPI_Aint_diff(sd[i], base);
        MPI_OK(MPI_Type_create_struct(3, sbl, sd, st_t, &st));
        LAYOUT(st, 21, 0, (MPI_Aint)sizeof x, 0, 28);
        envelope(st, 4, 3, 3, MPI_COMBINER_STRUCT);
        MPI_OK(MPI_Type_get_contents(st, 4, 3, 3, ints, addrs, types));
        CHECK(ints[0] == 3 && ints[2] == 2 && addrs[1] == 8 && types[1] == MPI_DOUBLE && types[2] == MPI_INT, "struct contents");
    }

    /* struct { double; char } is padded to 16 like the C struct. */
    {
        int b2[2] = {1, 1};
        MPI_Aint d2[2] = {0, 8};
        MPI_Datatype t2[2] = {MPI_DOUBLE, MPI_CHAR};
        MPI_OK(MPI_Type_create_struct(2, b2, d2, t2, &tmp));
        LAYOUT(tmp, 9, 0, 16, 0, 9);
        MPI_OK(MPI_Type_free(&tmp));
    }

    /* Sticky MPI_LB / MPI_UB (MPI-1), kept by a contiguous type built on top. */
    {
        int b3[3] = {1, 1, 1};
        MPI_Aint d3[3] = {-4, 0, 20};
        MPI_Datatype t3[3] = {MPI_LB, MPI_INT, MPI_UB};
        MPI_Datatype c2;
        MPI_Aint lb, ub;
        MPI_OK(MPI_Type_create_struct(3, b3, d3, t3, &tmp));
        LAYOUT(tmp, 4, -4, 24, 0, 4);
        MPI_OK(MPI_Type_lb(tmp, &lb));
        MPI_OK(MPI_Type_ub(tmp, &ub));
        CHECK(lb == -4 && ub == 20, "Type_lb/ub %ld %ld", (long)lb, (long)ub);
        MPI_OK(MPI_Type_contiguous(2, tmp, &c2));
        LAYOUT(c2, 8, -4, 48, 0, 28);
        MPI_OK(MPI_Type_free(&tmp));
        MPI_OK(MPI_Type_free(&c2));
    }

    {
        /* 4x5 C array of ints, 2x3 block at (1,2); same in Fortran order. */
        int sz[2] = {4, 5}, ss[2] = {2, 3}, sts[2] = {1, 2};
        MPI_OK(MPI_Type_create_subarray(2, sz, ss, sts, MPI_ORDER_C, MPI_INT, &sub));
        LAYOUT(sub, 24, 0, 80, 28, 32);
        envelope(sub, 8, 0, 1, MPI_COMBINER_SUBARRAY);
        MPI_OK(MPI_Type_get_contents(sub, 8, 0, 1, ints, addrs, types));
        CHECK(ints[0] == 2 && ints[1] == 4 && ints[4] == 3 && ints[6] == 2 && ints[7] == MPI_ORDER_C, "subarray contents");
        MPI_OK(MPI_Type_create_subarray(2, sz, ss, sts, MPI_ORDER_FORTRAN, MPI_INT, &subf));
        LAYOUT(subf, 24, 0, 80, 36, 40);
    }

    MPI_OK(MPI_Type_create_resized(MPI_INT, -4, 16, &res));
    LAYOUT(res, 4, -4, 16, 0, 4);
    envelope(res, 0, 2, 1, MPI_COMBINER_RESIZED);
    MPI_OK(MPI_Type_get_contents(res, 0, 2, 1, ints, addrs, types));
    CHECK(addrs[0] == -4 && addrs[1] == 16 && types[0] == MPI_INT, "resized contents");

    /* Nested: contents hands back a usable handle of the derived inner type. */
    MPI_OK(MPI_Type_contiguous(2, vec, &tmp));
    LAYOUT(tmp, 48, 0, 80, 0, 80);
    MPI_OK(MPI_Type_get_contents(tmp, 1, 0, 1, ints, addrs, types));
    LAYOUT(types[0], 24, 0, 40, 0, 40);
    envelope(types[0], 3, 0, 1, MPI_COMBINER_VECTOR);
    MPI_OK(MPI_Type_free(&types[0]));
    MPI_OK(MPI_Type_free(&tmp));

    MPI_OK(MPI_Type_dup(vec, &dup));
    LAYOUT(dup, 24, 0, 40, 0, 40);
    envelope(dup, 0, 0, 1, MPI_COMBINER_DUP);

    /* Freeing a type still used by another one leaves the other usable. */
    MPI_OK(MPI_Type_vector(2, 1, 3, MPI_DOUBLE, &tmp));
    {
        MPI_Datatype outer;
        MPI_OK(MPI_Type_contiguous(2, tmp, &outer));
        MPI_OK(MPI_Type_free(&tmp));
        MPI_OK(MPI_Type_commit(&outer));
        LAYOUT(outer, 32, 0, 64, 0, 64);
        MPI_OK(MPI_Type_free(&outer));
    }

    /* Names. */
    MPI_OK(MPI_Type_get_name(MPI_DOUBLE, name, &len));
    CHECK(strcmp(name, "MPI_DOUBLE") == 0 && len == 10, "name of MPI_DOUBLE: '%s'", name);
    MPI_OK(MPI_Type_set_name(vec, "my vector"));
    MPI_OK(MPI_Type_get_name(vec, name, &len));
    CHECK(strcmp(name, "my vector") == 0 && len == 9, "name '%s'", name);

    /* Errors. */
    tmp = MPI_INT;
    CHECK_CLASS(MPI_Type_free(&tmp), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Type_contiguous(-1, MPI_INT, &tmp), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Type_contiguous(1, MPI_DATATYPE_NULL, &tmp), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Type_get_contents(MPI_INT, 0, 0, 0, ints, addrs, types), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Type_vector(-1, 1, 1, MPI_INT, &tmp), MPI_ERR_COUNT);

    MPI_OK(MPI_Type_free(&con));
    MPI_OK(MPI_Type_free(&vec));
    MPI_OK(MPI_Type_free(&hvec));
    MPI_OK(MPI_Type_free(&idx));
    MPI_OK(MPI_Type_free(&hidx));
    MPI_OK(MPI_Type_free(&iblk));
    MPI_OK(MPI_Type_free(&hblk));
    MPI_OK(MPI_Type_free(&st));
    MPI_OK(MPI_Type_free(&sub));
    MPI_OK(MPI_Type_free(&subf));
    MPI_OK(MPI_Type_free(&res));
    MPI_OK(MPI_Type_free(&dup));
    MPI_OK(MPI_Finalize());
    return 0;
}
