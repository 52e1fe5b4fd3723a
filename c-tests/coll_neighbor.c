/* oxmpi-test: ranks=1,2,3,4,5,8 timeout=90 */
/* Neighborhood collectives (allgather, allgatherv, alltoall, alltoallv, alltoallw) in their six
   forms on: a periodic ring of all ranks (with 1 or 2 ranks every neighbor is repeated: messages
   to one peer match in neighbor order), a non-periodic 2-D grid (MPI_PROC_NULL neighbors leave
   their blocks untouched), a graph (ring plus a hub), and a weighted distributed graph; small
   and large blocks, derived types in alltoallw; errors under MPI_ERRORS_RETURN. */
#include "oxcoll.h"

static int rank, size, mpich;
enum { CART, GRAPH, DIST };
enum { AG, AGV, A2A, A2AV, A2AW, NKINDS };
static const char *kname[] = {"allgather", "allgatherv", "alltoall", "alltoallv", "alltoallw"};
#define MAXN 16

/* Out-neighbors of rank r (in the standard's order); MPI_PROC_NULL where there is none. */
static int outs(MPI_Comm comm, int topo, int r, int *out)
{
    if (topo == CART) {
        int nd, dims[4], per[4], co[4], n = 0;
        MPI_OK(MPI_Cartdim_get(comm, &nd));
        MPI_OK(MPI_Cart_get(comm, nd, dims, per, co));
        MPI_OK(MPI_Cart_coords(comm, r, nd, co));
        for (int d = 0; d < nd; d++)
            for (int dir = -1; dir <= 1; dir += 2) {
                int c2[4];
                memcpy(c2, co, sizeof co);
                c2[d] += dir;
                if (!per[d] && (c2[d] < 0 || c2[d] >= dims[d])) {
                    out[n++] = MPI_PROC_NULL;
                    continue;
                }
                c2[d] = (c2[d] + dims[d]) % dims[d];
                MPI_OK(MPI_Cart_rank(comm, c2, &out[n++]));
            }
        return n;
    }
    if (topo == GRAPH) {
        int n;
        MPI_OK(MPI_Graph_neighbors_count(comm, r, &n));
        MPI_OK(MPI_Graph_neighbors(comm, r, n, out));
        return n;
    }
    out[0] = (r + 1) % size;
    out[1] = (r + 3) % size;
    return 2;
}

/* This rank's in-neighbors, through the topology queries. */
static int ins(MPI_Comm comm, int topo, int *in)
{
    if (topo == CART) {
        int nd, n = 0;
        MPI_OK(MPI_Cartdim_get(comm, &nd));
        for (int d = 0; d < nd; d++) {
            MPI_OK(MPI_Cart_shift(comm, d, 1, &in[n], &in[n + 1]));
            n += 2;
        }
        return n;
    }
    if (topo == GRAPH)
        return outs(comm, topo, rank, in);
    int indeg, outdeg, weighted, sw[MAXN], dst[MAXN], dw[MAXN];
    MPI_OK(MPI_Dist_graph_neighbors_count(comm, &indeg, &outdeg, &weighted));
    CHECK(indeg == 2 && outdeg == 2 && weighted, "dist graph degrees %d %d weighted %d", indeg, outdeg, weighted);
    MPI_OK(MPI_Dist_graph_neighbors(comm, indeg, in, sw, outdeg, dst, dw));
    CHECK(sw[0] == 10 && sw[1] == 30 && dw[0] == 10 && dw[1] == 30, "dist graph weights %d %d %d %d", sw[0], sw[1], dw[0], dw[1]);
    return indeg;
}

static int val(int s, int k, int e) { return s * 10000000 + k * 100000 + e; }

/* Elements sender s puts in its block for out-position k. */
static int cnt(int kind, int n, int s, int k)
{
    if (kind == AG || kind == A2A)
        return n;
    if (kind == AGV)
        return n + s % 3;
    return n + (s + 2 * k) % 3;
}

static void wait_or_start(int form, MPI_Request *req)
{
    if (form >= 4) {
        for (int k = 0; k < 3; k++) {
            MPI_OK(MPI_Start(req));
            MPI_OK(MPI_Wait(req, MPI_STATUS_IGNORE));
        }
        MPI_OK(MPI_Request_free(req));
    } else if (form >= 2) {
        MPI_OK(MPI_Wait(req, MPI_STATUS_IGNORE));
    }
}

