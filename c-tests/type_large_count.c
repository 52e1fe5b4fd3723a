/* oxmpi-test: ranks=1 */
/* Large-count (_c) datatype calls give the same layouts as their int versions; MPI_Pack_c /
   MPI_Unpack_c / MPI_Pack_size_c; MPI_Get_count_c / MPI_Get_elements_c; MPI_Type_match_size and
   MPI_Type_create_f90_integer/real/complex map to the Fortran sized types as MPICH 4.0.2 does. */
#include "oxtest.h"

static void same_layout(MPI_Datatype a, MPI_Datatype b, int line)
{
    MPI_Aint lb1, ex1, tlb1, tex1;
    MPI_Count lb2, ex2, tlb2, tex2, sz2;
    int sz1;
    MPI_OK(MPI_Type_get_extent(a, &lb1, &ex1));
    MPI_OK(MPI_Type_get_true_extent(a, &tlb1, &tex1));
    MPI_OK(MPI_Type_size(a, &sz1));
    MPI_OK(MPI_Type_get_extent_c(b, &lb2, &ex2));
    MPI_OK(MPI_Type_get_true_extent_c(b, &tlb2, &tex2));
    MPI_OK(MPI_Type_size_c(b, &sz2));
    CHECK(lb1 == lb2 && ex1 == ex2 && tlb1 == tlb2 && tex1 == tex2 && sz1 == sz2, "line %d: (%ld %ld %ld %ld %d) vs (%lld %lld %lld %lld %lld)", line,
          (long)lb1, (long)ex1, (long)tlb1, (long)tex1, sz1, (long long)lb2, (long long)ex2, (long long)tlb2, (long long)tex2, (long long)sz2);
    MPI_Type_free(&a);
    MPI_Type_free(&b);
}

