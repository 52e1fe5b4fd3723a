/* oxmpi-test: ranks=1 mpich=skip */
/* Large-count constructors whose sizes, bounds or displacements overflow 64 bits fail with
   MPI_ERR_ARG instead of wrapping (MPICH 4.0.2 wraps silently: a 2^62-int contiguous type has size
   0 there, hence mpich=skip); a typemap of more than 2^25 separate pieces fails with
   MPI_ERR_NO_MEM; negative counts and block lengths are MPI_ERR_COUNT / MPI_ERR_ARG. */
#include <stdint.h>
#include "oxtest.h"

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_Datatype t = MPI_DATATYPE_NULL;
    const MPI_Count big = (MPI_Count)1 << 62;
    CHECK_CLASS(MPI_Type_contiguous_c(big, MPI_INT, &t), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Type_vector_c(2, 1, big, MPI_INT, &t), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Type_create_hvector_c(3, 1, big, MPI_BYTE, &t), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Type_create_resized_c(MPI_INT, INT64_MAX, 100, &t), MPI_ERR_ARG);
    {
        MPI_Count bl[2] = {1, 1}, d[2] = {0, INT64_MAX};
        CHECK_CLASS(MPI_Type_create_hindexed_c(2, bl, d, MPI_INT, &t), MPI_ERR_ARG);
        MPI_Count ib[1] = {1}, id[1] = {big};
        CHECK_CLASS(MPI_Type_indexed_c(1, ib, id, MPI_INT, &t), MPI_ERR_ARG);
    }
    /* A 2^31+5 byte type is fine; 2^62 of them overflow. */
    MPI_OK(MPI_Type_contiguous_c(((MPI_Count)1 << 31) + 5, MPI_BYTE, &t));
    MPI_Datatype u;
    CHECK_CLASS(MPI_Type_contiguous_c(big, t, &u), MPI_ERR_ARG);
    MPI_OK(MPI_Type_free(&t));
    /* 2^26 separate blocks: more pieces than a flattened typemap holds. */
    CHECK_CLASS(MPI_Type_vector_c((MPI_Count)1 << 26, 1, 2, MPI_INT, &t), MPI_ERR_NO_MEM);
    CHECK_CLASS(MPI_Type_contiguous_c(-1, MPI_INT, &t), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Type_vector_c(2, -1, 2, MPI_INT, &t), MPI_ERR_ARG);
    MPI_Finalize();
    return 0;
}
