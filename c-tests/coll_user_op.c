/* oxmpi-test: ranks=1,2,3,4,5,8 timeout=90 */
/* oxmpi-test: env=- env=OXMPI_ALLREDUCE_ALGORITHM=slices */
/* User-defined ops (MPI_Op_create, MPI_Op_create_c): a commutative integer sum, and two
   non-commutative ops whose result must fold the ranks in order (a0 op a1 op ... op an-1): 2x2
   matrix products on a contiguous type of 4 doubles, and composition of affine maps mod 251 on
   MPI_CHAR vector / indexed types (data with holes, one with a non-zero true lower bound), in
   Reduce (every root), Allreduce, Reduce_scatter(_block), Scan, Exscan, their nonblocking forms,
   Reduce_local; the holes of receive buffers stay untouched. Also Op_commutative and Op_free. */
#include "oxtest.h"
#include <string.h>

static int rank, size, bad_dt;

typedef struct {
    const char *name;
    MPI_Datatype dt;
    int ext, ndata, doff[32];
    void (*init)(int r, int i, unsigned char *e);
    void (*comb)(const unsigned char *in, unsigned char *inout);
    int commute;
    MPI_Op op;
} kind_t;

static kind_t K[4];
static kind_t *cur;

/* int sum */
static void sum_init(int r, int i, unsigned char *e) { int v = r * 1000 + i; memcpy(e, &v, 4); }
static void sum_comb(const unsigned char *in, unsigned char *io)
{
    int a, b;
    memcpy(&a, in, 4);
    memcpy(&b, io, 4);
    b += a;
    memcpy(io, &b, 4);
}
/* 2x2 matrices, row-major: inout = in * inout */
static void mat_init(int r, int i, unsigned char *e)
{
    double m[4] = {1 + (r + i) % 3, 1, (r * 7 + i) % 2, 1 + (r % 2)};
    memcpy(e, m, 32);
}
static void mat_comb(const unsigned char *in, unsigned char *io)
{
    double a[4], b[4], c[4];
    memcpy(a, in, 32);
    memcpy(b, io, 32);
    c[0] = a[0] * b[0] + a[1] * b[2];
    c[1] = a[0] * b[1] + a[1] * b[3];
    c[2] = a[2] * b[0] + a[3] * b[2];
    c[3] = a[2] * b[1] + a[3] * b[3];
    memcpy(io, c, 32);
}
/* affine maps x -> a x + b mod 251, at data offsets o0, o1: (f op g) = g after f */
static void aff_init_at(int r, int i, unsigned char *e, int o0, int o1)
{
    e[o0] = (unsigned char)(1 + (r * 5 + i * 3) % 250);
    e[o1] = (unsigned char)((r * 11 + i + 7) % 251);
}
static void aff_comb_at(const unsigned char *in, unsigned char *io, int o0, int o1)
{
    unsigned a1 = in[o0], b1 = in[o1], a2 = io[o0], b2 = io[o1];
    io[o0] = (unsigned char)((a1 * a2) % 251);
    io[o1] = (unsigned char)((a2 * b1 + b2) % 251);
}
static void vec_init(int r, int i, unsigned char *e) { aff_init_at(r, i, e, 0, 2); }
static void vec_comb(const unsigned char *in, unsigned char *io) { aff_comb_at(in, io, 0, 2); }
static void idx_init(int r, int i, unsigned char *e) { aff_init_at(r, i, e, 1, 3); }
static void idx_comb(const unsigned char *in, unsigned char *io) { aff_comb_at(in, io, 1, 3); }

#define USER_FN(k)                                                                      \
    static void fn_##k(void *in, void *io, int *len, MPI_Datatype *dt)                  \
    {                                                                                   \
        if (*dt != K[k].dt)                                                             \
            bad_dt = 1;                                                                 \
        for (int i = 0; i < *len; i++)                                                  \
            K[k].comb((unsigned char *)in + (size_t)i * K[k].ext, (unsigned char *)io + (size_t)i * K[k].ext); \
    }
USER_FN(0)
USER_FN(1)
USER_FN(2)
static void fn_c_3(void *in, void *io, MPI_Count *len, MPI_Datatype *dt)
{
    if (*dt != K[3].dt)
        bad_dt = 1;
    for (MPI_Count i = 0; i < *len; i++)
        K[3].comb((unsigned char *)in + (size_t)i * K[3].ext, (unsigned char *)io + (size_t)i * K[3].ext);
}