static int type_size(MPI_Datatype t)
{
    int s;
    MPI_OK(MPI_Type_size(t, &s));
    return s;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Datatype a, b;
    MPI_OK(MPI_Type_contiguous(3, MPI_INT, &a));
    MPI_OK(MPI_Type_contiguous_c(3, MPI_INT, &b));
    same_layout(a, b, __LINE__);
    MPI_OK(MPI_Type_vector(3, 2, -4, MPI_INT, &a));
    MPI_OK(MPI_Type_vector_c(3, 2, -4, MPI_INT, &b));
    same_layout(a, b, __LINE__);
    MPI_OK(MPI_Type_create_hvector(2, 1, 40, MPI_DOUBLE, &a));
    MPI_OK(MPI_Type_create_hvector_c(2, 1, 40, MPI_DOUBLE, &b));
    same_layout(a, b, __LINE__);
    {
        int bl[2] = {2, 1}, d[2] = {5, 1};
        MPI_Count blc[2] = {2, 1}, dc[2] = {5, 1};
        MPI_Aint da[2] = {20, 4};
        MPI_Count dac[2] = {20, 4};
        MPI_Datatype ts[2] = {MPI_CHAR, MPI_DOUBLE};
        MPI_OK(MPI_Type_indexed(2, bl, d, MPI_INT, &a));
        MPI_OK(MPI_Type_indexed_c(2, blc, dc, MPI_INT, &b));
        same_layout(a, b, __LINE__);
        MPI_OK(MPI_Type_create_hindexed(2, bl, da, MPI_INT, &a));
        MPI_OK(MPI_Type_create_hindexed_c(2, blc, dac, MPI_INT, &b));
        same_layout(a, b, __LINE__);
        MPI_OK(MPI_Type_create_indexed_block(2, 3, d, MPI_SHORT, &a));
        MPI_OK(MPI_Type_create_indexed_block_c(2, 3, dc, MPI_SHORT, &b));
        same_layout(a, b, __LINE__);
        MPI_OK(MPI_Type_create_hindexed_block(2, 3, da, MPI_SHORT, &a));
        MPI_OK(MPI_Type_create_hindexed_block_c(2, 3, dac, MPI_SHORT, &b));
        same_layout(a, b, __LINE__);
        MPI_OK(MPI_Type_create_struct(2, bl, da, ts, &a));
        MPI_OK(MPI_Type_create_struct_c(2, blc, dac, ts, &b));
        same_layout(a, b, __LINE__);
        int sz[2] = {4, 5}, sub[2] = {2, 3}, st[2] = {1, 2};
        MPI_Count szc[2] = {4, 5}, subc[2] = {2, 3}, stc[2] = {1, 2};
        MPI_OK(MPI_Type_create_subarray(2, sz, sub, st, MPI_ORDER_FORTRAN, MPI_INT, &a));
        MPI_OK(MPI_Type_create_subarray_c(2, szc, subc, stc, MPI_ORDER_FORTRAN, MPI_INT, &b));
        same_layout(a, b, __LINE__);
        MPI_OK(MPI_Type_create_resized(MPI_INT, -4, 16, &a));
        MPI_OK(MPI_Type_create_resized_c(MPI_INT, -4, 16, &b));
        same_layout(a, b, __LINE__);
    }

    /* MPI_Pack_c / MPI_Unpack_c / MPI_Pack_size_c with a vector */
    {
        int src[6] = {1, 2, 3, 4, 5, 6}, dst[6] = {0, 0, 0, 0, 0, 0};
        char buf[64];
        MPI_Count ps, pos = 4, upos = 4;
        MPI_Datatype v;
        MPI_OK(MPI_Type_vector(3, 1, 2, MPI_INT, &v));
        MPI_OK(MPI_Type_commit(&v));
        MPI_OK(MPI_Pack_size_c(2, v, MPI_COMM_WORLD, &ps));
        CHECK(ps >= 24, "Pack_size_c %lld", (long long)ps);
        MPI_OK(MPI_Pack_c(src, 1, v, buf, sizeof buf, &pos, MPI_COMM_WORLD));
        CHECK(pos == 16, "position %lld after Pack_c", (long long)pos);
        MPI_OK(MPI_Unpack_c(buf, sizeof buf, &upos, dst, 1, v, MPI_COMM_WORLD));
        CHECK(upos == 16 && dst[0] == 1 && dst[2] == 3 && dst[4] == 5 && dst[1] == 0, "Unpack_c %lld %d %d %d", (long long)upos, dst[0], dst[2], dst[4]);

        /* Get_count_c / Get_elements_c after a self send of 2 vectors received as ints */
        int rbuf[6];
        MPI_Status s;
        MPI_Count c;
        MPI_OK(MPI_Sendrecv(src, 2, MPI_INT, 0, 1, rbuf, 6, MPI_INT, 0, 1, MPI_COMM_SELF, &s));
        MPI_OK(MPI_Get_count_c(&s, MPI_INT, &c));
        CHECK(c == 2, "Get_count_c %lld", (long long)c);
        MPI_OK(MPI_Get_count_c(&s, v, &c));
        CHECK(c == MPI_UNDEFINED, "Get_count_c of a partial vector %lld", (long long)c);
        MPI_OK(MPI_Get_elements_c(&s, v, &c));
        CHECK(c == 2, "Get_elements_c %lld", (long long)c);
        MPI_Type_free(&v);
    }

    /* MPI_Type_match_size */
    MPI_Datatype t;
    MPI_OK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 4, &t));
    CHECK(t == MPI_INTEGER4, "match INTEGER 4");
    MPI_OK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 8, &t));
    CHECK(t == MPI_INTEGER8, "match INTEGER 8");
    MPI_OK(MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, &t));
    CHECK(t == MPI_REAL8, "match REAL 8");
    MPI_OK(MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 16, &t));
    CHECK(t == MPI_COMPLEX16, "match COMPLEX 16");

    /* MPI_Type_create_f90_*: sizes and combiners as MPICH */
    int ni, na, nd, comb, ints[2];
    MPI_OK(MPI_Type_create_f90_integer(9, &t));
    CHECK(type_size(t) == 4, "f90 integer r=9 size %d", type_size(t));
    MPI_OK(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_F90_INTEGER && ni == 1 && na == 0 && nd == 0, "f90 integer envelope %d %d %d %d", ni, na, nd, comb);
    MPI_OK(MPI_Type_get_contents(t, 1, 0, 0, ints, NULL, NULL));
    CHECK(ints[0] == 9, "f90 integer contents %d", ints[0]);
    MPI_OK(MPI_Type_create_f90_integer(10, &t));
    CHECK(type_size(t) == 8, "f90 integer r=10 size %d", type_size(t));
    MPI_OK(MPI_Type_create_f90_integer(3, &t));
    CHECK(type_size(t) == 2, "f90 integer r=3 size %d", type_size(t));
    MPI_OK(MPI_Type_create_f90_real(6, MPI_UNDEFINED, &t));
    CHECK(type_size(t) == 4, "f90 real p=6 size %d", type_size(t));
    MPI_OK(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_F90_REAL && ni == 2, "f90 real envelope %d %d", ni, comb);
    MPI_OK(MPI_Type_create_f90_real(MPI_UNDEFINED, 38, &t));
    CHECK(type_size(t) == 8, "f90 real r=38 size %d", type_size(t));
    MPI_OK(MPI_Type_create_f90_complex(15, 300, &t));
    CHECK(type_size(t) == 16, "f90 complex p=15 size %d", type_size(t));
    MPI_OK(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_F90_COMPLEX && ni == 2, "f90 complex envelope %d %d", ni, comb);

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int cls, rc = MPI_Type_match_size(MPI_TYPECLASS_REAL, 2, &t);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ARG, "match REAL 2: class %d", cls);
    CHECK(MPI_Type_create_f90_integer(19, &t) != MPI_SUCCESS, "f90 integer r=19 accepted");
    CHECK(MPI_Type_create_f90_real(16, MPI_UNDEFINED, &t) != MPI_SUCCESS, "f90 real p=16 accepted");
    MPI_Finalize();
    printf("type_large_count OK\n");
    return 0;
}
