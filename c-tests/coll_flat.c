/* oxmpi-test: ranks=2,3,5,8 timeout=120 */
/* oxmpi-test: env=- env=OXMPI_BCAST_ALGORITHM=flat,OXMPI_ALLREDUCE_ALGORITHM=flat,OXMPI_REDUCE_ALGORITHM=flat,OXMPI_ALLTOALL_ALGORITHM=flat,OXMPI_BARRIER_ALGORITHM=flat */
/* Small MPI_Bcast, MPI_Reduce, MPI_Allreduce, MPI_Alltoall and MPI_Barrier, which oxmpi runs
   with its `flat` algorithm (coll/flat.rs: each rank publishes a record of its own in the
   communicator's shared memory, two per rank by episode parity) where they fit 2032 bytes per
   rank, checked where that can go wrong:
   - sizes around the 2032-byte limit, from every root, back to back (a root runs ahead of
     its receivers and must not rewrite a record they have not read);
   - a non-commutative op (affine maps composed in rank order) to every root and in an
     allreduce, with MPI_IN_PLACE;
   - rooted collectives whose publishers change from call to call, interleaved;
   - a split communicator's halves at once;
   - with the algorithm forced (oxmpi only): mismatched sizes give MPI_ERR_TRUNCATE (at the
     receivers of a bcast, at the root of a reduce, everywhere for allreduce), after which a
     correct call still works.
   Standard MPI; also run with MPICH. */
#include "oxtest.h"

#define P 1000003LL

/* An affine map x -> a x + b (mod P); the op composes "in, then inout". */
typedef struct {
    long long a, b;
} aff;

static aff compose(aff u, aff v)
{
    aff w = {v.a * u.a % P, (v.a * u.b + v.b) % P};
    return w;
}

static void aff_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    aff *u = in, *v = inout;
    for (int i = 0; i < *len; i++)
        v[i] = compose(u[i], v[i]);
}

static aff aff_of(int r, int i, int salt)
{
    aff m = {1 + (r * 31 + i * 7 + salt) % 97, (r * 13 + i + salt * 5) % 101};
    return m;
}

static MPI_Datatype aff_t;
static MPI_Op aff_o;

static unsigned char pat(int root, int size, int i, int salt)
{
    return (unsigned char)(root * 37 + size * 11 + i * 3 + salt);
}

static void bcasts(MPI_Comm c, int salt)
{
    static const int sizes[] = {1, 7, 64, 100, 1000, 2031, 2032, 2033, 4000};
    int rank, size;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    unsigned char *b = oxt_malloc(4000);
    for (unsigned t = 0; t < sizeof sizes / sizeof *sizes; t++)
        for (int root = 0; root < size; root++)
            for (int rep = 0; rep < 3; rep++) {
                int n = sizes[t], s = salt + rep;
                for (int i = 0; i < n; i++)
                    b[i] = rank == root ? pat(root, n, i, s) : 0xee;
                MPI_OK(MPI_Bcast(b, n, MPI_BYTE, root, c));
                for (int i = 0; i < n; i++)
                    CHECK(b[i] == pat(root, n, i, s), "bcast %d bytes from %d rep %d: byte %d is %d", n, root, rep, i, b[i]);
            }
    /* a root far ahead of its receivers */
    for (int k = 0; k < 300; k++) {
        long v = rank == 0 ? k * 7L + salt : -1;
        MPI_OK(MPI_Bcast(&v, 1, MPI_LONG, 0, c));
        CHECK(v == k * 7L + salt, "bcast %d: %ld", k, v);
    }
    free(b);
}

static void reductions(MPI_Comm c, int salt)
{
    static const int counts[] = {1, 10, 127, 128, 200};
    int rank, size;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    aff *s = oxt_malloc(200 * sizeof(aff)), *r = oxt_malloc(200 * sizeof(aff));
    for (unsigned t = 0; t < sizeof counts / sizeof *counts; t++) {
        int n = counts[t];
        for (int root = -1; root < size; root++)
            for (int inplace = 0; inplace < 2; inplace++) {
                int sig = root < 0 || rank == root;
                for (int i = 0; i < n; i++) {
                    s[i] = aff_of(rank, i, salt + root);
                    r[i].a = r[i].b = -1;
                }
                const void *sb = s;
                if (inplace && sig) {
                    memcpy(r, s, n * sizeof(aff));
                    sb = MPI_IN_PLACE;
                }
                if (root < 0)
                    MPI_OK(MPI_Allreduce(sb, r, n, aff_t, aff_o, c));
                else
                    MPI_OK(MPI_Reduce(sb, r, n, aff_t, aff_o, root, c));
                if (!sig)
                    continue;
                for (int i = 0; i < n; i++) {
                    aff w = aff_of(0, i, salt + root);
                    for (int q = 1; q < size; q++)
                        w = compose(w, aff_of(q, i, salt + root));
                    CHECK(r[i].a == w.a && r[i].b == w.b, "count %d root %d inplace %d: [%d] = (%lld,%lld), expected (%lld,%lld)", n, root,
                          inplace, i, r[i].a, r[i].b, w.a, w.b);
                }
            }
    }
    free(s);
    free(r);
}