#define SENT 0xEE
static size_t bufsize(int n) { return (size_t)n * (size_t)cur->ext + 8; }

/* buffer of n elements of rank r's values (holes SENT) */
static unsigned char *make(int r, int n)
{
    unsigned char *b = oxt_malloc(bufsize(n));
    memset(b, SENT, bufsize(n));
    for (int i = 0; i < n; i++)
        cur->init(r, i, b + (size_t)i * cur->ext);
    return b;
}

/* the fold over ranks lo..hi-1 of element i (element index into the rank's vector) */
static void expect(int lo, int hi, int i, unsigned char *e)
{
    unsigned char x[64];
    memset(e, SENT, 64);
    cur->init(lo, i, e);
    for (int q = lo + 1; q < hi; q++) {
        memset(x, SENT, 64);
        cur->init(q, i, x);
        cur->comb(e, x);
        memcpy(e, x, 64);
    }
}

/* checks element j of buf (n elements) = fold(lo..hi) of vector element i; holes untouched */
static void check_elem(const unsigned char *buf, int j, int lo, int hi, int i, const char *what)
{
    unsigned char e[64];
    expect(lo, hi, i, e);
    for (int d = 0; d < cur->ndata; d++) {
        int o = cur->doff[d];
        CHECK(buf[(size_t)j * cur->ext + o] == e[o], "%s %s: element %d byte %d = %d, expected %d (ranks %d..%d)", cur->name, what, j,
              o, buf[(size_t)j * cur->ext + o], e[o], lo, hi - 1);
    }
}

static void check_holes(const unsigned char *buf, int n, const char *what)
{
    unsigned char *data = calloc(bufsize(n), 1);
    for (int j = 0; j < n; j++)
        for (int d = 0; d < cur->ndata; d++)
            data[(size_t)j * cur->ext + cur->doff[d]] = 1;
    for (size_t b = 0; b < bufsize(n); b++)
        if (!data[b])
            CHECK(buf[b] == SENT, "%s %s: hole byte %zu written (%d)", cur->name, what, b, buf[b]);
    free(data);
}

static void check_untouched(const unsigned char *buf, int n, const char *what)
{
    for (size_t b = 0; b < bufsize(n); b++)
        CHECK(buf[b] == SENT, "%s %s: receive buffer written at byte %zu", cur->name, what, b);
}

static void run_reduce(int n, int nb)
{
    for (int root = 0; root < size; root++) {
        unsigned char *s = make(rank, n), *r = oxt_malloc(bufsize(n));
        memset(r, SENT, bufsize(n));
        if (nb) {
            MPI_Request q;
            MPI_OK(MPI_Ireduce(s, r, n, cur->dt, cur->op, root, MPI_COMM_WORLD, &q));
            MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        } else {
            MPI_OK(MPI_Reduce(s, r, n, cur->dt, cur->op, root, MPI_COMM_WORLD));
        }
        if (rank == root) {
            for (int j = 0; j < n; j++)
                check_elem(r, j, 0, size, j, "reduce");
            check_holes(r, n, "reduce");
        } else {
            check_untouched(r, n, "reduce non-root");
        }
        free(s);
        free(r);
    }
    /* in place at root 0 (MPICH 4.0.2 mishandles in-place at other roots, see oxcoll.h) */
    unsigned char *r = make(rank, n);
    if (rank == 0)
        MPI_OK(MPI_Reduce(MPI_IN_PLACE, r, n, cur->dt, cur->op, 0, MPI_COMM_WORLD));
    else
        MPI_OK(MPI_Reduce(r, NULL, n, cur->dt, cur->op, 0, MPI_COMM_WORLD));
    if (rank == 0)
        for (int j = 0; j < n; j++)
            check_elem(r, j, 0, size, j, "reduce in place");
    free(r);
}

static void run_allreduce(int n, int nb, int inplace)
{
    unsigned char *s = make(rank, n), *r = inplace ? make(rank, n) : oxt_malloc(bufsize(n));
    if (!inplace)
        memset(r, SENT, bufsize(n));
    const void *sb = inplace ? MPI_IN_PLACE : s;
    if (nb) {
        MPI_Request q;
        MPI_OK(MPI_Iallreduce(sb, r, n, cur->dt, cur->op, MPI_COMM_WORLD, &q));
        MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    } else {
        MPI_OK(MPI_Allreduce(sb, r, n, cur->dt, cur->op, MPI_COMM_WORLD));
    }
    for (int j = 0; j < n; j++)
        check_elem(r, j, 0, size, j, "allreduce");
    check_holes(r, n, "allreduce");
    free(s);
    free(r);
}

