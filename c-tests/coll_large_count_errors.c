/* oxmpi-test: ranks=1,2 mpich=skip */
/* Counts the engine cannot take are MPI_ERR_COUNT in the large-count (_c) forms, never truncated:
   negative counts of the _c reductions (MPICH 4.0.2 does not check them and crashes in a memcpy of
   a negative length, hence mpich=skip), a negative entry of an MPI_Count array, and counts whose
   size in bytes overflows 64 bits (2^62 ints), in point-to-point and collectives. Under
   MPI_ERRORS_RETURN nothing is sent, so the ranks go on and finish normally. */
#include "oxtest.h"

int main(int argc, char **argv)
{
    int rank, size;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    const MPI_Count huge = (MPI_Count)1 << 62;
    long long in[4] = {0}, out[4] = {0};
    MPI_Request rq = MPI_REQUEST_NULL;
    MPI_Status st;

    CHECK_CLASS(MPI_Allreduce_c(in, out, -3, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Iallreduce_c(in, out, -3, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD, &rq), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Allreduce_init_c(in, out, -1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &rq), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Reduce_c(in, out, -1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    CHECK(rq == MPI_REQUEST_NULL, "a failed call wrote a request");

    MPI_Count *counts = oxt_malloc(size * sizeof(MPI_Count));
    MPI_Aint *displs = oxt_malloc(size * sizeof(MPI_Aint));
    for (int j = 0; j < size; j++) {
        counts[j] = j == size - 1 ? -1 : 1;
        displs[j] = j;
    }
    int sa[8], ra[8];
    CHECK_CLASS(MPI_Alltoallv_c(sa, counts, displs, MPI_INT, ra, counts, displs, MPI_INT, MPI_COMM_WORLD), MPI_ERR_COUNT);

    /* 2^62 ints are 2^64 bytes. */
    CHECK_CLASS(MPI_Send_c(sa, huge, MPI_INT, rank, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Recv_c(ra, huge, MPI_INT, rank, 0, MPI_COMM_WORLD, &st), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Isend_c(sa, huge, MPI_INT, rank, 0, MPI_COMM_WORLD, &rq), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Bcast_c(sa, huge, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Allreduce_c(in, out, huge, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_COUNT);

    free(counts);
    free(displs);
    MPI_OK(MPI_Finalize());
    return 0;
}
