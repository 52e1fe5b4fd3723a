/* oxmpi-test: ranks=1 */
/* Structs made only of MPI_LB/MPI_UB markers have the marked bounds, as MPICH: MPI_LB at -10 and
   MPI_UB at 0 (in either order, any block lengths) is lb -10, extent 10; a bound without its
   marker is 0 (MPI_LB at -10 alone: lb -10, extent 10; MPI_UB at 8 alone: lb 0, extent 8; MPI_LB
   at 4 alone: lb 4, extent -4); no data: size 0, true extent 0. A resized copy and a struct
   holding one at 50 keep the usual rules. */
#include "oxtest.h"

static MPI_Datatype markers(int n, const int *bl, const MPI_Aint *d, const MPI_Datatype *ty)
{
    MPI_Datatype t;
    MPI_OK(MPI_Type_create_struct(n, bl, d, ty, &t));
    MPI_OK(MPI_Type_commit(&t));
    return t;
}

static void expect(const char *what, MPI_Datatype t, MPI_Aint lb, MPI_Aint ext)
{
    MPI_Aint l, e, tl, te;
    int sz;
    MPI_OK(MPI_Type_get_extent(t, &l, &e));
    MPI_OK(MPI_Type_get_true_extent(t, &tl, &te));
    MPI_OK(MPI_Type_size(t, &sz));
    CHECK(l == lb && e == ext, "%s: lb %ld extent %ld, expected lb %ld extent %ld", what, (long)l, (long)e, (long)lb,
          (long)ext);
    CHECK(sz == 0 && te == 0, "%s: size %d true extent %ld, expected 0 and 0", what, sz, (long)te);
    MPI_Count lbx, extx;
    MPI_OK(MPI_Type_get_extent_x(t, &lbx, &extx));
    CHECK(lbx == lb && extx == ext, "%s: MPI_Type_get_extent_x lb %lld extent %lld", what, (long long)lbx,
          (long long)extx);
}

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_Datatype t[9];
    int k = 0;
    {
        int bl[] = {1, 1};
        MPI_Aint d[] = {-10, 0};
        MPI_Datatype ty[] = {MPI_LB, MPI_UB};
        expect("LB@-10 UB@0", t[k++] = markers(2, bl, d, ty), -10, 10);
    }
    {
        int bl[] = {1, 1};
        MPI_Aint d[] = {0, -10};
        MPI_Datatype ty[] = {MPI_UB, MPI_LB};
        expect("UB@0 LB@-10", t[k++] = markers(2, bl, d, ty), -10, 10);
    }
    {
        int bl[] = {2, 3};
        MPI_Aint d[] = {-10, 0};
        MPI_Datatype ty[] = {MPI_LB, MPI_UB};
        expect("2 LB@-10 3 UB@0", t[k++] = markers(2, bl, d, ty), -10, 10);
    }
    {
        int bl[] = {1};
        MPI_Aint d[] = {-10};
        MPI_Datatype ty[] = {MPI_LB};
        expect("LB@-10", t[k++] = markers(1, bl, d, ty), -10, 10);
        d[0] = 4;
        expect("LB@4", t[k++] = markers(1, bl, d, ty), 4, -4);
    }
    {
        int bl[] = {1};
        MPI_Aint d[] = {8};
        MPI_Datatype ty[] = {MPI_UB};
        expect("UB@8", t[k++] = markers(1, bl, d, ty), 0, 8);
    }
    {
        int bl[] = {1, 1};
        MPI_Aint d[] = {4, 20};
        MPI_Datatype ty[] = {MPI_LB, MPI_UB};
        expect("LB@4 UB@20", t[k++] = markers(2, bl, d, ty), 4, 16);
    }
    MPI_OK(MPI_Type_create_resized(t[0], 2, 40, &t[k]));
    MPI_OK(MPI_Type_commit(&t[k]));
    expect("resized(LB@-10 UB@0, 2, 40)", t[k++], 2, 40);
    for (int i = 0; i < k; i++)
        MPI_OK(MPI_Type_free(&t[i]));
    MPI_OK(MPI_Finalize());
    return 0;
}
