/* oxmpi-test: ranks=1,2,4 */
/* Graph and distributed graph topologies: a graph ring (Graphdims_get, Graph_get, neighbours of
   every node, Topo_test, dup keeps it, Graph_map, ranks outside a smaller graph get MPI_COMM_NULL),
   MPI_Dist_graph_create_adjacent without weights (MPI_UNWEIGHTED) and with weights, a process with
   no edges (MPI_WEIGHTS_EMPTY), MPI_Dist_graph_create with edges named by their source and all by
   rank 0, a message along the distributed ring, and error classes under MPI_ERRORS_RETURN. */
#include "oxtest.h"

static void check_dist(MPI_Comm g, int left, int right, int weighted, int lw, int rw)
{
    int in, out, w, s = -7, d = -7, sw = -7, dw = -7;
    MPI_OK(MPI_Dist_graph_neighbors_count(g, &in, &out, &w));
    CHECK(in == 1 && out == 1, "degrees %d %d", in, out);
    CHECK(!!w == weighted, "weighted flag %d, expected %d", w, weighted);
    if (weighted) {
        MPI_OK(MPI_Dist_graph_neighbors(g, 1, &s, &sw, 1, &d, &dw));
        CHECK(sw == lw && dw == rw, "weights %d %d, expected %d %d", sw, dw, lw, rw);
    } else {
        MPI_OK(MPI_Dist_graph_neighbors(g, 1, &s, MPI_UNWEIGHTED, 1, &d, MPI_UNWEIGHTED));
    }
    CHECK(s == left && d == right, "neighbours %d %d, expected %d %d", s, d, left, right);
    MPI_OK(MPI_Topo_test(g, &w));
    CHECK(w == MPI_DIST_GRAPH, "Topo_test = %d", w);
}

