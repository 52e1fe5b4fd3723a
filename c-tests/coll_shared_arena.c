/* oxmpi-test: ranks=1,2,3,5,8,16 timeout=90 */
/* oxmpi-test: env=- env=OXMPI_ALLREDUCE_ALGORITHM=shared env=OXMPI_FIBERS=0 env=OXMPI_ALLREDUCE_ALGORITHM=shm_large */
/* Small blocking MPI_Allreduce and MPI_Barrier, which in threads mode meet in the
   communicator's shared arena (oxmpi coll/arena.rs), checked where that can go wrong:
   - back-to-back episodes with results of alternating parity, sizes around the 4 KiB switch,
     MPI_IN_PLACE, a non-commutative user op (2x2 integer matrix products, rank order);
   - the two halves of MPI_Comm_split (same context id, disjoint groups: two arenas) at once;
   - after an MPI_Iallreduce on a communicator, blocking allreduces there while the nonblocking
     one is still pending on some ranks (completed in different places per rank);
   - communicators created and freed in a loop (arenas registered and dropped).
   Standard MPI; also run with MPICH. */
#include "oxtest.h"

static void matmul(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    int *a = in, *b = inout;
    for (int k = 0; k < *len; k++, a += 4, b += 4) {
        int r0 = a[0] * b[0] + a[1] * b[2], r1 = a[0] * b[1] + a[1] * b[3];
        int r2 = a[2] * b[0] + a[3] * b[2], r3 = a[2] * b[1] + a[3] * b[3];
        b[0] = r0, b[1] = r1, b[2] = r2, b[3] = r3;
    }
}

/* rank r's matrix: [[1, r+1], [0, 1]] (unipotent: products stay small and order matters with
   the lower-left entry of the next one) */
static void mat_of(int r, int i, int *m)
{
    m[0] = 1, m[1] = (r + i) % 3, m[2] = (r * 7 + i) % 2, m[3] = 1;
}

static void check_sums(MPI_Comm c, int iters, int tag)
{
    int rank, size;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    for (int i = 0; i < iters; i++) {
        long v = rank * 3 + i, s = -1;
        MPI_OK(MPI_Allreduce(&v, &s, 1, MPI_LONG, MPI_SUM, c));
        long want = 3L * size * (size - 1) / 2 + (long)size * i;
        CHECK(s == want, "[%d] iteration %d: sum %ld, expected %ld", tag, i, s, want);
        if (i % 7 == 0)
            MPI_OK(MPI_Barrier(c));
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* sizes around the switch, in place and not */
    static const int counts[] = {1, 3, 100, 511, 512, 513, 1024, 2000};
    for (unsigned t = 0; t < sizeof counts / sizeof *counts; t++) {
        int n = counts[t];
        double *s = oxt_malloc(n * sizeof(double)), *r = oxt_malloc(n * sizeof(double));
        for (int rep = 0; rep < 3; rep++) {
            for (int i = 0; i < n; i++)
                s[i] = rank + i * 0.5 + rep;
            int inplace = (rep == 1);
            if (inplace) {
                for (int i = 0; i < n; i++)
                    r[i] = s[i];
                MPI_OK(MPI_Allreduce(MPI_IN_PLACE, r, n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
            } else {
                MPI_OK(MPI_Allreduce(s, r, n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
            }
            for (int i = 0; i < n; i++)
                CHECK(r[i] == size - 1 + i * 0.5 + rep, "count %d rep %d: r[%d] = %g", n, rep, i, r[i]);
        }
        free(s);
        free(r);
    }

    /* non-commutative op: the product in rank order */
    MPI_Op op;
    MPI_Datatype mat;
    MPI_OK(MPI_Type_contiguous(4, MPI_INT, &mat));
    MPI_OK(MPI_Type_commit(&mat));
    MPI_OK(MPI_Op_create(matmul, 0, &op));
    for (int i = 0; i < 20; i++) {
        int m[4], got[4], want[4] = {1, 0, 0, 1}, x[4];
        mat_of(rank, i, m);
        MPI_OK(MPI_Allreduce(m, got, 1, mat, op, MPI_COMM_WORLD));
        for (int q = 0; q < size; q++) { /* want = want * M_q: M_0 M_1 ... M_{n-1} */
            int len = 1, c[4];
            mat_of(q, i, x);
            for (int e = 0; e < 4; e++)
                c[e] = x[e];
            matmul(want, c, &len, NULL); /* c = want * x */
            for (int e = 0; e < 4; e++)
                want[e] = c[e];
        }
        for (int e = 0; e < 4; e++)
            CHECK(got[e] == want[e], "matrix product %d: entry %d is %d, expected %d", i, e, got[e], want[e]);
    }
    MPI_OK(MPI_Op_free(&op));
    MPI_OK(MPI_Type_free(&mat));

    /* two halves at once */
    MPI_Comm half;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half));
    check_sums(half, 200, 1);
    MPI_OK(MPI_Comm_free(&half));

    /* an Iallreduce pending while blocking ones run: ranks complete it at different points */
    MPI_Comm d;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    check_sums(d, 10, 2);
    int one = 1, total = 0;
    MPI_Request req;
    MPI_OK(MPI_Iallreduce(&one, &total, 1, MPI_INT, MPI_SUM, d, &req));
    if (rank % 2 == 0)
        MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    check_sums(d, 30, 3);
    if (rank % 2 == 1)
        MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(total == size, "Iallreduce gave %d", total);
    MPI_OK(MPI_Comm_free(&d));

    /* communicators come and go */
    for (int i = 0; i < 30; i++) {
        MPI_Comm e;
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &e));
        check_sums(e, 3, 4);
        MPI_OK(MPI_Comm_free(&e));
    }
    MPI_Finalize();
    return 0;
}
