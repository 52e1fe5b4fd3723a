/* oxmpi-test: ranks=2 mpich=skip timeout=120 */
/* Large-count constructors whose sizes, bounds or displacements overflow 64 bits fail with
   MPI_ERR_ARG instead of wrapping (MPICH 4.0.2 wraps silently: a 2^62-int contiguous type has size
   0 there, hence mpich=skip); negative counts and block lengths are MPI_ERR_COUNT / MPI_ERR_ARG.
   A vector of 2^26 strided blocks is built and carries its 64 MiB exactly, gaps untouched, into
   the same type and into a contiguous buffer. oxmpi keeps a typemap as a tile repeated at a stride:
   only a repetition of a repetition whose tile exceeds 2^25 pieces is refused, with
   MPI_ERR_NO_MEM (MPICH builds it). Without the overflow and refusal checks this test passes on
   MPICH 4.0.2. */
#include <stdint.h>
#include <string.h>
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
    /* 2^26 separate blocks: a compact repetition of one block. */
    const MPI_Count nb = (MPI_Count)1 << 26;
    MPI_OK(MPI_Type_vector_c(nb, 1, 2, MPI_CHAR, &t));
    MPI_OK(MPI_Type_commit(&t));
    MPI_Count size, lb, ext;
    MPI_OK(MPI_Type_size_c(t, &size));
    MPI_OK(MPI_Type_get_extent_c(t, &lb, &ext));
    CHECK(size == nb && lb == 0 && ext == 2 * nb - 1, "size %lld extent %lld", (long long)size, (long long)ext);
    int rank;
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    const size_t span = (size_t)2 * nb;
    unsigned char *buf = oxt_malloc(span);
    if (rank == 0) {
        for (size_t i = 0; i < span; i++)
            buf[i] = (unsigned char)(i * 7 + i / 4093);
        MPI_OK(MPI_Send(buf, 1, t, 1, 0, MPI_COMM_WORLD));
        MPI_OK(MPI_Send(buf, 1, t, 1, 1, MPI_COMM_WORLD));
    } else {
        memset(buf, 0xee, span);
        MPI_Status st;
        MPI_OK(MPI_Recv(buf, 1, t, 0, 0, MPI_COMM_WORLD, &st));
        MPI_Count got;
        MPI_OK(MPI_Get_count_c(&st, t, &got));
        CHECK(got == 1, "received %lld elements", (long long)got);
        MPI_OK(MPI_Get_elements_c(&st, t, &got));
        CHECK(got == nb, "received %lld basic elements", (long long)got);
        for (size_t i = 0; i < span; i++) {
            unsigned char want = i % 2 ? 0xee : (unsigned char)(i * 7 + i / 4093);
            CHECK(buf[i] == want, "typed receive: byte %zu is %d, expected %d", i, buf[i], want);
        }
        /* The same stream into a contiguous buffer. */
        MPI_OK(MPI_Recv(buf, (int)nb, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (size_t i = 0; i < (size_t)nb; i++) {
            unsigned char want = (unsigned char)(2 * i * 7 + 2 * i / 4093);
            CHECK(buf[i] == want, "contiguous receive: byte %zu is %d, expected %d", i, buf[i], want);
        }
    }
    free(buf);
    /* A repetition of that vector: its tile would be 2^26 pieces. */
    MPI_Datatype u2;
    CHECK_CLASS(MPI_Type_create_hvector_c(2, 1, (MPI_Count)1 << 30, t, &u2), MPI_ERR_NO_MEM);
    MPI_OK(MPI_Type_free(&t));
    CHECK_CLASS(MPI_Type_contiguous_c(-1, MPI_INT, &t), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Type_vector_c(2, -1, 2, MPI_INT, &t), MPI_ERR_ARG);
    MPI_Finalize();
    return 0;
}