static void exchange(MPI_Comm comm, int topo, int kind, int form, int n)
{
    int in[MAXN], out[MAXN];
    int indeg = ins(comm, topo, in), outdeg = outs(comm, topo, rank, out);
    const int S = 2 * (n + 3); /* slot of one block, in ints */
    int *s = oxt_malloc(sizeof(int) * (size_t)S * (outdeg + 1)), *r = oxt_malloc(sizeof(int) * (size_t)S * (indeg + 1));
    int sc[MAXN], sd[MAXN], rc[MAXN], rd[MAXN];
    MPI_Aint sdb[MAXN], rdb[MAXN];
    MPI_Count csc[MAXN], crc[MAXN];
    MPI_Aint csd[MAXN], crd[MAXN];
    MPI_Datatype st[MAXN], rt[MAXN];
    for (int k = 0; k < S * (outdeg + 1); k++)
        s[k] = -2;
    for (int k = 0; k < S * (indeg + 1); k++)
        r[k] = -1;
    for (int k = 0; k < outdeg; k++) {
        int c = cnt(kind, n, rank, k);
        sd[k] = kind == AG || kind == AGV ? 0 : k * S + 1;
        for (int e = 0; e < c; e++)
            s[sd[k] + e] = val(rank, kind == AG || kind == AGV ? 0 : k, e);
        st[k] = MPI_INT;
        sc[k] = c;
        if (kind == A2AW && k % 2) {
            MPI_OK(MPI_Type_contiguous(c, MPI_INT, &st[k]));
            MPI_OK(MPI_Type_commit(&st[k]));
            sc[k] = 1;
        }
        sdb[k] = (MPI_Aint)sd[k] * (MPI_Aint)sizeof(int);
        csc[k] = sc[k];
        csd[k] = sd[k];
    }
    /* expected receive buffer */
    int *e = oxt_malloc(sizeof(int) * (size_t)S * (indeg + 1));
    for (int k = 0; k < S * (indeg + 1); k++)
        e[k] = -1;
    for (int i = 0; i < indeg; i++) {
        int src = in[i], kk = 0, stride = kind == A2AW && i % 2 ? 2 : 1;
        rd[i] = i * S + 1;
        /* How blocks pair (MPI 4.1 section 8.6): on Cartesian topologies by direction, also
           where the -1 and +1 neighbors are the same process (my block from the -1 neighbor is
           its block for +1); on graphs in order (the occ-th message from src to me is src's
           occ-th block for me). MPICH 4.0.2 pairs in order in alltoallv/w whatever the topology,
           and from the end in alltoall (pmodels/mpich#7945); the test expects that there. */
        int order = topo == CART ? 0 : 1; /* 0 by direction, 1 in order, 2 from the end */
        if (mpich)
            order = kind == A2A ? 2 : 1;
        if (src != MPI_PROC_NULL && order == 0) {
            kk = i ^ 1;
        } else if (src != MPI_PROC_NULL) {
            int occ = 0, tot = 0, so[MAXN], sn = outs(comm, topo, src, so);
            for (int q = 0; q < indeg; q++) {
                occ += q < i && in[q] == src;
                tot += in[q] == src;
            }
            if (order == 2)
                occ = tot - 1 - occ;
            for (kk = 0; kk < sn; kk++)
                if (so[kk] == rank && occ-- == 0)
                    break;
            CHECK(kk < sn, "rank %d is not an out-neighbor of its in-neighbor %d", rank, src);
        }
        int c = src == MPI_PROC_NULL ? n : cnt(kind, n, src, kk);
        if (src != MPI_PROC_NULL)
            for (int x = 0; x < c; x++)
                e[rd[i] + stride * x] = val(src, kind == AG || kind == AGV ? 0 : kk, x);
        rt[i] = MPI_INT;
        rc[i] = c;
        if (stride == 2) {
            MPI_OK(MPI_Type_vector(c, 1, 2, MPI_INT, &rt[i]));
            MPI_OK(MPI_Type_commit(&rt[i]));
            rc[i] = 1;
        }
        rdb[i] = (MPI_Aint)rd[i] * (MPI_Aint)sizeof(int);
        crc[i] = rc[i];
        crd[i] = rd[i];
    }
    MPI_Request req;
    int c0 = cnt(kind, n, rank, 0);
    const void *sb = s + 1; /* alltoall: block k at 1 + k * S */
    switch (kind) {
    case AG:
        switch (form) {
        case 0: MPI_OK(MPI_Neighbor_allgather(s, c0, MPI_INT, r + 1, n, MPI_INT, comm)); break;
        case 1: MPI_OK(MPI_Neighbor_allgather_c(s, c0, MPI_INT, r + 1, n, MPI_INT, comm)); break;
        case 2: MPI_OK(MPI_Ineighbor_allgather(s, c0, MPI_INT, r + 1, n, MPI_INT, comm, &req)); break;
        case 3: MPI_OK(MPI_Ineighbor_allgather_c(s, c0, MPI_INT, r + 1, n, MPI_INT, comm, &req)); break;
        case 4: MPI_OK(MPI_Neighbor_allgather_init(s, c0, MPI_INT, r + 1, n, MPI_INT, comm, MPI_INFO_NULL, &req)); break;
        default: MPI_OK(MPI_Neighbor_allgather_init_c(s, c0, MPI_INT, r + 1, n, MPI_INT, comm, MPI_INFO_NULL, &req)); break;
        }
        break;
    case AGV:
        switch (form) {
        case 0: MPI_OK(MPI_Neighbor_allgatherv(s, c0, MPI_INT, r, rc, rd, MPI_INT, comm)); break;
        case 1: MPI_OK(MPI_Neighbor_allgatherv_c(s, c0, MPI_INT, r, crc, crd, MPI_INT, comm)); break;
        case 2: MPI_OK(MPI_Ineighbor_allgatherv(s, c0, MPI_INT, r, rc, rd, MPI_INT, comm, &req)); break;
        case 3: MPI_OK(MPI_Ineighbor_allgatherv_c(s, c0, MPI_INT, r, crc, crd, MPI_INT, comm, &req)); break;
        case 4: MPI_OK(MPI_Neighbor_allgatherv_init(s, c0, MPI_INT, r, rc, rd, MPI_INT, comm, MPI_INFO_NULL, &req)); break;
        default: MPI_OK(MPI_Neighbor_allgatherv_init_c(s, c0, MPI_INT, r, crc, crd, MPI_INT, comm, MPI_INFO_NULL, &req)); break;
        }
        break;
    case A2A: {
        /* uniform blocks S ints apart: one element of a resized type per block */
        MPI_Datatype blk;
        MPI_OK(MPI_Type_contiguous(n, MPI_INT, &blk));
        MPI_Datatype blks;
        MPI_OK(MPI_Type_create_resized(blk, 0, (MPI_Aint)sizeof(int) * S, &blks));
        MPI_OK(MPI_Type_commit(&blks));
        switch (form) {
        case 0: MPI_OK(MPI_Neighbor_alltoall(sb, 1, blks, r + 1, 1, blks, comm)); break;
        case 1: MPI_OK(MPI_Neighbor_alltoall_c(sb, 1, blks, r + 1, 1, blks, comm)); break;
        case 2: MPI_OK(MPI_Ineighbor_alltoall(sb, 1, blks, r + 1, 1, blks, comm, &req)); break;
        case 3: MPI_OK(MPI_Ineighbor_alltoall_c(sb, 1, blks, r + 1, 1, blks, comm, &req)); break;
        case 4: MPI_OK(MPI_Neighbor_alltoall_init(sb, 1, blks, r + 1, 1, blks, comm, MPI_INFO_NULL, &req)); break;
        default: MPI_OK(MPI_Neighbor_alltoall_init_c(sb, 1, blks, r + 1, 1, blks, comm, MPI_INFO_NULL, &req)); break;
        }
        wait_or_start(form, &req);
        form = -1;
        MPI_OK(MPI_Type_free(&blk));
        MPI_OK(MPI_Type_free(&blks));
        break;
    }
    case A2AV:
        switch (form) {
        case 0: MPI_OK(MPI_Neighbor_alltoallv(s, sc, sd, MPI_INT, r, rc, rd, MPI_INT, comm)); break;
        case 1: MPI_OK(MPI_Neighbor_alltoallv_c(s, csc, csd, MPI_INT, r, crc, crd, MPI_INT, comm)); break;
        case 2: MPI_OK(MPI_Ineighbor_alltoallv(s, sc, sd, MPI_INT, r, rc, rd, MPI_INT, comm, &req)); break;
        case 3: MPI_OK(MPI_Ineighbor_alltoallv_c(s, csc, csd, MPI_INT, r, crc, crd, MPI_INT, comm, &req)); break;
        case 4: MPI_OK(MPI_Neighbor_alltoallv_init(s, sc, sd, MPI_INT, r, rc, rd, MPI_INT, comm, MPI_INFO_NULL, &req)); break;
        default: MPI_OK(MPI_Neighbor_alltoallv_init_c(s, csc, csd, MPI_INT, r, crc, crd, MPI_INT, comm, MPI_INFO_NULL, &req)); break;
        }
        break;
    default:
        switch (form) {
        case 0: MPI_OK(MPI_Neighbor_alltoallw(s, sc, sdb, st, r, rc, rdb, rt, comm)); break;
        case 1: MPI_OK(MPI_Neighbor_alltoallw_c(s, csc, sdb, st, r, crc, rdb, rt, comm)); break;
        case 2: MPI_OK(MPI_Ineighbor_alltoallw(s, sc, sdb, st, r, rc, rdb, rt, comm, &req)); break;
        case 3: MPI_OK(MPI_Ineighbor_alltoallw_c(s, csc, sdb, st, r, crc, rdb, rt, comm, &req)); break;
        case 4: MPI_OK(MPI_Neighbor_alltoallw_init(s, sc, sdb, st, r, rc, rdb, rt, comm, MPI_INFO_NULL, &req)); break;
        default: MPI_OK(MPI_Neighbor_alltoallw_init_c(s, csc, sdb, st, r, crc, rdb, rt, comm, MPI_INFO_NULL, &req)); break;
        }
        break;
    }
    if (form >= 0)
        wait_or_start(form, &req);
    if (kind == AG) /* allgather: blocks of n, n apart from r + 1 */
        for (int i = 0; i < indeg; i++)
            for (int x = 0; x < n; x++) {
                int want = e[rd[i] + x];
                CHECK(r[1 + i * n + x] == want, "%s form %d n=%d topo %d: block %d [%d] = %d, expected %d", kname[kind], form, n, topo, i, x, r[1 + i * n + x], want);
            }
    else
        for (int k = 0; k < S * (indeg + 1); k++)
            CHECK(r[k] == e[k], "%s form %d n=%d topo %d: recvbuf[%d] = %d, expected %d", kname[kind], form, n, topo, k, r[k], e[k]);
    for (int k = 0; k < outdeg; k++)
        if (st[k] != MPI_INT)
            MPI_OK(MPI_Type_free(&st[k]));
    for (int i = 0; i < indeg; i++)
        if (rt[i] != MPI_INT)
            MPI_OK(MPI_Type_free(&rt[i]));
    free(s);
    free(r);
    free(e);
}

