/* oxmpi-test: ranks=2,3,5,8 timeout=90 */
/* oxmpi-test: env=OXMPI_BCAST_ALGORITHM=flat,OXMPI_REDUCE_ALGORITHM=flat,OXMPI_ALLREDUCE_ALGORITHM=flat env=- */
/* The flat small-message collectives (oxmpi coll/flat.rs; forced by the first env= line, the
   automatic choice for these sizes by the second): MPI_Reduce to every root and MPI_Allreduce
   with a non-commutative op (affine maps mod 251 composed in rank order: a0 op a1 op ... ),
   MPI_Bcast from every root at 1..2032 bytes, back to back so that both record parities are
   reused many times, MPI_IN_PLACE at the root; and mismatched counts: MPI_ERR_TRUNCATE at the
   ranks that read a message of another size (the root of a reduce, the non-roots of a bcast,
   every rank of an allreduce), after which the communicator still works. */
#include "oxtest.h"

static int rank, size;

/* Element: the map x -> a x + b (mod 251); in op inout = in after inout, (in op io)(x) =
   in.a * (io.a x + io.b) + in.b: associative, not commutative. */
typedef struct { int a, b; } aff;

static void aff_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    aff *p = in, *q = inout;
    for (int i = 0; i < *len; i++) {
        aff r = { (p[i].a * q[i].a) % 251, (p[i].a * q[i].b + p[i].b) % 251 };
        q[i] = r;
    }
}

static aff elem(int r, int i) { aff e = { (r * 7 + i * 3 + 2) % 250 + 1, (r * 11 + i * 5 + 1) % 251 }; return e; }

/* a0 op a1 op ... op a(n-1) for element i */
static aff expected(int i)
{
    aff acc = elem(size - 1, i);
    for (int r = size - 2; r >= 0; r--) {
        aff p = elem(r, i);
        int len = 1;
        aff_op(&p, &acc, &len, NULL);
    }
    return acc;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Datatype afft;
    MPI_Op op;
    MPI_OK(MPI_Type_contiguous(2, MPI_INT, &afft));
    MPI_OK(MPI_Type_commit(&afft));
    MPI_OK(MPI_Op_create(aff_op, 0, &op));

    enum { MAXE = 254 }; /* 254 * 8 = 2032 bytes: the largest flat payload */
    aff send[MAXE], recv[MAXE];
    int counts[] = { 1, 3, 64, MAXE };
    for (int rep = 0; rep < 3; rep++)
        for (int ci = 0; ci < 4; ci++) {
            int n = counts[ci];
            for (int i = 0; i < n; i++)
                send[i] = elem(rank, i);
            for (int root = 0; root < size; root++) {
                memset(recv, 0xff, sizeof recv);
                int in_place = rep == 1 && rank == root;
                if (in_place)
                    memcpy(recv, send, n * sizeof(aff));
                MPI_OK(MPI_Reduce(in_place ? MPI_IN_PLACE : send, recv, n, afft, op, root, MPI_COMM_WORLD));
                if (rank == root)
                    for (int i = 0; i < n; i++) {
                        aff e = expected(i);
                        CHECK(recv[i].a == e.a && recv[i].b == e.b, "reduce n=%d root=%d [%d] = (%d,%d), expected (%d,%d)", n, root, i, recv[i].a, recv[i].b, e.a, e.b);
                    }
            }
            memset(recv, 0xff, sizeof recv);
            if (rep == 2) {
                memcpy(recv, send, n * sizeof(aff));
                MPI_OK(MPI_Allreduce(MPI_IN_PLACE, recv, n, afft, op, MPI_COMM_WORLD));
            } else {
                MPI_OK(MPI_Allreduce(send, recv, n, afft, op, MPI_COMM_WORLD));
            }
            for (int i = 0; i < n; i++) {
                aff e = expected(i);
                CHECK(recv[i].a == e.a && recv[i].b == e.b, "allreduce n=%d [%d] = (%d,%d), expected (%d,%d)", n, i, recv[i].a, recv[i].b, e.a, e.b);
            }
        }

    /* Bcast from every root, sizes 1..2032 bytes */
    unsigned char buf[2032];
    int sizes[] = { 1, 8, 48, 49, 1000, 2032 };
    for (int si = 0; si < 6; si++)
        for (int root = 0; root < size; root++) {
            int len = sizes[si];
            for (int i = 0; i < len; i++)
                buf[i] = rank == root ? (unsigned char)(i * 13 + root + si) : 0;
            MPI_OK(MPI_Bcast(buf, len, MPI_BYTE, root, MPI_COMM_WORLD));
            for (int i = 0; i < len; i++)
                CHECK(buf[i] == (unsigned char)(i * 13 + root + si), "bcast len=%d root=%d byte %d = %d", len, root, i, buf[i]);
        }

    /* Mismatched counts: the readers of the odd message get MPI_ERR_TRUNCATE. Only where flat is
       forced: the tree algorithms stop at the first rank that sees the error. */
    const char *forced = getenv("OXMPI_REDUCE_ALGORITHM");
    if (!forced || strcmp(forced, "flat")) {
        if (rank == 0)
            printf("coll_flat: ok\n");
        MPI_Finalize();
        return 0;
    }
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int odd = size - 1, cls, rc;
    for (int i = 0; i < 8; i++)
        send[i] = elem(rank, i);
    rc = MPI_Reduce(send, recv, rank == odd ? 5 : 4, afft, op, 0, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    if (rank == 0)
        CHECK(cls == MPI_ERR_TRUNCATE, "reduce with one rank's count off: root got class %d, expected MPI_ERR_TRUNCATE", cls);
    else
        CHECK(rc == MPI_SUCCESS, "reduce with one rank's count off: non-root got class %d", cls);

    rc = MPI_Bcast(buf, rank == 0 ? 16 : 8, MPI_BYTE, 0, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    if (rank == 0)
        CHECK(rc == MPI_SUCCESS, "bcast sending more: root got class %d", cls);
    else
        CHECK(cls == MPI_ERR_TRUNCATE, "bcast of 16 bytes into 8: got class %d, expected MPI_ERR_TRUNCATE", cls);

    rc = MPI_Allreduce(send, recv, rank == odd ? 3 : 2, afft, op, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TRUNCATE, "allreduce with one rank's count off: got class %d, expected MPI_ERR_TRUNCATE", cls);

    /* Still correct after the errors. */
    MPI_OK(MPI_Allreduce(send, recv, 8, afft, op, MPI_COMM_WORLD));
    for (int i = 0; i < 8; i++) {
        aff e = expected(i);
        CHECK(recv[i].a == e.a && recv[i].b == e.b, "allreduce after the errors [%d] = (%d,%d), expected (%d,%d)", i, recv[i].a, recv[i].b, e.a, e.b);
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    MPI_OK(MPI_Op_free(&op));
    MPI_OK(MPI_Type_free(&afft));
    if (rank == 0)
        printf("coll_flat: ok\n");
    MPI_Finalize();
    return 0;
}
