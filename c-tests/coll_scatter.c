/* oxmpi-test: ranks=1,2,3,4,5,8 timeout=60 */
/* MPI_Scatter and MPI_Scatterv: every root, odd and zero counts, small (tree) and large (linear)
   messages, MPI_IN_PLACE at the root, a vector send type against plain ints, a contiguous receive
   type, uneven counts with permuted displacements, the intercommunicator form, the nonblocking,
   persistent and large-count forms, and argument errors. */
#include "oxcoll.h"

static int rank, size;

static int val(int r, int i) { return r * 100000 + i; }

/* MPI_Scatter of n ints per rank from root through form f (0 blocking, 1 _c, 2 nonblocking,
   3 persistent started twice with new data). */
static void scatter_ints(int n, int root, int inplace, int f)
{
    int *s = oxt_malloc(sizeof(int) * ((size_t)n * size + 1)), *r = oxt_malloc(sizeof(int) * (n + 1));
    for (int i = 0; i < n * size; i++)
        s[i] = rank == root ? val(i / n, i % n) : -2;
    for (int i = 0; i < n; i++)
        r[i] = -1;
    void *rb = inplace && rank == root ? MPI_IN_PLACE : r;
    MPI_Request req;
    switch (f) {
    case 0: MPI_OK(MPI_Scatter(s, n, MPI_INT, rb, n, MPI_INT, root, MPI_COMM_WORLD)); break;
    case 1: MPI_OK(MPI_Scatter_c(s, n, MPI_INT, rb, n, MPI_INT, root, MPI_COMM_WORLD)); break;
    case 2:
        MPI_OK(MPI_Iscatter(s, n, MPI_INT, rb, n, MPI_INT, root, MPI_COMM_WORLD, &req));
        MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        break;
    case 3:
        MPI_OK(MPI_Scatter_init(s, n, MPI_INT, rb, n, MPI_INT, root, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
        /* New data for every start. MPICH 4.0.2 fails the second start of a persistent scatter
           at non-roots ("Invalid communicator" from its schedule), so it gets one start. */
        for (int k = oxc_is_mpich() ? 2 : 0; k < 3; k++) {
            if (rank == root)
                for (int i = 0; i < n * size; i++)
                    s[i] = val(i / n, i % n) + k;
            MPI_OK(MPI_Start(&req));
            MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
            for (int i = 0; i < n && !(inplace && rank == root); i++)
                CHECK(r[i] == val(rank, i) + k, "persistent scatter start %d: [%d] = %d", k, i, r[i]);
        }
        MPI_OK(MPI_Request_free(&req));
        break;
    }
    for (int i = 0; i < n && f != 3; i++) {
        int e = inplace && rank == root ? -1 : val(rank, i);
        CHECK(r[i] == e, "scatter n=%d root=%d inplace=%d form=%d: [%d] = %d, expected %d", n, root, inplace, f, i, r[i], e);
    }
    if (rank == root)
        for (int i = 0; i < n * size; i++)
            CHECK(s[i] == val(i / n, i % n) + (f == 3 ? 2 : 0), "scatter changed the root's send buffer");
    free(s);
    free(r);
}

/* Uneven counts (some zero) taken in reverse rank order with gaps, as ints or as a vector type of
   2 ints with a hole (extent 3 ints) received as plain ints. */
static void scatterv_case(int root, int vec, int f)
{
    int *counts = oxt_malloc(sizeof(int) * size), *displs = oxt_malloc(sizeof(int) * size);
    int at = 0, per = vec ? 2 : 1, ext = vec ? 3 : 1;
    for (int q = size - 1; q >= 0; q--) {
        counts[q] = (q * 7 + 3) % 5;
        displs[q] = at + 1;
        at += counts[q] + 1;
    }
    MPI_Datatype st = MPI_INT;
    if (vec) {
        MPI_OK(MPI_Type_vector(2, 1, 2, MPI_INT, &st));
        MPI_OK(MPI_Type_commit(&st));
    }
    int total = at * ext + 2, mine = counts[rank] * per;
    int *s = oxt_malloc(sizeof(int) * total), *r = oxt_malloc(sizeof(int) * (mine + 1));
    for (int i = 0; i < total; i++)
        s[i] = -3;
    for (int q = 0; q < size; q++)
        for (int k = 0; k < counts[q] * per; k++)
            s[displs[q] * ext + (vec ? (k / 2) * 3 + (k % 2) * 2 : k)] = val(q, k);
    for (int i = 0; i < mine; i++)
        r[i] = -1;
    if (f == 0) {
        MPI_OK(MPI_Scatterv(s, counts, displs, st, r, mine, MPI_INT, root, MPI_COMM_WORLD));
    } else {
        MPI_Count cc[16];
        MPI_Aint dd[16];
        for (int q = 0; q < size; q++) {
            cc[q] = counts[q];
            dd[q] = displs[q];
        }
        MPI_Request req;
        MPI_OK(MPI_Scatterv_init_c(s, cc, dd, st, r, mine, MPI_INT, root, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
        for (int k = oxc_is_mpich() ? 1 : 0; k < 2; k++) {
            MPI_OK(MPI_Start(&req));
            MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        }
        MPI_OK(MPI_Request_free(&req));
    }
    for (int i = 0; i < mine; i++)
        CHECK(r[i] == val(rank, i), "scatterv root=%d vec=%d form=%d: [%d] = %d", root, vec, f, i, r[i]);
    if (vec)
        MPI_OK(MPI_Type_free(&st));
    free(s);
    free(r);
    free(counts);
    free(displs);
}

/* A vector send type (3 ints, stride 2, extent 5 ints) against 3 plain ints, and plain ints
   against a contiguous receive type of 3 ints, in place at the root. */
static void derived_case(int root)
{
    MPI_Datatype c3, v3;
    MPI_OK(MPI_Type_contiguous(3, MPI_INT, &c3));
    MPI_OK(MPI_Type_commit(&c3));
    MPI_OK(MPI_Type_vector(3, 1, 2, MPI_INT, &v3));
    MPI_OK(MPI_Type_commit(&v3));
    int *sv = oxt_malloc(sizeof(int) * 5 * size), r[3] = {-1, -1, -1};
    for (int i = 0; i < 5 * size; i++)
        sv[i] = i % 5 % 2 ? -4 : val(i / 5, i % 5 / 2);
    MPI_OK(MPI_Scatter(sv, 1, v3, r, 3, MPI_INT, root, MPI_COMM_WORLD));
    for (int k = 0; k < 3; k++)
        CHECK(r[k] == val(rank, k), "vector send type root=%d: [%d] = %d", root, k, r[k]);
    int *s = oxt_malloc(sizeof(int) * 3 * size);
    for (int i = 0; i < 3 * size; i++)
        s[i] = val(i / 3, i % 3);
    r[0] = r[1] = r[2] = -1;
    MPI_OK(MPI_Scatter(s, 3, MPI_INT, rank == root ? MPI_IN_PLACE : (void *)r, 1, c3, root, MPI_COMM_WORLD));
    for (int k = 0; k < 3; k++)
        CHECK(r[k] == (rank == root ? -1 : val(rank, k)), "contiguous receive type root=%d: [%d] = %d", root, k, r[k]);
    MPI_OK(MPI_Type_free(&c3));
    MPI_OK(MPI_Type_free(&v3));
    free(s);
    free(sv);
}

/* Intercommunicator between even and odd ranks: the root (last of its group) scatters to the
   other group. */
static void inter_case(void)
{
    int parity = rank % 2, lrank = rank / 2, ne = (size + 1) / 2, no = size / 2;
    MPI_Comm half, inter;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, parity, rank, &half));
    MPI_OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - parity, 7, &inter));
    for (int rg = 0; rg < 2; rg++) {
        int rl = (rg ? no : ne) - 1, other = rg ? ne : no;
        int root = parity == rg ? (lrank == rl ? MPI_ROOT : MPI_PROC_NULL) : rl;
        int s[5 * 8], r[8], sc[8], sd[8];
        for (int i = 0; i < 5 * other; i++)
            s[i] = val(i / 5, i % 5);
        for (int i = 0; i < 8; i++)
            r[i] = -1;
        MPI_OK(MPI_Scatter(s, 5, MPI_INT, r, 5, MPI_INT, root, inter));
        for (int i = 0; i < 5; i++) {
            int e = root >= 0 ? val(lrank, i) : -1;
            CHECK(r[i] == e, "inter scatter rg=%d: [%d] = %d, expected %d", rg, i, r[i], e);
        }
        /* scatterv: remote rank q gets q+1 ints, taken in reverse order */
        int at = 0;
        for (int q = other - 1; q >= 0; q--) {
            sc[q] = q + 1;
            sd[q] = at;
            at += q + 1;
            for (int i = 0; i <= q; i++)
                s[sd[q] + i] = val(q, i);
        }
        for (int i = 0; i < 8; i++)
            r[i] = -1;
        MPI_Request req;
        MPI_OK(MPI_Iscatterv(s, sc, sd, MPI_INT, r, lrank + 1, MPI_INT, root, inter, &req));
        MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        for (int i = 0; i < 8; i++) {
            int e = root >= 0 && i <= lrank ? val(lrank, i) : -1;
            CHECK(r[i] == e, "inter scatterv rg=%d: [%d] = %d, expected %d", rg, i, r[i], e);
        }
    }
    MPI_OK(MPI_Comm_free(&inter));
    MPI_OK(MPI_Comm_free(&half));
}