static void all(MPI_Comm comm, int topo)
{
    for (int kind = 0; kind < NKINDS; kind++)
        for (int form = 0; form < 6; form++) {
            exchange(comm, topo, kind, form, 3);
            if (form % 2 == 0)
                exchange(comm, topo, kind, form, 3000);
        }
}

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    mpich = oxc_is_mpich();
    MPI_Comm c;

    int dims1[1] = {size}, per1[1] = {1};
    MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims1, per1, 0, &c));
    all(c, CART);
    MPI_OK(MPI_Comm_free(&c));

    int dims2[2] = {0, 0}, per2[2] = {0, 0};
    MPI_OK(MPI_Dims_create(size, 2, dims2));
    MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims2, per2, 0, &c));
    all(c, CART);
    MPI_OK(MPI_Comm_free(&c));

    /* graph: ring (i-1, i+1) plus every node linked to node 0 both ways */
    int index[MAXN], edges[4 * MAXN], ne = 0;
    for (int i = 0; i < size; i++) {
        edges[ne++] = (i + size - 1) % size;
        edges[ne++] = (i + 1) % size;
        if (i == 0)
            for (int j = 1; j < size; j++)
                edges[ne++] = j;
        else
            edges[ne++] = 0;
        index[i] = ne;
    }
    MPI_OK(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &c));
    all(c, GRAPH);
    MPI_OK(MPI_Comm_free(&c));

    int src[2] = {(rank + size - 1) % size, (rank + 3 * size - 3) % size}, dst[2] = {(rank + 1) % size, (rank + 3) % size};
    int w[2] = {10, 30};
    MPI_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, w, 2, dst, w, MPI_INFO_NULL, 0, &c));
    all(c, DIST);

    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
    int a[8], b[8];
    CHECK_CLASS(MPI_Neighbor_allgather(a, 1, MPI_INT, b, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_TOPOLOGY);
    CHECK_CLASS(MPI_Neighbor_alltoall(a, 1, MPI_INT, b, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_TOPOLOGY);
    CHECK_CLASS(MPI_Neighbor_alltoall(a, -1, MPI_INT, b, 1, MPI_INT, c), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Neighbor_allgather(a, 1, MPI_DATATYPE_NULL, b, 1, MPI_INT, c), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Neighbor_alltoall(a, 1, MPI_INT, b, 1, MPI_INT, MPI_COMM_NULL), MPI_ERR_COMM);
    /* MPI_IN_PLACE is not allowed (MPICH 4.0.2 does not check it and crashes) */
    if (!mpich)
        CHECK_CLASS(MPI_Neighbor_alltoall(MPI_IN_PLACE, 1, MPI_INT, b, 1, MPI_INT, c), MPI_ERR_BUFFER);
    MPI_OK(MPI_Comm_free(&c));
    MPI_OK(MPI_Finalize());
    return 0;
}
