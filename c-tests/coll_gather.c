/* oxmpi-test: ranks=1,2,3,4,5,8 timeout=60 */
/* MPI_Gather and MPI_Gatherv: every root, odd and zero counts, small (tree) and large (linear)
   messages, MPI_IN_PLACE at the root, a contiguous send type against a basic receive type, a
   vector receive type, uneven counts with permuted displacements, the intercommunicator form,
   the nonblocking, persistent and large-count forms, and argument errors. */
#include "oxcoll.h"

static int rank, size;

static int val(int r, int i) { return r * 100000 + i; }

/* MPI_Gather of n ints to root, optionally in place, through form f (0 blocking, 1 _c,
   2 nonblocking, 3 persistent started twice). */
static void gather_ints(int n, int root, int inplace, int f)
{
    int *s = oxt_malloc(sizeof(int) * (n + 1)), *r = oxt_malloc(sizeof(int) * ((size_t)n * size + 1));
    for (int i = 0; i < n; i++)
        s[i] = val(rank, i);
    for (int i = 0; i < n * size; i++)
        r[i] = -1;
    if (inplace && rank == root)
        memcpy(r + (size_t)root * n, s, sizeof(int) * n);
    const void *sb = inplace && rank == root ? MPI_IN_PLACE : s;
    MPI_Request req;
    switch (f) {
    case 0: MPI_OK(MPI_Gather(sb, n, MPI_INT, r, n, MPI_INT, root, MPI_COMM_WORLD)); break;
    case 1: MPI_OK(MPI_Gather_c(sb, n, MPI_INT, r, n, MPI_INT, root, MPI_COMM_WORLD)); break;
    case 2:
        MPI_OK(MPI_Igather(sb, n, MPI_INT, r, n, MPI_INT, root, MPI_COMM_WORLD, &req));
        MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        break;
    case 3:
        MPI_OK(MPI_Gather_init(sb, n, MPI_INT, r, n, MPI_INT, root, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
        for (int k = 0; k < 2; k++) {
            MPI_OK(MPI_Start(&req));
            MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        }
        MPI_OK(MPI_Request_free(&req));
        break;
    }
    for (int q = 0; q < size; q++)
        for (int i = 0; i < n; i++) {
            int e = rank == root ? val(q, i) : -1;
            CHECK(r[(size_t)q * n + i] == e, "gather n=%d root=%d inplace=%d form=%d: [%d][%d] = %d, expected %d", n, root, inplace, f,
                  q, i, r[(size_t)q * n + i], e);
        }
    free(s);
    free(r);
}

/* Uneven counts (some zero) placed in reverse rank order with gaps, as ints or as a vector type
   of 2 ints with a hole (extent 3 ints) received from plain ints. */
static void gatherv_case(int root, int vec, int f)
{
    int *counts = oxt_malloc(sizeof(int) * size), *displs = oxt_malloc(sizeof(int) * size);
    int at = 0, per = vec ? 2 : 1, ext = vec ? 3 : 1;
    for (int q = size - 1; q >= 0; q--) {
        counts[q] = (q * 7 + 3) % 5;
        displs[q] = at + 1;
        at += counts[q] + 1;
    }
    MPI_Datatype rt = MPI_INT;
    if (vec) {
        MPI_OK(MPI_Type_vector(2, 1, 2, MPI_INT, &rt));
        MPI_OK(MPI_Type_commit(&rt));
    }
    int mine = counts[rank] * per, total = at * ext + 2;
    int *s = oxt_malloc(sizeof(int) * (mine + 1)), *r = oxt_malloc(sizeof(int) * total);
    for (int i = 0; i < mine; i++)
        s[i] = val(rank, i);
    for (int i = 0; i < total; i++)
        r[i] = -1;
    if (f == 0) {
        MPI_OK(MPI_Gatherv(s, mine, MPI_INT, r, counts, displs, rt, root, MPI_COMM_WORLD));
    } else {
        MPI_Count cc[16];
        MPI_Aint dd[16];
        for (int q = 0; q < size; q++) {
            cc[q] = counts[q];
            dd[q] = displs[q];
        }
        MPI_Request req;
        MPI_OK(MPI_Igatherv_c(s, mine, MPI_INT, r, cc, dd, rt, root, MPI_COMM_WORLD, &req));
        MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    }
    if (rank == root) {
        int *e = oxt_malloc(sizeof(int) * total);
        for (int i = 0; i < total; i++)
            e[i] = -1;
        for (int q = 0; q < size; q++)
            for (int k = 0; k < counts[q] * per; k++)
                e[displs[q] * ext + (vec ? (k / 2) * 3 + (k % 2) * 2 : k)] = val(q, k);
        for (int i = 0; i < total; i++)
            CHECK(r[i] == e[i], "gatherv root=%d vec=%d form=%d: [%d] = %d, expected %d", root, vec, f, i, r[i], e[i]);
        free(e);
    } else {
        for (int i = 0; i < total; i++)
            CHECK(r[i] == -1, "gatherv wrote a non-root's receive buffer");
    }
    if (vec)
        MPI_OK(MPI_Type_free(&rt));
    free(s);
    free(r);
    free(counts);
    free(displs);
}

/* A contiguous send type of 3 ints against 3 plain ints; a vector receive type (3 ints, stride
   2) against 3 plain ints, in place at the root. */
static void derived_case(int root)
{
    MPI_Datatype c3, v3;
    MPI_OK(MPI_Type_contiguous(3, MPI_INT, &c3));
    MPI_OK(MPI_Type_commit(&c3));
    MPI_OK(MPI_Type_vector(3, 1, 2, MPI_INT, &v3));
    MPI_OK(MPI_Type_commit(&v3));
    int s[3] = {val(rank, 0), val(rank, 1), val(rank, 2)};
    int *r = oxt_malloc(sizeof(int) * 3 * size);
    MPI_OK(MPI_Gather(s, 1, c3, r, 3, MPI_INT, root, MPI_COMM_WORLD));
    if (rank == root)
        for (int i = 0; i < 3 * size; i++)
            CHECK(r[i] == val(i / 3, i % 3), "contiguous send type: [%d] = %d", i, r[i]);
    /* v3 has extent 5 ints: block q starts at 5q. */
    int n = 5 * size + 1;
    int *rv = oxt_malloc(sizeof(int) * n);
    for (int i = 0; i < n; i++)
        rv[i] = -1;
    if (rank == root)
        for (int k = 0; k < 3; k++)
            rv[5 * root + 2 * k] = s[k];
    MPI_OK(MPI_Gather(rank == root ? MPI_IN_PLACE : (void *)s, 3, MPI_INT, rv, 1, v3, root, MPI_COMM_WORLD));
    if (rank == root)
        for (int i = 0; i < n; i++) {
            int q = i / 5, o = i % 5;
            int e = q < size && o % 2 == 0 ? val(q, o / 2) : -1;
            CHECK(rv[i] == e, "vector receive type root=%d: [%d] = %d, expected %d", root, i, rv[i], e);
        }
    MPI_OK(MPI_Type_free(&c3));
    MPI_OK(MPI_Type_free(&v3));
    free(r);
    free(rv);
}

/* Intercommunicator between even and odd ranks: the root (last of its group) gathers the other
   group's data. */
static void inter_case(void)
{
    int parity = rank % 2, lrank = rank / 2, ne = (size + 1) / 2, no = size / 2;
    MPI_Comm half, inter;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, parity, rank, &half));
    MPI_OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - parity, 7, &inter));
    for (int rg = 0; rg < 2; rg++) {
        int rl = (rg ? no : ne) - 1, other = rg ? ne : no;
        int root = parity == rg ? (lrank == rl ? MPI_ROOT : MPI_PROC_NULL) : rl;
        int s[5], r[5 * 8], rc[8], rd[8];
        for (int i = 0; i < 5; i++)
            s[i] = val(rank, i);
        for (int i = 0; i < 40; i++)
            r[i] = -1;
        MPI_OK(MPI_Gather(s, 5, MPI_INT, r, 5, MPI_INT, root, inter));
        for (int q = 0; q < other; q++)
            for (int i = 0; i < 5; i++) {
                int e = root == MPI_ROOT ? val(2 * q + 1 - rg, i) : -1;
                CHECK(r[5 * q + i] == e, "inter gather rg=%d: [%d][%d] = %d, expected %d", rg, q, i, r[5 * q + i], e);
            }
        /* gatherv: remote rank q sends q+1 ints, placed in reverse order */
        int at = 0;
        for (int q = other - 1; q >= 0; q--) {
            rc[q] = q + 1;
            rd[q] = at;
            at += q + 1;
        }
        for (int i = 0; i < 40; i++)
            r[i] = -1;
        MPI_Request req;
        MPI_OK(MPI_Igatherv(s, lrank + 1, MPI_INT, r, rc, rd, MPI_INT, root, inter, &req));
        MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        if (root == MPI_ROOT)
            for (int q = 0; q < other; q++)
                for (int i = 0; i <= q; i++)
                    CHECK(r[rd[q] + i] == val(2 * q + 1 - rg, i), "inter gatherv rg=%d: [%d][%d] = %d", rg, q, i, r[rd[q] + i]);
        else
            CHECK(r[0] == -1, "inter gatherv wrote outside the root");
    }
    MPI_OK(MPI_Comm_free(&inter));
    MPI_OK(MPI_Comm_free(&half));
}