static void run_scan(int n, int nb, int inplace, int ex)
{
    unsigned char *s = make(rank, n), *r = inplace ? make(rank, n) : oxt_malloc(bufsize(n));
    if (!inplace)
        memset(r, SENT, bufsize(n));
    const void *sb = inplace ? MPI_IN_PLACE : s;
    MPI_Request q;
    if (ex) {
        if (nb)
            MPI_OK(MPI_Iexscan(sb, r, n, cur->dt, cur->op, MPI_COMM_WORLD, &q));
        else
            MPI_OK(MPI_Exscan(sb, r, n, cur->dt, cur->op, MPI_COMM_WORLD));
    } else {
        if (nb)
            MPI_OK(MPI_Iscan(sb, r, n, cur->dt, cur->op, MPI_COMM_WORLD, &q));
        else
            MPI_OK(MPI_Scan(sb, r, n, cur->dt, cur->op, MPI_COMM_WORLD));
    }
    if (nb)
        MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    if (ex && rank == 0) {
        if (!inplace)
            check_untouched(r, n, "exscan rank 0");
    } else {
        for (int j = 0; j < n; j++)
            check_elem(r, j, 0, ex ? rank : rank + 1, j, ex ? "exscan" : "scan");
        check_holes(r, n, ex ? "exscan" : "scan");
    }
    free(s);
    free(r);
}

static void run_reduce_scatter(int per, int nb, int blockform, int inplace)
{
    int *counts = malloc(sizeof(int) * (size_t)size), total = 0, off = 0;
    for (int i = 0; i < size; i++) {
        counts[i] = blockform ? per : (i % 3) * per / 2;
        if (i < rank)
            off += counts[i];
        total += counts[i];
    }
    int mine = counts[rank];
    unsigned char *s = make(rank, total), *r;
    if (inplace) {
        r = make(rank, total);
    } else {
        r = oxt_malloc(bufsize(mine));
        memset(r, SENT, bufsize(mine));
    }
    const void *sb = inplace ? MPI_IN_PLACE : s;
    MPI_Request q;
    if (blockform) {
        if (nb)
            MPI_OK(MPI_Ireduce_scatter_block(sb, r, per, cur->dt, cur->op, MPI_COMM_WORLD, &q));
        else
            MPI_OK(MPI_Reduce_scatter_block(sb, r, per, cur->dt, cur->op, MPI_COMM_WORLD));
    } else {
        if (nb)
            MPI_OK(MPI_Ireduce_scatter(sb, r, counts, cur->dt, cur->op, MPI_COMM_WORLD, &q));
        else
            MPI_OK(MPI_Reduce_scatter(sb, r, counts, cur->dt, cur->op, MPI_COMM_WORLD));
    }
    if (nb)
        MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    for (int j = 0; j < mine; j++)
        check_elem(r, j, 0, size, off + j, "reduce_scatter");
    if (!inplace)
        check_holes(r, mine, "reduce_scatter");
    free(s);
    free(r);
    free(counts);
}

static void run_local(int n)
{
    unsigned char *a = make(rank, n), *b = make(rank + 1, n);
    MPI_OK(MPI_Reduce_local(a, b, n, cur->dt, cur->op));
    for (int j = 0; j < n; j++)
        check_elem(b, j, rank, rank + 2, j, "reduce_local");
    check_holes(b, n, "reduce_local");
    free(a);
    free(b);
}

/* intercommunicators: each group gets the OTHER group's data folded in its rank order (remote
   group rank q is world rank 2q + color of the other group) */