int main(int argc, char **argv)
{
    int rank, size, t, t2;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int left = (rank + size - 1) % size, right = (rank + 1) % size;

    /* graph ring */
    int *index = oxt_malloc(sizeof(int) * (size_t)size), *edges = oxt_malloc(sizeof(int) * 2 * (size_t)size);
    for (int i = 0; i < size; i++) {
        index[i] = 2 * (i + 1);
        edges[2 * i] = (i + size - 1) % size;
        edges[2 * i + 1] = (i + 1) % size;
    }
    MPI_Comm g;
    MPI_OK(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &g));
    CHECK(g != MPI_COMM_NULL, "graph is MPI_COMM_NULL");
    MPI_OK(MPI_Comm_set_errhandler(g, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_rank(g, &t));
    CHECK(t == rank, "graph rank %d", t);
    MPI_OK(MPI_Topo_test(g, &t));
    CHECK(t == MPI_GRAPH, "Topo_test(graph) = %d", t);
    MPI_OK(MPI_Graphdims_get(g, &t, &t2));
    CHECK(t == size && t2 == 2 * size, "Graphdims_get %d %d", t, t2);
    int *gi = oxt_malloc(sizeof(int) * (size_t)size), *ge = oxt_malloc(sizeof(int) * 2 * (size_t)size);
    MPI_OK(MPI_Graph_get(g, size, 2 * size, gi, ge));
    CHECK(memcmp(gi, index, sizeof(int) * (size_t)size) == 0, "Graph_get index differs");
    CHECK(memcmp(ge, edges, sizeof(int) * 2 * (size_t)size) == 0, "Graph_get edges differ");
    for (int q = 0; q < size; q++) {
        int nb[2] = {-7, -7};
        MPI_OK(MPI_Graph_neighbors_count(g, q, &t));
        CHECK(t == 2, "node %d has %d neighbours", q, t);
        MPI_OK(MPI_Graph_neighbors(g, q, 2, nb));
        CHECK(nb[0] == (q + size - 1) % size && nb[1] == (q + 1) % size, "neighbours of %d: %d %d", q, nb[0], nb[1]);
    }
    MPI_Comm gdup;
    MPI_OK(MPI_Comm_dup(g, &gdup));
    MPI_OK(MPI_Topo_test(gdup, &t));
    CHECK(t == MPI_GRAPH, "Topo_test(dup of graph) = %d", t);
    MPI_OK(MPI_Graphdims_get(gdup, &t, &t2));
    CHECK(t == size && t2 == 2 * size, "dup Graphdims_get %d %d", t, t2);
    MPI_OK(MPI_Comm_free(&gdup));
    /* errors */
    CHECK_CLASS(MPI_Graph_neighbors_count(g, size, &t), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Graph_neighbors(g, -1, 2, gi), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Cartdim_get(g, &t), MPI_ERR_TOPOLOGY);
    CHECK_CLASS(MPI_Dist_graph_neighbors_count(g, &t, &t, &t), MPI_ERR_TOPOLOGY);
    CHECK_CLASS(MPI_Graphdims_get(MPI_COMM_WORLD, &t, &t2), MPI_ERR_TOPOLOGY);
    MPI_Comm none = MPI_COMM_NULL;
    CHECK_CLASS(MPI_Graph_create(MPI_COMM_WORLD, size + 1, index, edges, 0, &none), MPI_ERR_ARG);
    int one = 1, neg = -1;
    CHECK_CLASS(MPI_Graph_create(MPI_COMM_WORLD, 1, &one, &neg, 0, &none), MPI_ERR_ARG);
    MPI_OK(MPI_Comm_free(&g));

    /* a graph of one node with a self loop: the other ranks get MPI_COMM_NULL */
    int zero = 0;
    MPI_OK(MPI_Graph_map(MPI_COMM_WORLD, 1, &one, &zero, &t));
    CHECK(t == (rank == 0 ? 0 : MPI_UNDEFINED), "Graph_map = %d", t);
    MPI_OK(MPI_Graph_create(MPI_COMM_WORLD, 1, &one, &zero, 0, &g));
    if (rank == 0) {
        MPI_OK(MPI_Comm_size(g, &t));
        CHECK(t == 1, "one-node graph size %d", t);
        MPI_OK(MPI_Comm_free(&g));
    } else {
        CHECK(g == MPI_COMM_NULL, "rank %d outside the graph got a communicator", rank);
    }

    /* distributed graph ring, adjacent, unweighted */
    MPI_Comm dg;
    MPI_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &left, MPI_UNWEIGHTED, 1, &right, MPI_UNWEIGHTED,
                                          MPI_INFO_NULL, 0, &dg));
    check_dist(dg, left, right, 0, 0, 0);
    int got = -7;
    MPI_OK(MPI_Sendrecv(&rank, 1, MPI_INT, right, 5, &got, 1, MPI_INT, left, 5, dg, MPI_STATUS_IGNORE));
    CHECK(got == left, "dist ring got %d", got);
    MPI_Comm dgdup;
    MPI_OK(MPI_Comm_dup(dg, &dgdup));
    check_dist(dgdup, left, right, 0, 0, 0);
    MPI_OK(MPI_Comm_free(&dgdup));
    MPI_OK(MPI_Comm_free(&dg));

    /* weighted: the weight of edge a -> b is 100 a + b */
    int lw = 100 * left + rank, rw = 100 * rank + right;
    MPI_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &left, &lw, 1, &right, &rw, MPI_INFO_NULL, 0, &dg));
    check_dist(dg, left, right, 1, lw, rw);
    MPI_OK(MPI_Comm_free(&dg));

    /* no edges at all */
    MPI_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, NULL, MPI_WEIGHTS_EMPTY, 0, NULL, MPI_WEIGHTS_EMPTY,
                                          MPI_INFO_NULL, 0, &dg));
    MPI_OK(MPI_Dist_graph_neighbors_count(dg, &t, &t2, &one));
    CHECK(t == 0 && t2 == 0, "empty graph degrees %d %d", t, t2);
    MPI_OK(MPI_Comm_free(&dg));
    one = 1;

    /* general: every rank names its own out-edge, weighted */
    MPI_OK(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &rank, &one, &right, &rw, MPI_INFO_NULL, 0, &dg));
    check_dist(dg, left, right, 1, lw, rw);
    MPI_OK(MPI_Comm_free(&dg));
    /* general: rank 0 names every edge, unweighted */
    int *srcs = oxt_malloc(sizeof(int) * (size_t)size), *degs = oxt_malloc(sizeof(int) * (size_t)size),
        *dsts = oxt_malloc(sizeof(int) * (size_t)size);
    for (int i = 0; i < size; i++)
        srcs[i] = i, degs[i] = 1, dsts[i] = (i + 1) % size;
    MPI_OK(MPI_Dist_graph_create(MPI_COMM_WORLD, rank == 0 ? size : 0, srcs, degs, dsts, MPI_UNWEIGHTED,
                                 MPI_INFO_NULL, 0, &dg));
    check_dist(dg, left, right, 0, 0, 0);
    MPI_OK(MPI_Comm_free(&dg));

    /* errors */
    int mone = -1;
    CHECK_CLASS(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, mone, &left, MPI_UNWEIGHTED, 1, &right,
                                               MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &none),
                MPI_ERR_ARG);
    CHECK_CLASS(MPI_Dist_graph_neighbors_count(MPI_COMM_WORLD, &t, &t, &t), MPI_ERR_TOPOLOGY);

    free(index), free(edges), free(gi), free(ge), free(srcs), free(degs), free(dsts);
    MPI_OK(MPI_Finalize());
    return 0;
}
