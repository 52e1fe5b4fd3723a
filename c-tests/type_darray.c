/* oxmpi-test: ranks=1 */
/* MPI_Type_create_darray: block, cyclic(k), none, default darg, C and Fortran order. Every process
   of a virtual grid (size/rank are arguments, so one MPI process checks all of them): extent is
   the whole global array, lb 0, the elements owned are exactly those the distribution gives the
   process (checked by packing a buffer holding each element's index), every element is owned by
   exactly one process, and extents match values measured with MPICH 4.0.2. */
#include "oxtest.h"

#define MAXN 512

/* Owner coordinate of index i in a dimension of size g over p processes. */
static int owner(int dist, int darg, int g, int p, int i)
{
    if (dist == MPI_DISTRIBUTE_NONE)
        return 0;
    if (dist == MPI_DISTRIBUTE_BLOCK) {
        int b = darg == MPI_DISTRIBUTE_DFLT_DARG ? (g + p - 1) / p : darg;
        return i / b;
    }
    int k = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
    return (i / k) % p;
}

/* Checks all ranks of one distribution of a global array of ints; ndims <= 3. */
static void check_all(int ndims, const int *g, const int *dist, const int *darg, const int *ps, int order, int line)
{
    int size = 1, total = 1, i;
    int buf[MAXN], seen[MAXN], packed[MAXN];
    for (i = 0; i < ndims; i++) {
        size *= ps[i];
        total *= g[i];
    }
    CHECK(total <= MAXN, "line %d: array too large", line);
    for (i = 0; i < total; i++) {
        buf[i] = i;
        seen[i] = 0;
    }
    for (int r = 0; r < size; r++) {
        MPI_Datatype t;
        MPI_Aint lb, ext;
        int tsize, pos = 0, coords[3], rr = r, procs = size;
        MPI_OK(MPI_Type_create_darray(size, r, ndims, g, dist, darg, ps, order, MPI_INT, &t));
        MPI_OK(MPI_Type_commit(&t));
        MPI_OK(MPI_Type_get_extent(t, &lb, &ext));
        CHECK(lb == 0 && ext == (MPI_Aint)total * 4, "line %d rank %d: lb %ld extent %ld", line, r, (long)lb, (long)ext);
        MPI_OK(MPI_Type_size(t, &tsize));
        MPI_OK(MPI_Pack(buf, 1, t, packed, (int)sizeof packed, &pos, MPI_COMM_WORLD));
        CHECK(pos == tsize, "line %d rank %d: packed %d bytes, size %d", line, r, pos, tsize);
        /* process grid is row-major whatever the array order */
        for (i = 0; i < ndims; i++) {
            procs /= ps[i];
            coords[i] = rr / procs;
            rr %= procs;
        }
        /* expected owned elements, in array-order memory order (memory order = index order) */
        int n = 0;
        for (int idx = 0; idx < total; idx++) {
            int rest = idx, mine = 1, sub[3];
            if (order == MPI_ORDER_C)
                for (i = ndims - 1; i >= 0; i--) { sub[i] = rest % g[i]; rest /= g[i]; }
            else
                for (i = 0; i < ndims; i++) { sub[i] = rest % g[i]; rest /= g[i]; }
            for (i = 0; i < ndims; i++)
                mine &= owner(dist[i], darg[i], g[i], ps[i], sub[i]) == coords[i];
            if (mine) {
                CHECK(n * 4 < pos, "line %d rank %d: owns more than the %d packed bytes", line, r, pos);
                CHECK(packed[n] == idx, "line %d rank %d: packed element %d is %d, expected %d", line, r, n, packed[n], idx);
                seen[idx]++;
                n++;
            }
        }
        CHECK(n * 4 == pos, "line %d rank %d: owns %d elements, packed %d bytes", line, r, n, pos);
        MPI_OK(MPI_Type_free(&t));
    }
    for (i = 0; i < total; i++)
        CHECK(seen[i] == 1, "line %d: element %d owned %d times", line, i, seen[i]);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    {
        int g[2] = {10, 7}, d[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC}, a[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2}, p[2] = {3, 2};
        check_all(2, g, d, a, p, MPI_ORDER_C, __LINE__);
        check_all(2, g, d, a, p, MPI_ORDER_FORTRAN, __LINE__);
        /* true extents measured with MPICH 4.0.2 for rank 4 (coords (2,0)) */
        MPI_Datatype t;
        MPI_Aint tlb, tex;
        MPI_OK(MPI_Type_create_darray(6, 4, 2, g, d, a, p, MPI_ORDER_C, MPI_INT, &t));
        MPI_OK(MPI_Type_get_true_extent(t, &tlb, &tex));
        CHECK(tlb == 224 && tex == 52, "C: true lb %ld extent %ld, MPICH 224 52", (long)tlb, (long)tex);
        MPI_OK(MPI_Type_free(&t));
        MPI_OK(MPI_Type_create_darray(6, 4, 2, g, d, a, p, MPI_ORDER_FORTRAN, MPI_INT, &t));
        MPI_OK(MPI_Type_get_true_extent(t, &tlb, &tex));
        CHECK(tlb == 32 && tex == 208, "Fortran: true lb %ld extent %ld, MPICH 32 208", (long)tlb, (long)tex);
        /* envelope: MPI_COMBINER_DARRAY with 4 * ndims + 4 integers */
        int ni, na, nd, comb, ints[12];
        MPI_Datatype old;
        MPI_OK(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
        CHECK(comb == MPI_COMBINER_DARRAY && ni == 12 && na == 0 && nd == 1, "envelope %d %d %d %d", ni, na, nd, comb);
        MPI_OK(MPI_Type_get_contents(t, 12, 0, 1, ints, NULL, &old));
        CHECK(ints[0] == 6 && ints[1] == 4 && ints[2] == 2 && ints[3] == 10 && ints[6] == MPI_DISTRIBUTE_CYCLIC && ints[8] == 2 && ints[10] == 2 && ints[11] == MPI_ORDER_FORTRAN && old == MPI_INT,
              "contents %d %d %d %d ... %d", ints[0], ints[1], ints[2], ints[3], ints[11]);
        MPI_OK(MPI_Type_free(&t));
    }
    {
        /* cyclic(3) with a short last block, after a block dimension; cyclic default */
        int g[2] = {5, 8}, d[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_CYCLIC}, a[2] = {MPI_DISTRIBUTE_DFLT_DARG, 3}, p[2] = {2, 2};
        check_all(2, g, d, a, p, MPI_ORDER_C, __LINE__);
        check_all(2, g, d, a, p, MPI_ORDER_FORTRAN, __LINE__);
    }
    {
        int g[3] = {4, 5, 6}, d[3] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_NONE, MPI_DISTRIBUTE_CYCLIC}, a[3] = {2, MPI_DISTRIBUTE_DFLT_DARG, 2}, p[3] = {2, 1, 3};
        check_all(3, g, d, a, p, MPI_ORDER_C, __LINE__);
        check_all(3, g, d, a, p, MPI_ORDER_FORTRAN, __LINE__);
        int d2[3] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC}, a2[3] = {2, MPI_DISTRIBUTE_DFLT_DARG, 4}, p2[3] = {2, 2, 2};
        check_all(3, g, d2, a2, p2, MPI_ORDER_C, __LINE__);
        check_all(3, g, d2, a2, p2, MPI_ORDER_FORTRAN, __LINE__);
    }
    {
        /* more processes than blocks: some own nothing (size 0, extent still the whole array) */
        int g[1] = {3}, d[1] = {MPI_DISTRIBUTE_BLOCK}, a[1] = {MPI_DISTRIBUTE_DFLT_DARG}, p[1] = {4};
        check_all(1, g, d, a, p, MPI_ORDER_C, __LINE__);
        /* invalid: block darg too small (a grid whose product is not size crashes MPICH 4.0.2) */
        MPI_Datatype t;
        int a1[1] = {0};
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
        int g9[1] = {9}, small[1] = {4}, p2[1] = {2};
        int rc = MPI_Type_create_darray(2, 0, 1, g9, d, small, p2, MPI_ORDER_C, MPI_INT, &t);
        CHECK(rc != MPI_SUCCESS, "block darg 4 * 2 procs < 9 accepted");
        (void)a1;
    }
    MPI_Finalize();
    printf("type_darray OK\n");
    return 0;
}
