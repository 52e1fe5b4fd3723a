/* oxmpi-test: ranks=1,2,4 */
/* Large-count (_c) collectives, counts as MPI_Count and displacements as MPI_Aint:
   MPI_Ibcast_c, MPI_Allreduce_init_c (started twice), MPI_Alltoallv_c and MPI_Ialltoallv_c,
   MPI_Gatherv_c, MPI_Reduce_scatter_c, MPI_Scan_c and MPI_Neighbor_allgather_c; under
   MPI_ERRORS_RETURN a negative count is MPI_ERR_COUNT. */
#include "oxtest.h"

int main(int argc, char **argv)
{
    int rank, size;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_Request rq;

    /* MPI_Ibcast_c from the last rank. */
    const MPI_Count nb = 300;
    int bb[300];
    for (int i = 0; i < nb; i++)
        bb[i] = rank == size - 1 ? 7 * i + 1 : -1;
    MPI_OK(MPI_Ibcast_c(bb, nb, MPI_INT, size - 1, MPI_COMM_WORLD, &rq));
    MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    for (int i = 0; i < nb; i++)
        CHECK(bb[i] == 7 * i + 1, "MPI_Ibcast_c element %d is %d", i, bb[i]);

    /* MPI_Allreduce_init_c, started twice with new contributions. */
    long long in[64], out[64];
    MPI_OK(MPI_Allreduce_init_c(in, out, (MPI_Count)64, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &rq));
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < 64; i++)
            in[i] = (long long)(rank + 1) * (i + round);
        MPI_OK(MPI_Start(&rq));
        MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        for (int i = 0; i < 64; i++)
            CHECK(out[i] == (long long)size * (size + 1) / 2 * (i + round), "MPI_Allreduce_init_c round %d element %d is %lld", round, i, out[i]);
    }
    MPI_OK(MPI_Request_free(&rq));

    /* MPI_Alltoallv_c: rank r sends j + 1 ints to rank j, at reversed MPI_Aint displacements. */
    MPI_Count *scounts = oxt_malloc(size * sizeof(MPI_Count)), *rcounts = oxt_malloc(size * sizeof(MPI_Count));
    MPI_Aint *sdispls = oxt_malloc(size * sizeof(MPI_Aint)), *rdispls = oxt_malloc(size * sizeof(MPI_Aint));
    MPI_Aint stotal = 0, rtotal = 0;
    for (int j = size - 1; j >= 0; j--) {
        scounts[j] = j + 1;
        sdispls[j] = stotal;
        stotal += scounts[j];
    }
    for (int j = 0; j < size; j++) {
        rcounts[j] = rank + 1;
        rdispls[j] = rtotal;
        rtotal += rcounts[j];
    }
    int *sa = oxt_malloc(stotal * sizeof(int)), *ra = oxt_malloc(rtotal * sizeof(int));
    for (int j = 0; j < size; j++)
        for (int k = 0; k <= j; k++)
            sa[sdispls[j] + k] = 1000 * rank + 10 * j + k;
    for (int form = 0; form < 2; form++) {
        for (MPI_Aint i = 0; i < rtotal; i++)
            ra[i] = -1;
        if (form == 0) {
            MPI_OK(MPI_Alltoallv_c(sa, scounts, sdispls, MPI_INT, ra, rcounts, rdispls, MPI_INT, MPI_COMM_WORLD));
        } else {
            MPI_OK(MPI_Ialltoallv_c(sa, scounts, sdispls, MPI_INT, ra, rcounts, rdispls, MPI_INT, MPI_COMM_WORLD, &rq));
            MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        }
        for (int j = 0; j < size; j++)
            for (int k = 0; k <= rank; k++)
                CHECK(ra[rdispls[j] + k] == 1000 * j + 10 * rank + k, "alltoallv form %d: block %d element %d is %d", form, j, k, ra[rdispls[j] + k]);
    }

    /* MPI_Gatherv_c at rank 0: rank j contributes j + 1 ints. */
    int mine[64];
    for (int k = 0; k <= rank; k++)
        mine[k] = 100 * rank + k;
    MPI_Aint gtotal = 0;
    for (int j = 0; j < size; j++) {
        rcounts[j] = j + 1;
        rdispls[j] = gtotal;
        gtotal += j + 1;
    }
    int *ga = oxt_malloc(gtotal * sizeof(int));
    MPI_OK(MPI_Gatherv_c(mine, (MPI_Count)rank + 1, MPI_INT, ga, rcounts, rdispls, MPI_INT, 0, MPI_COMM_WORLD));
    if (rank == 0)
        for (int j = 0; j < size; j++)
            for (int k = 0; k <= j; k++)
                CHECK(ga[rdispls[j] + k] == 100 * j + k, "gatherv block %d element %d is %d", j, k, ga[rdispls[j] + k]);

    /* MPI_Reduce_scatter_c: rank j gets j + 1 sums. */
    int *rsin = oxt_malloc(gtotal * sizeof(int)), rsout[64];
    for (MPI_Aint i = 0; i < gtotal; i++)
        rsin[i] = (int)i + rank;
    MPI_OK(MPI_Reduce_scatter_c(rsin, rsout, rcounts, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    for (int k = 0; k <= rank; k++) {
        int i = (int)rdispls[rank] + k;
        CHECK(rsout[k] == size * i + size * (size - 1) / 2, "reduce_scatter element %d is %d", k, rsout[k]);
    }

    /* MPI_Scan_c. */
    int sv[3] = {rank, 1, 2 * rank}, so[3];
    MPI_OK(MPI_Scan_c(sv, so, (MPI_Count)3, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(so[0] == rank * (rank + 1) / 2 && so[1] == rank + 1 && so[2] == rank * (rank + 1), "scan gives %d %d %d", so[0], so[1], so[2]);

    /* MPI_Neighbor_allgather_c on a ring. */
    MPI_Comm ring;
    int dims[1] = {size}, periods[1] = {1};
    MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring));
    int two[2] = {rank, -rank}, got[4];
    MPI_OK(MPI_Neighbor_allgather_c(two, (MPI_Count)2, MPI_INT, got, (MPI_Count)2, MPI_INT, ring));
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    CHECK(got[0] == left && got[1] == -left && got[2] == right && got[3] == -right, "neighbor allgather gives %d %d %d %d", got[0], got[1], got[2], got[3]);
    MPI_OK(MPI_Comm_free(&ring));

    /* Negative counts. */
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    CHECK_CLASS(MPI_Bcast_c(bb, -1, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);

    free(scounts);
    free(rcounts);
    free(sdispls);
    free(rdispls);
    free(sa);
    free(ra);
    free(ga);
    free(rsin);
    MPI_OK(MPI_Finalize());
    return 0;
}
