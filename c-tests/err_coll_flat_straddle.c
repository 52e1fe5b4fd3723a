/* oxmpi-test: ranks=2,3,4 timeout=120 */
/* oxmpi-test: env=OXMPI_BCAST_ALGORITHM=flat,OXMPI_REDUCE_ALGORITHM=flat,OXMPI_ALLREDUCE_ALGORITHM=flat,OXMPI_ALLTOALL_ALGORITHM=flat */
/* Erroneous collectives whose ranks pass byte counts on both sides of the largest message of
   oxmpi's `flat` algorithms (coll/flat.rs, 2032 bytes; forced here so that it runs at every rank
   count): rank 0 passes one size, the others another. Under MPI_ERRORS_RETURN they must fail
   with MPI_ERR_TRUNCATE (the ranks that can tell; for a broadcast the receivers), not hang with
   some ranks in `flat` and the others in another algorithm. After each failure the
   communicator still runs a correct collective. oxmpi-specific (which ranks see the error). */
#include "oxtest.h"
#include <stdlib.h>
#include <string.h>

#define SMALL 1000
#define BIG 4000

static int rank, size;

static void expect_truncate(int rc, const char *what, int must)
{
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_OK(MPI_Error_class(rc, &cls));
    if (must)
        CHECK(cls == MPI_ERR_TRUNCATE, "%s: rank %d got class %d, expected MPI_ERR_TRUNCATE", what, rank, cls);
    else
        CHECK(cls == MPI_SUCCESS || cls == MPI_ERR_TRUNCATE, "%s: rank %d got class %d", what, rank, cls);
}

/* A correct small allreduce and bcast on c: the flat episodes are still in step. */
static void still_works(MPI_Comm c, int k)
{
    long v = rank + k, sum = -1;
    MPI_OK(MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, c));
    CHECK(sum == (long)size * (size - 1) / 2 + (long)size * k, "after case %d: sum %ld", k, sum);
    int b = rank == size - 1 ? 1000 + k : -1;
    MPI_OK(MPI_Bcast(&b, 1, MPI_INT, size - 1, c));
    CHECK(b == 1000 + k, "after case %d: bcast got %d", k, b);
}

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    char *s = calloc((size_t)size * BIG, 1), *r = calloc((size_t)size * BIG, 1);
    CHECK(s && r, "out of memory");
    for (int k = 0; k < 8; k++) {
        MPI_Comm c;
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        MPI_OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
        int rank0_big = k % 2 == 0; /* which side of the limit rank 0 is on */
        int mine = (rank == 0) == rank0_big ? BIG : SMALL;
        int rc;
        switch (k / 2) {
        case 0: /* bcast from rank 0: the receivers see the root's size */
            rc = MPI_Bcast(s, mine, MPI_CHAR, 0, c);
            expect_truncate(rc, "bcast", rank != 0);
            break;
        case 1: /* allreduce: every rank reads every contribution */
            rc = MPI_Allreduce(s, r, mine / 8, MPI_DOUBLE, MPI_SUM, c);
            expect_truncate(rc, "allreduce", 1);
            break;
        case 2: /* alltoall: blocks of mine / size bytes, rows of about mine bytes */
            rc = MPI_Alltoall(s, mine / size, MPI_CHAR, r, mine / size, MPI_CHAR, c);
            expect_truncate(rc, "alltoall", 1);
            break;
        case 3: /* reduce to rank 0: the root, and the ranks above the limit, see it */
            rc = MPI_Reduce(s, r, mine / 8, MPI_DOUBLE, MPI_SUM, 0, c);
            expect_truncate(rc, "reduce", rank == 0 || mine == BIG);
            break;
        }
        still_works(c, k);
        MPI_OK(MPI_Comm_free(&c));
    }
    free(s);
    free(r);
    if (rank == 0)
        printf("ok\n");
    MPI_Finalize();
    return 0;
}
