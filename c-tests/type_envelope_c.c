/* oxmpi-test: ranks=1 */
/* MPI_Type_get_envelope_c / MPI_Type_get_contents_c on a type made by MPI_Type_vector: the int
   arguments come back as integers, no large counts. */
#include "oxtest.h"

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_Datatype v, got;
    MPI_OK(MPI_Type_vector(3, 2, 5, MPI_INT, &v));
    MPI_Count ni, na, nl, nd;
    int comb;
    MPI_OK(MPI_Type_get_envelope_c(v, &ni, &na, &nl, &nd, &comb));
    CHECK(comb == MPI_COMBINER_VECTOR && ni == 3 && na == 0 && nl == 0 && nd == 1, "envelope_c: comb %d ints %lld addrs %lld large %lld types %lld", comb, (long long)ni, (long long)na, (long long)nl, (long long)nd);
    int ints[3];
    MPI_Aint addrs[1];
    MPI_Count large[1];
    MPI_OK(MPI_Type_get_contents_c(v, 3, 0, 0, 1, ints, addrs, large, &got));
    CHECK(ints[0] == 3 && ints[1] == 2 && ints[2] == 5 && got == MPI_INT, "contents_c: %d %d %d", ints[0], ints[1], ints[2]);
    MPI_OK(MPI_Type_free(&v));
    MPI_Finalize();
    return 0;
}
