/* oxmpi-test: ranks=1,2,3,4 timeout=60 mpich=skip */
/* oxmpi extension: reductions on derived datatypes whose basic elements are all one predefined
   type (MPICH 4.0 refuses predefined ops on any derived type with MPI_ERR_OP). MPI_Allreduce and
   MPI_Reduce with MPI_SUM on a vector of doubles (small and large counts, every root) and on a
   contiguous type of ints, MPI_IN_PLACE with a vector in both; gaps of the buffers stay untouched.
   A struct mixing int and double is refused with MPI_ERR_OP. */
#include "oxtest.h"
#include <stddef.h>

#define VB 3
#define VL 2
#define VS 4
#define VEXT 10 /* (VB-1)*VS+VL doubles */
#define SENT (-3.25)

typedef struct {
    int a;
    double b;
    short c;
} rec_t;

static int rank, size;
static MPI_Datatype dvec, ivec, icont, srec;

static int is_data(int j) { return (j % VEXT) % VS < VL; }

static double dval(int who, int salt, int pos) { return who * 1000.0 + salt * 10.0 + pos * 0.5; }

static void dfill(double *b, int n, int who, int salt)
{
    for (int p = 0; p < n * VEXT; p++)
        b[p] = is_data(p) ? dval(who, salt, p) : SENT;
}

/* Expected value at data position p of a SUM over all ranks of dval(r, salt, p). */
static double dsum(int salt, int p)
{
    double s = 0;
    for (int r = 0; r < size; r++)
        s += dval(r, salt, p);
    return s;
}

static void check_sum(const double *b, int n, int salt, const char *what)
{
    for (int p = 0; p < n * VEXT; p++) {
        double want = is_data(p) ? dsum(salt, p) : SENT;
        CHECK(b[p] == want, "%s: position %d is %g, expected %g", what, p, b[p], want);
    }
}

static void vector_reductions(int n, int salt)
{
    double *s = oxt_malloc(sizeof(double) * (size_t)n * VEXT), *r = oxt_malloc(sizeof(double) * (size_t)n * VEXT);
    dfill(s, n, rank, salt);
    for (int p = 0; p < n * VEXT; p++)
        r[p] = SENT;
    MPI_OK(MPI_Allreduce(s, r, n, dvec, MPI_SUM, MPI_COMM_WORLD));
    check_sum(r, n, salt, "Allreduce vector");
    /* In place: the gaps of the buffer keep their own values. */
    dfill(r, n, rank, salt + 1);
    MPI_OK(MPI_Allreduce(MPI_IN_PLACE, r, n, dvec, MPI_SUM, MPI_COMM_WORLD));
    check_sum(r, n, salt + 1, "Allreduce vector in place");
    for (int root = 0; root < size; root++) {
        for (int p = 0; p < n * VEXT; p++)
            r[p] = SENT;
        dfill(s, n, rank, salt + 2 + root);
        if (rank == root && root % 2 == 1) {
            dfill(r, n, rank, salt + 2 + root);
            MPI_OK(MPI_Reduce(MPI_IN_PLACE, r, n, dvec, MPI_SUM, root, MPI_COMM_WORLD));
        } else {
            MPI_OK(MPI_Reduce(s, r, n, dvec, MPI_SUM, root, MPI_COMM_WORLD));
        }
        if (rank == root)
            check_sum(r, n, salt + 2 + root, "Reduce vector");
        else
            for (int p = 0; p < n * VEXT; p++)
                CHECK(r[p] == SENT, "Reduce wrote the receive buffer of non-root rank %d", rank);
    }
    free(s);
    free(r);
}

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));

    MPI_OK(MPI_Type_vector(VB, VL, VS, MPI_DOUBLE, &dvec));
    MPI_OK(MPI_Type_commit(&dvec));
    MPI_OK(MPI_Type_vector(3, 1, 2, MPI_INT, &ivec));
    MPI_OK(MPI_Type_commit(&ivec));
    MPI_OK(MPI_Type_contiguous(4, MPI_INT, &icont));
    MPI_OK(MPI_Type_commit(&icont));
    {
        int bl[3] = {1, 1, 1};
        MPI_Aint d[3] = {offsetof(rec_t, a), offsetof(rec_t, b), offsetof(rec_t, c)};
        MPI_Datatype ty[3] = {MPI_INT, MPI_DOUBLE, MPI_SHORT}, tmp;
        MPI_OK(MPI_Type_create_struct(3, bl, d, ty, &tmp));
        MPI_OK(MPI_Type_create_resized(tmp, 0, sizeof(rec_t), &srec));
        MPI_OK(MPI_Type_free(&tmp));
        MPI_OK(MPI_Type_commit(&srec));
    }

    vector_reductions(1, 1);
    vector_reductions(7, 20);
    vector_reductions(5000, 40);

    /* A contiguous type of ints: reduced as 4*count ints. */
    {
        enum { N = 300 };
        int s[N * 4], r[N * 4];
        for (int i = 0; i < N * 4; i++) {
            s[i] = rank * 7 + i;
            r[i] = -1;
        }
        long want_base = 7L * size * (size - 1) / 2;
        MPI_OK(MPI_Allreduce(s, r, N, icont, MPI_SUM, MPI_COMM_WORLD));
        for (int i = 0; i < N * 4; i++)
            CHECK(r[i] == want_base + (long)size * i, "Allreduce contiguous: int %d is %d", i, r[i]);
        for (int i = 0; i < N * 4; i++)
            r[i] = -1;
        MPI_OK(MPI_Reduce(s, r, N, icont, MPI_SUM, size - 1, MPI_COMM_WORLD));
        for (int i = 0; i < N * 4; i++)
            CHECK(r[i] == (rank == size - 1 ? want_base + (long)size * i : -1), "Reduce contiguous: int %d is %d", i, r[i]);
        memcpy(r, s, sizeof s);
        MPI_OK(MPI_Allreduce(MPI_IN_PLACE, r, N, icont, MPI_SUM, MPI_COMM_WORLD));
        for (int i = 0; i < N * 4; i++)
            CHECK(r[i] == want_base + (long)size * i, "Allreduce contiguous in place: int %d is %d", i, r[i]);
    }

    /* A struct mixing types cannot be reduced. */
    {
        rec_t a[2] = {{0}}, b[2];
        MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        CHECK_CLASS(MPI_Allreduce(a, b, 2, srec, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_OP);
        CHECK_CLASS(MPI_Reduce(a, b, 2, srec, MPI_SUM, 0, MPI_COMM_WORLD), MPI_ERR_OP);
    }

    MPI_OK(MPI_Type_free(&dvec));
    MPI_OK(MPI_Type_free(&ivec));
    MPI_OK(MPI_Type_free(&icont));
    MPI_OK(MPI_Type_free(&srec));
    MPI_OK(MPI_Finalize());
    return 0;
}
