/* oxmpi-test: ranks=1 */
/* MPI_Get_elements(_x) on the pair types counts basic elements, two per pair, as MPICH:
   MPI_DOUBLE_INT, MPI_LONG_INT, MPI_SHORT_INT, MPI_LONG_DOUBLE_INT, MPI_2INT, MPI_2INTEGER,
   MPI_2REAL, MPI_2DOUBLE_PRECISION (and MPI_FLOAT_INT, not with MPICH 4.0.2, whose
   MPI_Get_elements on it dies of a division by zero); MPI_Get_count still counts pairs, a complex
   type stays one element, and a contiguous type of pairs counts two per pair too. */
#include "oxtest.h"

static void one(MPI_Datatype t, const char *name, int n, int per_pair)
{
    char sb[256] = {0}, rb[256];
    MPI_Request r;
    MPI_Status st;
    int c, e;
    MPI_Count ex;
    MPI_OK(MPI_Irecv(rb, 4, t, 0, 0, MPI_COMM_SELF, &r));
    MPI_OK(MPI_Send(sb, n, t, 0, 0, MPI_COMM_SELF));
    MPI_OK(MPI_Wait(&r, &st));
    MPI_OK(MPI_Get_count(&st, t, &c));
    MPI_OK(MPI_Get_elements(&st, t, &e));
    MPI_OK(MPI_Get_elements_x(&st, t, &ex));
    CHECK(c == n, "%s: MPI_Get_count %d, expected %d", name, c, n);
    CHECK(e == per_pair * n, "%s: MPI_Get_elements %d after %d sent, expected %d", name, e, n, per_pair * n);
    CHECK(ex == per_pair * n, "%s: MPI_Get_elements_x %lld after %d sent, expected %d", name, (long long)ex, n,
          per_pair * n);
}

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int liblen;
    MPI_OK(MPI_Get_library_version(lib, &liblen));
    int mpich = strncmp(lib, "MPICH", 5) == 0;
    static const struct {
        MPI_Datatype t;
        const char *name;
        int per;
    } types[] = {
        {MPI_DOUBLE_INT, "MPI_DOUBLE_INT", 2}, {MPI_LONG_INT, "MPI_LONG_INT", 2},
        {MPI_SHORT_INT, "MPI_SHORT_INT", 2},   {MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT", 2},
        {MPI_2INT, "MPI_2INT", 2},             {MPI_2INTEGER, "MPI_2INTEGER", 2},
        {MPI_2REAL, "MPI_2REAL", 2},           {MPI_2DOUBLE_PRECISION, "MPI_2DOUBLE_PRECISION", 2},
        {MPI_FLOAT_INT, "MPI_FLOAT_INT", 2},   {MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX", 1},
        {MPI_DOUBLE, "MPI_DOUBLE", 1},
    };
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        if (mpich && types[i].t == MPI_FLOAT_INT)
            continue;
        for (int n = 0; n <= 3; n++)
            if (n > 0 || types[i].t == MPI_DOUBLE_INT)
                one(types[i].t, types[i].name, n, types[i].per);
    }
    /* A derived type of pairs: 3 MPI_2INT per element, 2 elements = 12 ints. */
    MPI_Datatype c3;
    MPI_OK(MPI_Type_contiguous(3, MPI_2INT, &c3));
    MPI_OK(MPI_Type_commit(&c3));
    {
        int sb[12] = {0}, rb[12];
        MPI_Request r;
        MPI_Status st;
        int e;
        MPI_OK(MPI_Irecv(rb, 2, c3, 0, 1, MPI_COMM_SELF, &r));
        MPI_OK(MPI_Send(sb, 2, c3, 0, 1, MPI_COMM_SELF));
        MPI_OK(MPI_Wait(&r, &st));
        MPI_OK(MPI_Get_elements(&st, c3, &e));
        CHECK(e == 12, "contiguous(3, MPI_2INT) x 2: MPI_Get_elements %d, expected 12", e);
    }
    MPI_OK(MPI_Type_free(&c3));
    MPI_OK(MPI_Finalize());
    return 0;
}