static void run_inter(void)
{
    if (size < 2)
        return;
    int color = rank % 2, n = 3, lrank, rsize;
    MPI_Comm local, ic;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, color, rank, &local));
    MPI_OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, 1 - color, 5, &ic));
    MPI_OK(MPI_Comm_rank(local, &lrank));
    MPI_OK(MPI_Comm_remote_size(ic, &rsize));
    unsigned char *s = make(rank, n), *r = oxt_malloc(bufsize(n)), e[64], x[64];
    MPI_OK(MPI_Allreduce(s, r, n, cur->dt, cur->op, ic));
    for (int j = 0; j < n; j++) {
        memset(e, SENT, 64);
        cur->init(1 - color, j, e);
        for (int q = 1; q < rsize; q++) {
            memset(x, SENT, 64);
            cur->init(2 * q + 1 - color, j, x);
            cur->comb(e, x);
            memcpy(e, x, 64);
        }
        for (int d = 0; d < cur->ndata; d++)
            CHECK(r[(size_t)j * cur->ext + cur->doff[d]] == e[cur->doff[d]], "%s inter allreduce element %d", cur->name, j);
    }
    free(s);
    free(r);
    MPI_OK(MPI_Comm_free(&ic));
    MPI_OK(MPI_Comm_free(&local));
}

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));

    MPI_Datatype mat, vec, idx;
    MPI_OK(MPI_Type_contiguous(4, MPI_DOUBLE, &mat));
    MPI_OK(MPI_Type_vector(2, 1, 2, MPI_CHAR, &vec));
    int displs[2] = {1, 3};
    MPI_OK(MPI_Type_create_indexed_block(2, 1, displs, MPI_CHAR, &idx));
    MPI_OK(MPI_Type_commit(&mat));
    MPI_OK(MPI_Type_commit(&vec));
    MPI_OK(MPI_Type_commit(&idx));
    K[0] = (kind_t){"int-sum", MPI_INT, 4, 4, {0}, sum_init, sum_comb, 1, MPI_OP_NULL};
    K[1] = (kind_t){"matmul", mat, 32, 32, {0}, mat_init, mat_comb, 0, MPI_OP_NULL};
    for (int k = 0; k < 2; k++) /* dense types: every byte is data */
        for (int b = 0; b < K[k].ext; b++)
            K[k].doff[b] = b;
    K[2] = (kind_t){"affine-vector", vec, 3, 2, {0, 2}, vec_init, vec_comb, 0, MPI_OP_NULL};
    K[3] = (kind_t){"affine-indexed", idx, 3, 2, {1, 3}, idx_init, idx_comb, 0, MPI_OP_NULL};
    MPI_OK(MPI_Op_create(fn_0, 1, &K[0].op));
    MPI_OK(MPI_Op_create(fn_1, 0, &K[1].op));
    MPI_OK(MPI_Op_create(fn_2, 0, &K[2].op));
    MPI_OK(MPI_Op_create_c(fn_c_3, 0, &K[3].op));

    for (int k = 0; k < 4; k++) {
        int commute = -1;
        MPI_OK(MPI_Op_commutative(K[k].op, &commute));
        CHECK(commute == K[k].commute, "%s: Op_commutative = %d", K[k].name, commute);
    }

    int counts[3] = {0, 1, 300};
    for (int k = 0; k < 4; k++) {
        cur = &K[k];
        for (int c = 0; c < 3; c++) {
            int n = counts[c];
            run_local(n);
            run_reduce(n, c == 1);
            for (int nb = 0; nb < 2; nb++)
                for (int inplace = 0; inplace < 2; inplace++) {
                    if (n == 300 && (nb || inplace) && k != 1)
                        continue;
                    run_allreduce(n, nb, inplace);
                    run_scan(n, nb, inplace, 0);
                    run_scan(n, nb, inplace, 1);
                    run_reduce_scatter(n, nb, 0, inplace);
                    run_reduce_scatter(n, nb, 1, inplace);
                }
        }
    }
    for (int k = 0; k < 4; k++) {
        cur = &K[k];
        run_inter();
    }
    CHECK(!bad_dt, "a user function got a datatype other than the one of the call");

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Op sum = MPI_SUM;
    CHECK_CLASS(MPI_Op_free(&sum), MPI_ERR_OP);
    for (int k = 0; k < 4; k++) {
        MPI_OK(MPI_Op_free(&K[k].op));
        CHECK(K[k].op == MPI_OP_NULL, "Op_free left the handle set");
    }
    MPI_OK(MPI_Type_free(&mat));
    MPI_OK(MPI_Type_free(&vec));
    MPI_OK(MPI_Type_free(&idx));
    MPI_OK(MPI_Finalize());
    return 0;
}
