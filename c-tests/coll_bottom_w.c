/* oxmpi-test: ranks=1,2,4,8 */
/* MPI_BOTTOM with absolute byte displacements (from MPI_Get_address) in the w collectives:
   MPI_Alltoallw (send side only: MPICH 4.0.2 calls two MPI_BOTTOM buffers aliased) and
   MPI_Neighbor_alltoallw on a ring, blocking, nonblocking and large-count,
   with a predefined datatype (mpi4py's testNeighborAlltoallwBottom). */
#include "oxtest.h"

#define N 3

int main(int argc, char **argv)
{
    int rank, size;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));

    /* Alltoallw: block j of N ints to rank j */
    int *sbuf = malloc(sizeof(int) * N * size), *rbuf = malloc(sizeof(int) * N * size);
    int *cnt = malloc(sizeof(int) * size);
    MPI_Aint *sd = malloc(sizeof(MPI_Aint) * size), *rd = malloc(sizeof(MPI_Aint) * size);
    MPI_Count *ccnt = malloc(sizeof(MPI_Count) * size);
    MPI_Datatype *ty = malloc(sizeof(MPI_Datatype) * size);
    int *sdi = malloc(sizeof(int) * size), *rdi = malloc(sizeof(int) * size);
    for (int form = 0; form < 3; form++) {
        for (int j = 0; j < size; j++) {
            for (int k = 0; k < N; k++)
                sbuf[j * N + k] = rank * 1000 + j * 10 + k + form;
            cnt[j] = N;
            ccnt[j] = N;
            ty[j] = MPI_INT;
            MPI_OK(MPI_Get_address(&sbuf[j * N], &sd[j]));
            rd[j] = (MPI_Aint)(j * N * sizeof(int)); /* relative to rbuf */
            sdi[j] = (int)sd[j];
            rdi[j] = (int)rd[j];
        }
        for (int i = 0; i < N * size; i++)
            rbuf[i] = -1;
        if (form == 0) {
            /* MPI_Alltoallw takes int displacements: only usable when addresses fit in an int */
            if ((MPI_Aint)sdi[0] != sd[0])
                continue;
            MPI_OK(MPI_Alltoallw(MPI_BOTTOM, cnt, sdi, ty, rbuf, cnt, rdi, ty, MPI_COMM_WORLD));
        } else if (form == 1) {
            MPI_OK(MPI_Alltoallw_c(MPI_BOTTOM, ccnt, sd, ty, rbuf, ccnt, rd, ty, MPI_COMM_WORLD));
        } else {
            MPI_Request req;
            MPI_OK(MPI_Ialltoallw_c(MPI_BOTTOM, ccnt, sd, ty, rbuf, ccnt, rd, ty, MPI_COMM_WORLD, &req));
            MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        }
        for (int j = 0; j < size; j++)
            for (int k = 0; k < N; k++)
                CHECK(rbuf[j * N + k] == j * 1000 + rank * 10 + k + form, "alltoallw form %d: from %d [%d] = %d", form, j,
                      k, rbuf[j * N + k]);
    }

    /* Neighbor_alltoallw on a periodic ring: 2 neighbours (left, right) */
    MPI_Comm ring;
    int dims = size, periods = 1;
    MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, &dims, &periods, 0, &ring));
    int left, right;
    MPI_OK(MPI_Cart_shift(ring, 0, 1, &left, &right));
    int s2[2 * N], r2[2 * N], c2[2] = {N, N};
    MPI_Count cc2[2] = {N, N};
    MPI_Aint sd2[2], rd2[2];
    MPI_Datatype t2[2] = {MPI_INT, MPI_INT};
    for (int form = 0; form < 3; form++) {
        for (int k = 0; k < 2 * N; k++) {
            s2[k] = rank * 100 + k + form;
            r2[k] = -1;
        }
        MPI_OK(MPI_Get_address(&s2[0], &sd2[0]));
        MPI_OK(MPI_Get_address(&s2[N], &sd2[1]));
        MPI_OK(MPI_Get_address(&r2[0], &rd2[0]));
        MPI_OK(MPI_Get_address(&r2[N], &rd2[1]));
        if (form == 0) {
            MPI_OK(MPI_Neighbor_alltoallw(MPI_BOTTOM, c2, sd2, t2, MPI_BOTTOM, c2, rd2, t2, ring));
        } else if (form == 1) {
            MPI_OK(MPI_Neighbor_alltoallw_c(MPI_BOTTOM, cc2, sd2, t2, MPI_BOTTOM, cc2, rd2, t2, ring));
        } else {
            MPI_Request req;
            MPI_OK(MPI_Ineighbor_alltoallw(MPI_BOTTOM, c2, sd2, t2, MPI_BOTTOM, c2, rd2, t2, ring, &req));
            MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        }
        /* block 0 comes from the left neighbour's block 1 (sent right), block 1 from the right's block 0 */
        /* At 1 and 2 ranks left == right and which block pairs with which is the implementation's choice. */
        for (int k = 0; k < N && size > 2; k++) {
            CHECK(r2[k] == left * 100 + N + k + form, "neighbor form %d: from left [%d] = %d", form, k, r2[k]);
            CHECK(r2[N + k] == right * 100 + k + form, "neighbor form %d: from right [%d] = %d", form, k, r2[N + k]);
        }
        for (int k = 0; k < 2 * N && size <= 2; k++)
            CHECK(r2[k] == left * 100 + k % N + form || r2[k] == left * 100 + N + k % N + form,
                  "neighbor form %d: [%d] = %d", form, k, r2[k]);
    }
    MPI_OK(MPI_Comm_free(&ring));
    free(sbuf); free(rbuf); free(cnt); free(sd); free(rd); free(ccnt); free(ty); free(sdi); free(rdi);
    MPI_Finalize();
    return 0;
}