static void errors(void)
{
    int s[4 * 8] = {0}, r[4];
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    CHECK_CLASS(MPI_Scatter(s, 1, MPI_INT, r, 1, MPI_INT, size, MPI_COMM_WORLD), MPI_ERR_ROOT);
    CHECK_CLASS(MPI_Scatter(s, 1, MPI_INT, r, -2, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Scatter(s, 1, MPI_INT, r, 1, MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    int one = 1, zero = 0, neg = -1;
    CHECK_CLASS(MPI_Scatterv(s, &neg, &zero, MPI_INT, r, 1, MPI_INT, 0, MPI_COMM_SELF), MPI_ERR_COUNT);
    /* MPICH 4.0.2 does not check the arrays (it crashes on NULL). */
    if (!oxc_is_mpich()) {
        CHECK_CLASS(MPI_Scatterv(s, NULL, &zero, MPI_INT, r, 1, MPI_INT, 0, MPI_COMM_SELF), MPI_ERR_ARG);
        CHECK_CLASS(MPI_Scatterv(s, &one, NULL, MPI_INT, r, 1, MPI_INT, 0, MPI_COMM_SELF), MPI_ERR_ARG);
    }
    CHECK_CLASS(MPI_Scatter(s, 3, MPI_INT, r, 2, MPI_INT, 0, MPI_COMM_SELF), MPI_ERR_TRUNCATE);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int ns[] = {0, 1, 7, 3001};
    for (int root = 0; root < size; root++)
        for (int k = 0; k < 4; k++)
            scatter_ints(ns[k], root, (root + k) % 2, 0);
    for (int f = 1; f < 4; f++)
        for (int k = 1; k < 4; k++)
            scatter_ints(ns[k], (f + k) % size, f == 2, f);
    for (int root = 0; root < size; root++) {
        scatterv_case(root, 0, root % 2);
        scatterv_case(root, 1, (root + 1) % 2);
        derived_case(root);
    }
    if (size >= 2)
        inter_case();
    errors();
    MPI_Finalize();
    return 0;
}