static void errors(void)
{
    int s[4] = {0}, r[4 * 8];
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    CHECK_CLASS(MPI_Gather(s, 1, MPI_INT, r, 1, MPI_INT, size, MPI_COMM_WORLD), MPI_ERR_ROOT);
    CHECK_CLASS(MPI_Gather(s, 1, MPI_INT, r, 1, MPI_INT, -1, MPI_COMM_WORLD), MPI_ERR_ROOT);
    CHECK_CLASS(MPI_Gather(s, -1, MPI_INT, r, 1, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Gather(s, 1, MPI_DATATYPE_NULL, r, 1, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    int one = 1, zero = 0;
    /* MPICH 4.0.2 does not check the arrays (it crashes on NULL). */
    if (!oxc_is_mpich()) {
        CHECK_CLASS(MPI_Gatherv(s, 1, MPI_INT, r, NULL, &zero, MPI_INT, 0, MPI_COMM_SELF), MPI_ERR_ARG);
        CHECK_CLASS(MPI_Gatherv(s, 1, MPI_INT, r, &one, NULL, MPI_INT, 0, MPI_COMM_SELF), MPI_ERR_ARG);
    }
    CHECK_CLASS(MPI_Gather(s, 3, MPI_INT, r, 2, MPI_INT, 0, MPI_COMM_SELF), MPI_ERR_TRUNCATE);
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
            gather_ints(ns[k], root, (root + k) % 2, 0);
    for (int f = 1; f < 4; f++)
        for (int k = 1; k < 4; k++)
            gather_ints(ns[k], (f + k) % size, f == 3, f);
    for (int root = 0; root < size; root++) {
        gatherv_case(root, 0, root % 2);
        gatherv_case(root, 1, (root + 1) % 2);
        derived_case(root);
    }
    if (size >= 2)
        inter_case();
    errors();
    MPI_Finalize();
    return 0;
}
