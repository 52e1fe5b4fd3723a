/* oxmpi-test: ranks=1,2,3,4,8 timeout=60 mpich=skip */
/* Nonblocking and persistent collectives where ranks pass different datatypes with the same
   type signature: odd ranks describe their buffers with a strided vector (non-contiguous),
   even ranks with plain MPI_INT. MPI_Igather, MPI_Iscatter, MPI_Iallgather, MPI_Ialltoall,
   MPI_Ialltoallv, MPI_Ireduce_scatter_block, MPI_Iscan and MPI_Iexscan, each also in place where
   MPI allows it (and the last three with a non-commutative user op, whose rank order must hold), and MPI_Gather_init / MPI_Alltoall_init started 3 times with the data changed
   in between. Gaps of the strided buffers must stay untouched. Every rank must take the same
   path (a rank-local choice between a schedule and another algorithm hangs here). MPICH refuses MPI_SUM on a
   derived datatype (oxmpi reduces it as its basic elements), hence mpich=skip; built with
   -DNO_DERIVED_REDUCTIONS the rest passes under MPICH 4.0.2 except MPI_Gather_init, where MPICH
   takes the root's own block at init rather than at each start. */
#include "oxtest.h"

#define K 3         /* ints per block */
#define GAP (-9)    /* sentinel in the holes of strided buffers */

static int rank, size;
static MPI_Datatype strided; /* K ints, stride 2: extent 2K-1 ints */

static int odd(void) { return rank & 1; }

/* A buffer of `blocks` blocks of K ints: dense for even ranks, strided (2 ints per element,
   the second a hole) for odd ones. */
typedef struct {
    int *p;
    int n; /* ints allocated */
    MPI_Datatype t;
    int count; /* datatype count per block */
    MPI_Aint ext; /* extent of one block in ints */
} buf_t;

static buf_t mk(int blocks)
{
    buf_t b;
    b.ext = odd() ? 2 * K : K;
    b.n = (int)(blocks * b.ext) + 1;
    b.p = oxt_malloc(sizeof(int) * b.n);
    for (int i = 0; i < b.n; i++)
        b.p[i] = GAP;
    b.t = odd() ? strided : MPI_INT;
    b.count = odd() ? 1 : K;
    return b;
}

static int *at(buf_t *b, int blk, int k) { return &b->p[blk * b->ext + (odd() ? 2 * k : k)]; }

static void set(buf_t *b, int blk, int v0)
{
    for (int k = 0; k < K; k++)
        *at(b, blk, k) = v0 + k;
}

static void expect(buf_t *b, int blk, int v0, const char *what)
{
    for (int k = 0; k < K; k++)
        CHECK(*at(b, blk, k) == v0 + k, "%s: block %d [%d] = %d, expected %d", what, blk, k, *at(b, blk, k), v0 + k);
}

static void holes(buf_t *b, const char *what)
{
    if (!odd())
        return;
    for (int i = 0; i < b->n; i++)
        if (i % 2 == 1 || i == b->n - 1)
            CHECK(b->p[i] == GAP, "%s: hole [%d] written (%d)", what, i, b->p[i]);
}

static int v(int from, int to, int salt) { return salt * 100000 + from * 1000 + to * 10; }

/* A non-commutative op: (a, b) is the map x -> a x + b (mod 1000003); in o inout = in after inout
   composed as in(inout(x)). */
#define P 1000003L
static void compose(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)t;
    long *f = in, *g = inout;
    for (int i = 0; i < *len; i++, f += 2, g += 2) {
        long a = f[0] * g[0] % P, b = (f[0] * g[1] + f[1]) % P;
        g[0] = a, g[1] = b;
    }
}

static void fmap(int who, long out[2]) { out[0] = 3 + who, out[1] = 7 * who + 1; }

static void compose_ranks(int lo, int hi, long out[2])
{
    out[0] = 1, out[1] = 0;
    for (int q = lo; q <= hi; q++) {
        long f[2], one = 1;
        fmap(q, f);
        int n = (int)one;
        compose(out, f, &n, NULL); /* f = out o f */
        out[0] = f[0], out[1] = f[1];
    }
}

