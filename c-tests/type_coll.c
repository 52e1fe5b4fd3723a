/* oxmpi-test: ranks=1,2,3,4 timeout=60 */
/* Derived datatypes in collectives: MPI_Bcast of a vector of ints (small and large counts) and of a
   struct, from every root; gaps of the buffers stay untouched. (Reductions on derived types, an
   oxmpi extension MPICH refuses, are in type_coll_reduce.c.) */
#include "oxtest.h"
#include <stddef.h>

typedef struct {
    int a;
    double b;
    short c;
} rec_t;

static int rank, size;
static MPI_Datatype ivec, srec;

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));

    MPI_OK(MPI_Type_vector(3, 1, 2, MPI_INT, &ivec));
    MPI_OK(MPI_Type_commit(&ivec));
    {
        int bl[3] = {1, 1, 1};
        MPI_Aint d[3] = {offsetof(rec_t, a), offsetof(rec_t, b), offsetof(rec_t, c)};
        MPI_Datatype ty[3] = {MPI_INT, MPI_DOUBLE, MPI_SHORT}, tmp;
        MPI_OK(MPI_Type_create_struct(3, bl, d, ty, &tmp));
        MPI_OK(MPI_Type_create_resized(tmp, 0, sizeof(rec_t), &srec));
        MPI_OK(MPI_Type_free(&tmp));
        MPI_OK(MPI_Type_commit(&srec));
    }

    /* Bcast of a vector of ints (5 elements of extent 5 ints) and of records, from every root. */
    for (int root = 0; root < size; root++) {
        int b[5 * 5];
        for (int i = 0; i < 25; i++)
            b[i] = (i % 5) % 2 == 0 && (i % 5) < 5 ? (rank == root ? root * 100 + i : -1) : -9;
        MPI_OK(MPI_Bcast(b, 5, ivec, root, MPI_COMM_WORLD));
        for (int i = 0; i < 25; i++) {
            int want = (i % 5) % 2 == 0 ? root * 100 + i : -9;
            CHECK(b[i] == want, "Bcast vector from %d: int %d is %d, expected %d", root, i, b[i], want);
        }
        rec_t rec[7];
        memset(rec, 0x77, sizeof rec);
        if (rank == root)
            for (int i = 0; i < 7; i++) {
                rec[i].a = root + i;
                rec[i].b = root * 0.25 + i;
                rec[i].c = (short)(i - root);
            }
        MPI_OK(MPI_Bcast(rec, 7, srec, root, MPI_COMM_WORLD));
        for (int i = 0; i < 7; i++)
            CHECK(rec[i].a == root + i && rec[i].b == root * 0.25 + i && rec[i].c == (short)(i - root), "Bcast struct from %d: record %d differs", root, i);
        /* A large vector broadcast (several messages). */
        enum { NB = 20000 };
        int *big = oxt_malloc(sizeof(int) * NB * 5);
        for (int i = 0; i < NB * 5; i++)
            big[i] = (i % 5) % 2 == 0 ? (rank == root ? i ^ root : -1) : -9;
        MPI_OK(MPI_Bcast(big, NB, ivec, root, MPI_COMM_WORLD));
        for (int i = 0; i < NB * 5; i++)
            CHECK(big[i] == ((i % 5) % 2 == 0 ? (i ^ root) : -9), "big Bcast vector from %d: int %d is %d", root, i, big[i]);
        free(big);
    }

    MPI_OK(MPI_Type_free(&ivec));
    MPI_OK(MPI_Type_free(&srec));
    MPI_OK(MPI_Finalize());
    return 0;
}
