/* oxmpi-test: ranks=1,2,3,4,5,8 timeout=90 */
/* MPI_Reduce_scatter and MPI_Reduce_scatter_block with predefined ops: SUM/MAX on int and double,
   odd counts, uneven recvcounts with zeros, MPI_IN_PLACE (the input vector in recvbuf), a vector
   datatype, the _c and nonblocking forms, persistent requests started several times, the
   intercommunicator forms (each group gets the OTHER group's reduction), and argument errors. */
#include "oxcoll.h"

#define rank oxc_rank
#define size oxc_size

/* rank r's value at vector index i */
static int ival(int r, int i) { return (r + 1) * 1000 + i * 7 - r * (i % 5); }

static void check_sum(const int *r, int n, int off, int lo, int hi, const char *what)
{
    for (int j = 0; j < n; j++) {
        int e = 0;
        for (int q = lo; q < hi; q++)
            e += ival(q, off + j);
        CHECK(r[j] == e, "%s: [%d] = %d, expected %d", what, j, r[j], e);
    }
}

static void uneven(int base, int inplace, int nb)
{
    int *counts = malloc(sizeof(int) * (size_t)size), total = 0, off = 0;
    for (int i = 0; i < size; i++) {
        counts[i] = (i % 3 == 1) ? 0 : base + i;
        if (i < rank)
            off += counts[i];
        total += counts[i];
    }
    int *s = oxt_malloc(sizeof(int) * (size_t)(total + 1)), *r = oxt_malloc(sizeof(int) * (size_t)(total + 1));
    for (int i = 0; i < total; i++)
        s[i] = ival(rank, i);
    for (int i = 0; i <= total; i++)
        r[i] = -1;
    if (inplace)
        memcpy(r, s, sizeof(int) * (size_t)total);
    if (nb) {
        MPI_Request q;
        MPI_OK(MPI_Ireduce_scatter(inplace ? MPI_IN_PLACE : s, r, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q));
        MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    } else {
        MPI_OK(MPI_Reduce_scatter(inplace ? MPI_IN_PLACE : s, r, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    }
    check_sum(r, counts[rank], off, 0, size, "reduce_scatter uneven");
    if (!inplace)
        CHECK(r[counts[rank]] == -1, "reduce_scatter wrote past its block");
    free(s);
    free(r);
    free(counts);
}

static void block_double(int n, int inplace)
{
    double *s = oxt_malloc(sizeof(double) * (size_t)(n * size + 1)), *r = oxt_malloc(sizeof(double) * (size_t)(n * size + 1));
    for (int i = 0; i < n * size; i++)
        s[i] = (double)((rank * 31 + i * 17) % 101);
    if (inplace)
        memcpy(r, s, sizeof(double) * (size_t)(n * size));
    MPI_OK(MPI_Reduce_scatter_block(inplace ? MPI_IN_PLACE : s, r, n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    for (int j = 0; j < n; j++) {
        double e = -1;
        for (int q = 0; q < size; q++) {
            double v = (double)((q * 31 + (rank * n + j) * 17) % 101);
            e = v > e ? v : e;
        }
        CHECK(r[j] == e, "block MAX n=%d inplace=%d [%d] = %g, expected %g", n, inplace, j, r[j], e);
    }
    free(s);
    free(r);
}

/* a vector type: 2 ints of every 3 (an oxmpi extension: MPICH 4.0 refuses predefined ops on
   derived types, so this part is skipped there) */
static void derived(void)
{
    MPI_Datatype v;
    MPI_OK(MPI_Type_vector(2, 1, 2, MPI_INT, &v)); /* ints at 0 and 2, extent 3 ints */
    MPI_OK(MPI_Type_commit(&v));
    int per = 3, total = per * size;
    int *s = oxt_malloc(sizeof(int) * (size_t)(3 * total + 1)), *r = oxt_malloc(sizeof(int) * (size_t)(3 * per + 1));
    for (int i = 0; i < 3 * total; i++)
        s[i] = ival(rank, i);
    for (int i = 0; i <= 3 * per; i++)
        r[i] = -7;
    MPI_OK(MPI_Reduce_scatter_block_c(s, r, per, v, MPI_SUM, MPI_COMM_WORLD));
    for (int e = 0; e < per; e++)
        for (int k = 0; k < 3; k++) {
            int at = 3 * e + k;
            if (k == 1) {
                CHECK(r[at] == -7, "vector hole %d written", at);
                continue;
            }
            int x = 0;
            for (int q = 0; q < size; q++)
                x += ival(q, 3 * (rank * per + e) + k);
            CHECK(r[at] == x, "vector reduce_scatter [%d] = %d, expected %d", at, r[at], x);
        }
    MPI_OK(MPI_Type_free(&v));
    free(s);
    free(r);
}

static void persistent(void)
{
    int n = 5;
    int *s = oxt_malloc(sizeof(int) * (size_t)(n * size)), r[5];
    MPI_Count *cc = malloc(sizeof(MPI_Count) * (size_t)size);
    for (int i = 0; i < size; i++)
        cc[i] = n;
    MPI_Request q[2];
    int rb[5];
    MPI_OK(MPI_Reduce_scatter_init_c(s, r, cc, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &q[0]));
    MPI_OK(MPI_Reduce_scatter_block_init(s, rb, n, MPI_INT, MPI_MAX, MPI_COMM_WORLD, MPI_INFO_NULL, &q[1]));
    free(cc); /* the request keeps its own copy of recvcounts */
    for (int it = 0; it < 3; it++) {
        for (int i = 0; i < n * size; i++)
            s[i] = ival(rank, i) + it;
        MPI_OK(MPI_Startall(2, q));
        MPI_OK(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
        for (int j = 0; j < n; j++) {
            int e = 0, m = -1;
            for (int p = 0; p < size; p++) {
                e += ival(p, rank * n + j) + it;
                m = ival(p, rank * n + j) + it > m ? ival(p, rank * n + j) + it : m;
            }
            CHECK(r[j] == e && rb[j] == m, "persistent iteration %d [%d]: %d/%d, expected %d/%d", it, j, r[j], rb[j], e, m);
        }
    }
    MPI_OK(MPI_Request_free(&q[0]));
    MPI_OK(MPI_Request_free(&q[1]));
    free(s);
}

static void inter(void)
{
    if (size < 2)
        return;
    int color = rank % 2;
    MPI_Comm local, ic;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, color, rank, &local));
    MPI_OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, 1 - color, 7, &ic));
    int lsize, rsize, lrank;
    MPI_OK(MPI_Comm_size(local, &lsize));
    MPI_OK(MPI_Comm_rank(local, &lrank));
    MPI_OK(MPI_Comm_remote_size(ic, &rsize));
    /* both groups' vectors must have the same total: 12 elements, scattered unevenly locally */
    int total = 12;
    int *counts = malloc(sizeof(int) * (size_t)lsize), off = 0;
    for (int i = 0; i < lsize; i++)
        counts[i] = 0;
    for (int e = 0; e < total; e++)
        counts[(e * 3) % lsize]++;
    for (int i = 0; i < lrank; i++)
        off += counts[i];
    int s[12], r[12];
    for (int i = 0; i < total; i++)
        s[i] = ival(rank, i);
    MPI_OK(MPI_Reduce_scatter(s, r, counts, MPI_INT, MPI_SUM, ic));
    for (int j = 0; j < counts[lrank]; j++) {
        int e = 0;
        for (int q = 1 - color; q < size; q += 2)
            e += ival(q, off + j);
        CHECK(r[j] == e, "inter reduce_scatter [%d] = %d, expected %d", j, r[j], e);
    }
    /* the block form: recvcount * local size must match across groups: use lsize*rsize */
    int rc = rsize, *sb = malloc(sizeof(int) * (size_t)(lsize * rsize)), *rb = malloc(sizeof(int) * (size_t)rsize);
    for (int i = 0; i < lsize * rsize; i++)
        sb[i] = ival(rank, i);
    MPI_Request q;
    MPI_OK(MPI_Ireduce_scatter_block(sb, rb, rc, MPI_INT, MPI_SUM, ic, &q));
    MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    for (int j = 0; j < rc; j++) {
        int e = 0;
        for (int p = 1 - color; p < size; p += 2)
            e += ival(p, lrank * rc + j);
        CHECK(rb[j] == e, "inter reduce_scatter_block [%d] = %d, expected %d", j, rb[j], e);
    }
    free(sb);
    free(rb);
    free(counts);
    MPI_OK(MPI_Comm_free(&ic));
    MPI_OK(MPI_Comm_free(&local));
}

static void errors(void)
{
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int *counts = malloc(sizeof(int) * (size_t)size), s[4] = {0}, r[4];
    for (int i = 0; i < size; i++)
        counts[i] = 1;
    counts[size - 1] = -1;
    if (!oxc_is_mpich()) { /* MPICH 4.0.2 does not check negative counts here (it crashes) */
        CHECK_CLASS(MPI_Reduce_scatter(s, r, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_COUNT);
        CHECK_CLASS(MPI_Reduce_scatter_block(s, r, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_COUNT);
    }
    CHECK_CLASS(MPI_Reduce_scatter_block(s, r, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD), MPI_ERR_OP);
    int cls = -1, rc = MPI_Reduce_scatter_block(s, r, 1, MPI_DATATYPE_NULL, MPI_SUM, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TYPE || cls == MPI_ERR_OP, "MPI_DATATYPE_NULL: class %d (MPICH says MPI_ERR_OP)", cls);
    CHECK_CLASS(MPI_Reduce_scatter_block(s, r, 1, MPI_INT, MPI_SUM, MPI_COMM_NULL), MPI_ERR_COMM);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    free(counts);
}

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int bases[3] = {0, 1, 3001};
    for (int b = 0; b < 3; b++)
        for (int inplace = 0; inplace < 2; inplace++)
            for (int nb = 0; nb < 2; nb++)
                uneven(bases[b], inplace, nb);
    int ns[4] = {0, 1, 7, 2500};
    for (int k = 0; k < 4; k++)
        for (int inplace = 0; inplace < 2; inplace++)
            block_double(ns[k], inplace);
    if (!oxc_is_mpich())
        derived();
    persistent();
    inter();
    errors();
    MPI_OK(MPI_Finalize());
    return 0;
}
