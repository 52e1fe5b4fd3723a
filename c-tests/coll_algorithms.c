/* oxmpi-test: ranks=1,2,3,5,8 timeout=90 */
/* oxmpi-test: env=OXMPI_BCAST_ALGORITHM=binomial,OXMPI_REDUCE_ALGORITHM=binomial,OXMPI_ALLREDUCE_ALGORITHM=recursive_doubling */
/* oxmpi-test: env=OXMPI_BCAST_ALGORITHM=scatter_allgather,OXMPI_REDUCE_ALGORITHM=rabenseifner,OXMPI_ALLREDUCE_ALGORITHM=rabenseifner */
/* oxmpi-test: env=OXMPI_BCAST_ALGORITHM=pipeline,OXMPI_ALLREDUCE_ALGORITHM=ring env=OXMPI_ALLREDUCE_ALGORITHM=direct env=OXMPI_BCAST_ALGORITHM=shared env=- */
/* oxmpi-test: env=OXMPI_BCAST_ALGORITHM=shm_large,OXMPI_ALLREDUCE_ALGORITHM=shm_large,OXMPI_ALLTOALL_ALGORITHM=shared env=OXMPI_ALLREDUCE_ALGORITHM=slices */
/* Every algorithm of MPI_Bcast, MPI_Reduce and MPI_Allreduce (forced per run by the env= lines
   above; env=- is the automatic choice): counts 1, 7, 1000, 100000 and 300001 (odd: uneven
   blocks), every root (three for the large counts), with and without MPI_IN_PLACE, MPI_SUM on int and on exact-valued doubles,
   MPI_MAX on a vector type (gaps untouched), at rank counts that are and are not powers of two. */
#include "oxcoll.h"

static const int counts[] = {1, 7, 1000, 100000, 300001};
#define NCOUNTS 5

static int ival(int r, long i) { return (r + 1) * (int)(i % 1013) - 5 * r; }
static double dval(int r, long i) { return (double)((r + 2) * (int)(i % 977)) * 0.5 - r; }
static int mval(int r, long i) { return (int)((i * 7 + (long)r * 13) % 1001); }

static void bcast_case(int n, int root)
{
    int *b = oxt_malloc(sizeof(int) * (size_t)n);
    for (long i = 0; i < n; i++)
        b[i] = oxc_rank == root ? ival(root, i) : -1;
    MPI_OK(MPI_Bcast(b, n, MPI_INT, root, MPI_COMM_WORLD));
    for (long i = 0; i < n; i++)
        CHECK(b[i] == ival(root, i), "bcast n=%d root=%d: [%ld] = %d, expected %d", n, root, i, b[i], ival(root, i));
    free(b);
}

/* root < 0: MPI_Allreduce. */
static void sum_case(int n, int root, int inplace)
{
    int *si = oxt_malloc(sizeof(int) * (size_t)n), *ri = oxt_malloc(sizeof(int) * (size_t)n);
    double *sd = oxt_malloc(sizeof(double) * (size_t)n), *rd = oxt_malloc(sizeof(double) * (size_t)n);
    int sig = root < 0 || root == oxc_rank;
    /* MPICH 4.0.2 crashes on MPI_IN_PLACE at a non-zero root for large messages (see oxcoll.h). */
    if (inplace && root > 0 && oxc_is_mpich())
        inplace = 0;
    for (long i = 0; i < n; i++) {
        si[i] = ival(oxc_rank, i);
        sd[i] = dval(oxc_rank, i);
        ri[i] = inplace && sig ? si[i] : -7;
        rd[i] = inplace && sig ? sd[i] : -7;
    }
    int use_inplace = inplace && sig;
    MPI_OK(oxc_call(use_inplace ? MPI_IN_PLACE : si, ri, n, MPI_INT, MPI_SUM, root));
    MPI_OK(oxc_call(use_inplace ? MPI_IN_PLACE : sd, rd, n, MPI_DOUBLE, MPI_SUM, root));
    for (long i = 0; i < n; i++) {
        int ei = 0;
        double ed = 0;
        for (int q = 0; q < oxc_size; q++) {
            ei += ival(q, i);
            ed += dval(q, i);
        }
        if (sig) {
            CHECK(ri[i] == ei, "int sum n=%d root=%d inplace=%d: [%ld] = %d, expected %d", n, root, inplace, i, ri[i], ei);
            CHECK(rd[i] == ed, "double sum n=%d root=%d inplace=%d: [%ld] = %g, expected %g", n, root, inplace, i, rd[i], ed);
        } else {
            CHECK(ri[i] == -7 && rd[i] == -7, "reduce n=%d root=%d: non-root receive buffer written at %ld", n, root, i);
        }
        if (!use_inplace)
            CHECK(si[i] == ival(oxc_rank, i) && sd[i] == dval(oxc_rank, i), "n=%d: send buffer changed at %ld", n, i);
    }
    free(si);
    free(ri);
    free(sd);
    free(rd);
}

/* MPI_MAX on a vector of 2 ints with stride 2 (extent 3 ints: the middle one is a gap). */
static void max_vector_case(MPI_Datatype vec, int n, int root, int inplace)
{
    size_t len = (size_t)n * 3;
    int *s = oxt_malloc(sizeof(int) * len), *r = oxt_malloc(sizeof(int) * len);
    int sig = root < 0 || root == oxc_rank;
    for (size_t k = 0; k < len; k++) {
        s[k] = k % 3 == 1 ? -99 : mval(oxc_rank, (long)k);
        r[k] = inplace && sig ? s[k] : -7;
    }
    MPI_OK(oxc_call(inplace && sig ? MPI_IN_PLACE : s, r, n, vec, MPI_MAX, root));
    for (size_t k = 0; k < len; k++) {
        int e = k % 3 == 1 ? (inplace && sig ? -99 : -7) : mval(0, (long)k);
        for (int q = 1; q < oxc_size && k % 3 != 1; q++)
            e = mval(q, (long)k) > e ? mval(q, (long)k) : e;
        if (!sig)
            e = -7;
        CHECK(r[k] == e, "max vector n=%d root=%d inplace=%d: int %zu = %d, expected %d", n, root, inplace, k, r[k], e);
    }
    free(s);
    free(r);
}

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &oxc_rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &oxc_size));
    MPI_Datatype vec;
    MPI_OK(MPI_Type_vector(2, 1, 2, MPI_INT, &vec));
    MPI_OK(MPI_Type_commit(&vec));
    for (int c = 0; c < NCOUNTS; c++) {
        int n = counts[c];
        for (int root = 0; root < oxc_size; root++) {
            /* Large counts: the first, a middle and the last root only, to keep runs short. */
            if (n >= 100000 && root != 0 && root != oxc_size / 2 && root != oxc_size - 1)
                continue;
            bcast_case(n, root);
            for (int inplace = 0; inplace < 2; inplace++)
                sum_case(n, root, inplace);
        }
        for (int inplace = 0; inplace < 2; inplace++) {
            sum_case(n, -1, inplace);
            /* MPICH 4.0 refuses predefined ops on derived datatypes (MPI_ERR_OP); oxmpi computes
               them when all basic elements are one predefined type. */
            if (!oxc_is_mpich()) {
                max_vector_case(vec, n, -1, inplace);
                max_vector_case(vec, n, oxc_size - 1, inplace);
            }
        }
    }
    MPI_OK(MPI_Type_free(&vec));
    MPI_OK(MPI_Finalize());
    return 0;
}
