/* oxmpi-test: ranks=1,2,3,4,6,8 */
/* Cartesian topologies: MPI_Dims_create (balanced, fixed entries, MPI_ERR_DIMS), a 2-D grid periodic
   in dimension 0 and not in dimension 1 (coords/rank round trip, Cart_get, shifts with MPI_PROC_NULL
   at the open boundary, a Sendrecv along the shift), Cart_sub rows and columns checked with an
   Allreduce and a ring (and with no dimension kept: rank 0 only, as MPICH), a dup keeps the topology, ranks outside a smaller grid get MPI_COMM_NULL,
   Cart_map, Topo_test, and the error classes MPICH gives under MPI_ERRORS_RETURN. */
#include "oxtest.h"

static void dims_case(int n, int nd, const int *in, const int *want)
{
    int d[4];
    memcpy(d, in, sizeof(int) * (size_t)nd);
    MPI_OK(MPI_Dims_create(n, nd, d));
    for (int i = 0; i < nd; i++)
        CHECK(d[i] == want[i], "Dims_create(%d, %d): dims[%d] = %d, expected %d", n, nd, i, d[i], want[i]);
}

int main(int argc, char **argv)
{
    int rank, size, t, r;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));

    /* Dims_create */
    dims_case(6, 2, (int[]){0, 0}, (int[]){3, 2});
    dims_case(12, 3, (int[]){0, 0, 0}, (int[]){3, 2, 2});
    dims_case(16, 2, (int[]){0, 0}, (int[]){4, 4});
    dims_case(7, 2, (int[]){0, 0}, (int[]){7, 1});
    dims_case(60, 3, (int[]){0, 0, 0}, (int[]){5, 4, 3});
    dims_case(6, 3, (int[]){0, 3, 0}, (int[]){2, 3, 1});
    dims_case(8, 2, (int[]){2, 4}, (int[]){2, 4});
    dims_case(1, 3, (int[]){0, 0, 0}, (int[]){1, 1, 1});
    int bad[2] = {2, 0};
    CHECK_CLASS(MPI_Dims_create(7, 2, bad), MPI_ERR_DIMS);
    bad[0] = -1;
    CHECK_CLASS(MPI_Dims_create(6, 2, bad), MPI_ERR_DIMS);
    bad[0] = 2, bad[1] = 2;
    CHECK_CLASS(MPI_Dims_create(6, 2, bad), MPI_ERR_DIMS);

    /* no topology on world */
    MPI_OK(MPI_Topo_test(MPI_COMM_WORLD, &t));
    CHECK(t == MPI_UNDEFINED, "Topo_test(world) = %d", t);
    CHECK_CLASS(MPI_Cartdim_get(MPI_COMM_WORLD, &t), MPI_ERR_TOPOLOGY);

    /* 2-D grid over all ranks */
    int dims[2] = {0, 0}, periods[2] = {1, 0}, coords[2];
    MPI_OK(MPI_Dims_create(size, 2, dims));
    CHECK(dims[0] * dims[1] == size && dims[0] >= dims[1], "dims %d x %d", dims[0], dims[1]);
    MPI_Comm cart;
    MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &cart));
    CHECK(cart != MPI_COMM_NULL, "cart is MPI_COMM_NULL");
    MPI_OK(MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_size(cart, &t));
    CHECK(t == size, "cart size %d", t);
    MPI_OK(MPI_Comm_rank(cart, &r));
    CHECK(r == rank, "cart rank %d (reorder kept ranks elsewhere?)", r);
    int me = r;
    MPI_OK(MPI_Topo_test(cart, &t));
    CHECK(t == MPI_CART, "Topo_test(cart) = %d", t);
    MPI_OK(MPI_Cartdim_get(cart, &t));
    CHECK(t == 2, "Cartdim_get = %d", t);
    int gd[2], gp[2], gc[2];
    MPI_OK(MPI_Cart_get(cart, 2, gd, gp, gc));
    CHECK(gd[0] == dims[0] && gd[1] == dims[1] && gp[0] == 1 && gp[1] == 0, "Cart_get dims %d %d periods %d %d", gd[0],
          gd[1], gp[0], gp[1]);
    CHECK(gc[0] == me / dims[1] && gc[1] == me % dims[1], "Cart_get coords (%d, %d) for rank %d", gc[0], gc[1], me);
    for (int q = 0; q < size; q++) {
        MPI_OK(MPI_Cart_coords(cart, q, 2, coords));
        CHECK(coords[0] == q / dims[1] && coords[1] == q % dims[1], "coords of %d: (%d, %d)", q, coords[0], coords[1]);
        MPI_OK(MPI_Cart_rank(cart, coords, &t));
        CHECK(t == q, "rank of coords of %d = %d", q, t);
    }
    /* periodic wrap in dimension 0 */
    coords[0] = -1, coords[1] = 0;
    MPI_OK(MPI_Cart_rank(cart, coords, &t));
    CHECK(t == (dims[0] - 1) * dims[1], "rank of (-1, 0) = %d", t);
    coords[0] = dims[0], coords[1] = dims[1] - 1;
    MPI_OK(MPI_Cart_rank(cart, coords, &t));
    CHECK(t == dims[1] - 1, "rank of (d0, d1-1) = %d", t);

    /* shifts */
    int src, dst, c0 = gc[0], c1 = gc[1];
    MPI_OK(MPI_Cart_shift(cart, 0, 1, &src, &dst));
    CHECK(src == ((c0 + dims[0] - 1) % dims[0]) * dims[1] + c1, "shift dim 0 source %d", src);
    CHECK(dst == ((c0 + 1) % dims[0]) * dims[1] + c1, "shift dim 0 dest %d", dst);
    MPI_OK(MPI_Cart_shift(cart, 1, 1, &src, &dst));
    CHECK(src == (c1 == 0 ? MPI_PROC_NULL : me - 1), "shift dim 1 source %d", src);
    CHECK(dst == (c1 == dims[1] - 1 ? MPI_PROC_NULL : me + 1), "shift dim 1 dest %d", dst);
    int got = -7, mine = 1000 + me;
    MPI_OK(MPI_Sendrecv(&mine, 1, MPI_INT, dst, 3, &got, 1, MPI_INT, src, 3, cart, MPI_STATUS_IGNORE));
    CHECK(got == (src == MPI_PROC_NULL ? -7 : 1000 + src), "sendrecv along dim 1 got %d", got);
    MPI_OK(MPI_Cart_shift(cart, 1, -2, &src, &dst));
    CHECK(src == (c1 + 2 < dims[1] ? me + 2 : MPI_PROC_NULL), "shift dim 1 by -2 source %d", src);
    CHECK(dst == (c1 - 2 >= 0 ? me - 2 : MPI_PROC_NULL), "shift dim 1 by -2 dest %d", dst);
    MPI_OK(MPI_Cart_shift(cart, 0, 0, &src, &dst));
    CHECK(src == me && dst == me, "shift by 0: %d %d", src, dst);

    /* sub-grids: rows keep dimension 1, columns keep dimension 0 */
    MPI_Comm row, col;
    int keep_row[2] = {0, 1}, keep_col[2] = {1, 0};
    MPI_OK(MPI_Cart_sub(cart, keep_row, &row));
    MPI_OK(MPI_Cart_sub(cart, keep_col, &col));
    MPI_OK(MPI_Comm_size(row, &t));
    CHECK(t == dims[1], "row size %d", t);
    MPI_OK(MPI_Comm_rank(row, &t));
    CHECK(t == c1, "row rank %d", t);
    MPI_OK(MPI_Comm_size(col, &t));
    CHECK(t == dims[0], "col size %d", t);
    MPI_OK(MPI_Comm_rank(col, &t));
    CHECK(t == c0, "col rank %d", t);
    MPI_OK(MPI_Cartdim_get(row, &t));
    CHECK(t == 1, "row Cartdim %d", t);
    MPI_OK(MPI_Cart_get(col, 1, gd, gp, gc));
    CHECK(gd[0] == dims[0] && gp[0] == 1 && gc[0] == c0, "col Cart_get %d %d %d", gd[0], gp[0], gc[0]);
    int sum = 0;
    MPI_OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, row));
    int want = 0;
    for (int q = 0; q < dims[1]; q++)
        want += c0 * dims[1] + q;
    CHECK(sum == want, "row sum %d, expected %d", sum, want);
    MPI_OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, col));
    want = 0;
    for (int q = 0; q < dims[0]; q++)
        want += q * dims[1] + c1;
    CHECK(sum == want, "col sum %d, expected %d", sum, want);
    /* ring along the periodic column */
    MPI_OK(MPI_Cart_shift(col, 0, 1, &src, &dst));
    got = -7;
    MPI_OK(MPI_Sendrecv(&rank, 1, MPI_INT, dst, 4, &got, 1, MPI_INT, src, 4, col, MPI_STATUS_IGNORE));
    CHECK(got == ((c0 + dims[0] - 1) % dims[0]) * dims[1] + c1, "column ring got %d", got);
    MPI_Comm point;
    int keep_none[2] = {0, 0};
    /* no dimension kept: a zero-dimensional grid, which (as Cart_create with ndims 0) holds only rank 0 */
    MPI_OK(MPI_Cart_sub(cart, keep_none, &point));
    if (me == 0) {
        MPI_OK(MPI_Comm_size(point, &t));
        CHECK(t == 1, "sub-grid of no dimensions has size %d", t);
        MPI_OK(MPI_Cartdim_get(point, &t));
        CHECK(t == 0, "sub-grid of no dimensions has %d dimensions", t);
        MPI_OK(MPI_Comm_free(&point));
    } else {
        CHECK(point == MPI_COMM_NULL, "sub-grid of no dimensions on rank %d", me);
    }

    /* a dup keeps the topology */
    MPI_Comm dup;
    MPI_OK(MPI_Comm_dup(cart, &dup));
    MPI_OK(MPI_Topo_test(dup, &t));
    CHECK(t == MPI_CART, "Topo_test(dup) = %d", t);
    MPI_OK(MPI_Cart_get(dup, 2, gd, gp, gc));
    CHECK(gd[0] == dims[0] && gd[1] == dims[1] && gp[0] == 1 && gp[1] == 0 && gc[0] == c0 && gc[1] == c1,
          "dup Cart_get differs");

    /* errors */
    coords[0] = 0, coords[1] = dims[1];
    CHECK_CLASS(MPI_Cart_rank(cart, coords, &t), MPI_ERR_ARG);
    coords[1] = -1;
    CHECK_CLASS(MPI_Cart_rank(cart, coords, &t), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Cart_coords(cart, size, 2, coords), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Cart_coords(cart, 0, 1, coords), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Cart_shift(cart, 2, 1, &src, &dst), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Cart_shift(cart, -1, 1, &src, &dst), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Graphdims_get(cart, &t, &t), MPI_ERR_TOPOLOGY);
    CHECK_CLASS(MPI_Dist_graph_neighbors_count(cart, &t, &t, &t), MPI_ERR_TOPOLOGY);
    int big = size + 1, zero = 0;
    MPI_Comm none = MPI_COMM_NULL;
    CHECK_CLASS(MPI_Cart_create(MPI_COMM_WORLD, 1, &big, &zero, 0, &none), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Cart_map(MPI_COMM_WORLD, 1, &big, &zero, &t), MPI_ERR_DIMS);

    /* a 1-D ring over all ranks but the last: the last gets MPI_COMM_NULL */
    int n1 = size > 1 ? size - 1 : 1, per = 1;
    MPI_Comm ring;
    MPI_OK(MPI_Cart_map(MPI_COMM_WORLD, 1, &n1, &per, &t));
    CHECK(t == (rank < n1 ? rank : MPI_UNDEFINED), "Cart_map = %d", t);
    MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, &n1, &per, 0, &ring));
    if (rank < n1) {
        CHECK(ring != MPI_COMM_NULL, "ring is MPI_COMM_NULL on rank %d", rank);
        MPI_OK(MPI_Comm_size(ring, &t));
        CHECK(t == n1, "ring size %d", t);
        MPI_OK(MPI_Cart_shift(ring, 0, 1, &src, &dst));
        CHECK(src == (rank + n1 - 1) % n1 && dst == (rank + 1) % n1, "ring shift %d %d", src, dst);
        MPI_OK(MPI_Comm_free(&ring));
    } else {
        CHECK(ring == MPI_COMM_NULL, "rank %d outside the grid got a communicator", rank);
    }

    MPI_OK(MPI_Comm_free(&dup));
    MPI_OK(MPI_Comm_free(&row));
    MPI_OK(MPI_Comm_free(&col));
    MPI_OK(MPI_Comm_free(&cart));
    MPI_OK(MPI_Finalize());
    return 0;
}