static void wait(MPI_Request *r) { MPI_OK(MPI_Wait(r, MPI_STATUS_IGNORE)); }

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_Datatype vec;
    MPI_OK(MPI_Type_vector(K, 1, 2, MPI_INT, &vec));
    MPI_OK(MPI_Type_create_resized(vec, 0, sizeof(int) * 2 * K, &strided));
    MPI_OK(MPI_Type_commit(&strided));
    MPI_OK(MPI_Type_free(&vec));
    MPI_Request req;

    for (int root = 0; root < size; root += (size > 2 ? size - 1 : 1)) {
        for (int inplace = 0; inplace < 2; inplace++) {
            /* Igather */
            buf_t s = mk(1), r = mk(size);
            set(&s, 0, v(rank, root, 1));
            if (inplace && rank == root)
                set(&r, rank, v(rank, root, 1));
            const void *sb = inplace && rank == root ? MPI_IN_PLACE : (void *)s.p;
            MPI_OK(MPI_Igather(sb, s.count, s.t, r.p, r.count, r.t, root, MPI_COMM_WORLD, &req));
            wait(&req);
            if (rank == root)
                for (int q = 0; q < size; q++)
                    expect(&r, q, v(q, root, 1), "igather");
            holes(&r, "igather");
            free(s.p), free(r.p);

            /* Iscatter */
            s = mk(size), r = mk(1);
            if (rank == root)
                for (int q = 0; q < size; q++)
                    set(&s, q, v(root, q, 2));
            void *rb = inplace && rank == root ? MPI_IN_PLACE : (void *)r.p;
            MPI_OK(MPI_Iscatter(s.p, s.count, s.t, rb, r.count, r.t, root, MPI_COMM_WORLD, &req));
            wait(&req);
            if (inplace && rank == root)
                expect(&s, rank, v(root, rank, 2), "iscatter in place");
            else
                expect(&r, 0, v(root, rank, 2), "iscatter");
            holes(&r, "iscatter");
            free(s.p), free(r.p);
        }
    }

    for (int inplace = 0; inplace < 2; inplace++) {
        /* Iallgather */
        buf_t s = mk(1), r = mk(size);
        set(&s, 0, v(rank, 0, 3));
        if (inplace)
            set(&r, rank, v(rank, 0, 3));
        MPI_OK(MPI_Iallgather(inplace ? MPI_IN_PLACE : (void *)s.p, s.count, s.t, r.p, r.count, r.t, MPI_COMM_WORLD, &req));
        wait(&req);
        for (int q = 0; q < size; q++)
            expect(&r, q, v(q, 0, 3), "iallgather");
        holes(&r, "iallgather");
        free(s.p), free(r.p);

        /* Ialltoall */
        s = mk(size), r = mk(size);
        for (int q = 0; q < size; q++)
            set(inplace ? &r : &s, q, v(rank, q, 4));
        MPI_OK(MPI_Ialltoall(inplace ? MPI_IN_PLACE : (void *)s.p, s.count, s.t, r.p, r.count, r.t, MPI_COMM_WORLD, &req));
        wait(&req);
        for (int q = 0; q < size; q++)
            expect(&r, q, v(q, rank, 4), "ialltoall");
        holes(&r, "ialltoall");

        /* Ialltoallv: the same blocks, displacements in extents, reversed order in memory */
        int cnt[64], dsp[64];
        for (int q = 0; q < size; q++) {
            cnt[q] = r.count;
            dsp[q] = (size - 1 - q) * (odd() ? 1 : K);
        }
        for (int i = 0; i < r.n; i++)
            r.p[i] = GAP;
        for (int q = 0; q < size; q++)
            set(inplace ? &r : &s, size - 1 - q, v(rank, q, 5));
        MPI_OK(MPI_Ialltoallv(inplace ? MPI_IN_PLACE : (void *)s.p, cnt, dsp, s.t, r.p, cnt, dsp, r.t, MPI_COMM_WORLD, &req));
        wait(&req);
        for (int q = 0; q < size; q++)
            expect(&r, size - 1 - q, v(q, rank, 5), "ialltoallv");
        holes(&r, "ialltoallv");
        free(s.p), free(r.p);
    }

#ifndef NO_DERIVED_REDUCTIONS
    /* Reductions: MPI_SUM over blocks of K ints */
    for (int inplace = 0; inplace < 2; inplace++) {
        buf_t s = mk(size), r = mk(inplace ? size : 1);
        buf_t *in = inplace ? &r : &s;
        for (int q = 0; q < size; q++)
            set(in, q, rank * 7 + q);
        MPI_OK(MPI_Ireduce_scatter_block(inplace ? MPI_IN_PLACE : (void *)s.p, r.p, r.count, r.t, MPI_SUM, MPI_COMM_WORLD, &req));
        wait(&req);
        int sum = 0;
        for (int q = 0; q < size; q++)
            sum += q * 7 + rank;
        for (int k = 0; k < K; k++)
            CHECK(*at(&r, 0, k) == sum + size * k, "ireduce_scatter_block [%d] = %d, expected %d", k, *at(&r, 0, k), sum + size * k);
        holes(&r, "ireduce_scatter_block");
        free(s.p), free(r.p);

        for (int ex = 0; ex < 2; ex++) {
            s = mk(1), r = mk(1);
            in = inplace ? &r : &s;
            set(in, 0, rank * 10);
            if (ex)
                MPI_OK(MPI_Iexscan(inplace ? MPI_IN_PLACE : (void *)s.p, r.p, r.count, r.t, MPI_SUM, MPI_COMM_WORLD, &req));
            else
                MPI_OK(MPI_Iscan(inplace ? MPI_IN_PLACE : (void *)s.p, r.p, r.count, r.t, MPI_SUM, MPI_COMM_WORLD, &req));
            wait(&req);
            int upto = ex ? rank - 1 : rank, tot = 0;
            for (int q = 0; q <= upto; q++)
                tot += q * 10;
            if (!(ex && rank == 0))
                for (int k = 0; k < K; k++)
                    CHECK(*at(&r, 0, k) == tot + (upto + 1) * k, "%s in place %d: [%d] = %d, expected %d", ex ? "iexscan" : "iscan", inplace, k, *at(&r, 0, k), tot + (upto + 1) * k);
            holes(&r, ex ? "iexscan" : "iscan");
            free(s.p), free(r.p);
        }
    }