static void alltoalls(MPI_Comm c, int salt)
{
    int rank, size;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    int blocks[] = {1, 8, 2032 / size, 2032 / size + 1, 300};
    unsigned char *s = oxt_malloc(2100 * size), *r = oxt_malloc(2100 * size);
    for (unsigned t = 0; t < sizeof blocks / sizeof *blocks; t++)
        for (int rep = 0; rep < 3; rep++) {
            int b = blocks[t];
            for (int q = 0; q < size; q++)
                for (int i = 0; i < b; i++) {
                    s[q * b + i] = (unsigned char)(rank * 17 + q * 5 + i + salt + rep);
                    r[q * b + i] = 0xee;
                }
            MPI_OK(MPI_Alltoall(s, b, MPI_BYTE, r, b, MPI_BYTE, c));
            for (int q = 0; q < size; q++)
                for (int i = 0; i < b; i++)
                    CHECK(r[q * b + i] == (unsigned char)(q * 17 + rank * 5 + i + salt + rep), "alltoall block %d from %d byte %d", b, q, i);
        }
    free(s);
    free(r);
}

/* Rooted collectives whose publishers change every call, with barriers and allreduces. */
static void mixed(MPI_Comm c, int salt)
{
    int rank, size;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    for (int k = 0; k < 200; k++) {
        int root = k % size;
        long v = rank == root ? k + salt : -1, sum = -1;
        MPI_OK(MPI_Bcast(&v, 1, MPI_LONG, root, c));
        CHECK(v == k + salt, "mixed bcast %d: %ld", k, v);
        long mine = rank + k;
        MPI_OK(MPI_Reduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, size - 1 - root, c));
        if (rank == size - 1 - root)
            CHECK(sum == (long)size * (size - 1) / 2 + (long)size * k, "mixed reduce %d: %ld", k, sum);
        if (k % 5 == 0)
            MPI_OK(MPI_Barrier(c));
        if (k % 7 == 0) {
            MPI_OK(MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_MAX, c));
            CHECK(sum == size - 1 + k, "mixed allreduce %d: %ld", k, sum);
        }
    }
}

/* Whether oxmpi runs these collectives with `flat` for sure: forced, and every rank on one node
   (over several nodes the message-based algorithms run, where a rank that fails on a truncated
   message leaves the ranks below it in the tree waiting). */
static int forced_flat(void)
{
    const char *v = getenv("OXMPI_BCAST_ALGORITHM");
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0, size, node_size;
    MPI_Get_library_version(lib, &len);
    MPI_Comm node;
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    MPI_Comm_size(node, &node_size);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_OK(MPI_Comm_free(&node));
    return v && strcmp(v, "flat") == 0 && strstr(lib, "oxmpi") != NULL && node_size == size;
}

static void truncations(MPI_Comm c)
{
    int rank, size;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    MPI_OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
    unsigned char b[64];
    for (int root = 0; root < size; root++) {
        memset(b, root, sizeof b);
        int rc = MPI_Bcast(b, rank == root ? 64 : 32, MPI_BYTE, root, c);
        CHECK_CLASS(rc, rank == root ? MPI_SUCCESS : MPI_ERR_TRUNCATE);
        memset(b, rank == root ? 9 : 0, sizeof b);
        MPI_OK(MPI_Bcast(b, 64, MPI_BYTE, root, c));
        for (int i = 0; i < 64; i++)
            CHECK(b[i] == 9, "bcast after the truncation: byte %d is %d", i, b[i]);
    }
    long s[2] = {rank, rank}, r[2] = {0, 0};
    for (int root = 0; root < size; root++) {
        int rc = MPI_Reduce(s, r, rank == root ? 1 : 2, MPI_LONG, MPI_SUM, root, c);
        CHECK_CLASS(rc, rank == root ? MPI_ERR_TRUNCATE : MPI_SUCCESS);
        MPI_OK(MPI_Reduce(s, r, 2, MPI_LONG, MPI_SUM, root, c));
        if (rank == root)
            CHECK(r[0] == (long)size * (size - 1) / 2 && r[1] == r[0], "reduce after the truncation: %ld %ld", r[0], r[1]);
    }
    CHECK_CLASS(MPI_Allreduce(s, r, rank == 0 ? 2 : 1, MPI_LONG, MPI_SUM, c), MPI_ERR_TRUNCATE);
    MPI_OK(MPI_Allreduce(s, r, 2, MPI_LONG, MPI_SUM, c));
    CHECK(r[0] == (long)size * (size - 1) / 2 && r[1] == r[0], "allreduce after the truncation: %ld %ld", r[0], r[1]);
    MPI_OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_ARE_FATAL));
}

static void all(MPI_Comm c, int salt)
{
    bcasts(c, salt);
    reductions(c, salt);
    alltoalls(c, salt);
    mixed(c, salt);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_OK(MPI_Type_contiguous(2, MPI_LONG_LONG, &aff_t));
    MPI_OK(MPI_Type_commit(&aff_t));
    MPI_OK(MPI_Op_create(aff_op, 0, &aff_o));

    all(MPI_COMM_WORLD, 1);
    if (forced_flat())
        truncations(MPI_COMM_WORLD);

    /* two halves at once (same context id, disjoint groups) */
    MPI_Comm half;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half));
    all(half, 2);
    MPI_OK(MPI_Comm_free(&half));

    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Op_free(&aff_o));
    MPI_OK(MPI_Type_free(&aff_t));
    MPI_Finalize();
    return 0;
}