#endif

    /* Non-commutative user op: rank order must hold */
    {
        MPI_Op op;
        MPI_Datatype pair;
        MPI_OK(MPI_Type_contiguous(2, MPI_LONG, &pair));
        MPI_OK(MPI_Type_commit(&pair));
        MPI_OK(MPI_Op_create(compose, 0, &op));
        long in[2 * 64], out[2], e[2];
        for (int q = 0; q < size; q++)
            fmap(rank * 10 + q, &in[2 * q]);
        for (int ex = 0; ex < 2; ex++) {
            long mine[2];
            fmap(rank, mine);
            out[0] = out[1] = -1;
            if (ex)
                MPI_OK(MPI_Iexscan(mine, out, 1, pair, op, MPI_COMM_WORLD, &req));
            else
                MPI_OK(MPI_Iscan(mine, out, 1, pair, op, MPI_COMM_WORLD, &req));
            wait(&req);
            compose_ranks(0, ex ? rank - 1 : rank, e);
            if (!(ex && rank == 0))
                CHECK(out[0] == e[0] && out[1] == e[1], "%s with a non-commutative op: (%ld, %ld), expected (%ld, %ld)", ex ? "iexscan" : "iscan", out[0], out[1], e[0], e[1]);
        }
        MPI_OK(MPI_Ireduce_scatter_block(in, out, 1, pair, op, MPI_COMM_WORLD, &req));
        wait(&req);
        e[0] = 1, e[1] = 0;
        for (int q = 0; q < size; q++) {
            long f[2];
            int one = 1;
            fmap(q * 10 + rank, f);
            compose(e, f, &one, NULL);
            e[0] = f[0], e[1] = f[1];
        }
        CHECK(out[0] == e[0] && out[1] == e[1], "ireduce_scatter_block with a non-commutative op: (%ld, %ld), expected (%ld, %ld)", out[0], out[1], e[0], e[1]);
        MPI_OK(MPI_Op_free(&op));
        MPI_OK(MPI_Type_free(&pair));
    }

    /* Persistent: Gather_init and Alltoall_init, 3 starts, data changed in between */
    {
        buf_t s = mk(1), r = mk(size), s2 = mk(size), r2 = mk(size);
        MPI_Request pr[2];
        MPI_OK(MPI_Gather_init(s.p, s.count, s.t, r.p, r.count, r.t, size - 1, MPI_COMM_WORLD, MPI_INFO_NULL, &pr[0]));
        MPI_OK(MPI_Alltoall_init(s2.p, s2.count, s2.t, r2.p, r2.count, r2.t, MPI_COMM_WORLD, MPI_INFO_NULL, &pr[1]));
        for (int it = 0; it < 3; it++) {
            set(&s, 0, v(rank, it, 6));
            for (int q = 0; q < size; q++)
                set(&s2, q, v(rank, q, 7 + it));
            MPI_OK(MPI_Startall(2, pr));
            MPI_OK(MPI_Waitall(2, pr, MPI_STATUSES_IGNORE));
            if (rank == size - 1)
                for (int q = 0; q < size; q++)
                    expect(&r, q, v(q, it, 6), "gather_init");
            for (int q = 0; q < size; q++)
                expect(&r2, q, v(q, rank, 7 + it), "alltoall_init");
            holes(&r, "gather_init");
            holes(&r2, "alltoall_init");
        }
        MPI_OK(MPI_Request_free(&pr[0]));
        MPI_OK(MPI_Request_free(&pr[1]));
        free(s.p), free(r.p), free(s2.p), free(r2.p);
    }

    MPI_OK(MPI_Type_free(&strided));
    MPI_OK(MPI_Finalize());
    if (rank == 0)
        printf("coll_nbc_mixed_types: OK\n");
    return 0;
}
