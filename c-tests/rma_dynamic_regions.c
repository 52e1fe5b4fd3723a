/* oxmpi-test: ranks=2,3 timeout=60 */
/* Dynamic windows (MPI 4.1 section 12.2.4): any number of regions may be attached at once (the
   standard sets no limit; this test attaches 300 per rank, more than the 64 oxmpi kept before),
   and one access may span two regions attached back to back (MPICH and Open MPI allow it: the
   target memory is the union of the attached regions). Every rank puts into each region of its
   right neighbour, then a Put and a Get cross the boundary between two adjacent regions. */
#include "oxtest.h"

#define NREG 300
#define HALF 64

int main(int argc, char **argv)
{
    int rank, size;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Win win;
    MPI_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));

    /* NREG separate small regions (malloc'd apart, so never adjacent by construction) */
    int *small[NREG];
    MPI_Aint mine[NREG + 1], theirs[NREG + 1];
    for (int i = 0; i < NREG; i++) {
        small[i] = malloc(4 * sizeof(int));
        CHECK(small[i] != NULL, "malloc");
        for (int k = 0; k < 4; k++)
            small[i][k] = -1;
        MPI_OK(MPI_Win_attach(win, small[i], 4 * sizeof(int)));
        MPI_OK(MPI_Get_address(small[i], &mine[i]));
    }
    /* one buffer attached as two adjacent regions */
    int *big = malloc(2 * HALF * sizeof(int));
    CHECK(big != NULL, "malloc");
    for (int k = 0; k < 2 * HALF; k++)
        big[k] = rank * 1000 + k;
    MPI_OK(MPI_Win_attach(win, big, HALF * sizeof(int)));
    MPI_OK(MPI_Win_attach(win, big + HALF, HALF * sizeof(int)));
    MPI_OK(MPI_Get_address(big, &mine[NREG]));
    MPI_OK(MPI_Sendrecv(mine, NREG + 1, MPI_AINT, left, 0, theirs, NREG + 1, MPI_AINT, right, 0, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));
    for (int i = 0; i < NREG; i++) {
        int v[4] = {rank, i, rank + i, 7};
        MPI_OK(MPI_Put(v, 4, MPI_INT, right, theirs[i], 4, MPI_INT, win));
        MPI_OK(MPI_Win_flush(right, win));
    }
    /* 8 ints across the boundary between the two halves of the neighbour's buffer */
    int across[8], got[8];
    for (int k = 0; k < 8; k++)
        across[k] = -(rank * 100 + k);
    MPI_Aint at = theirs[NREG] + (HALF - 4) * sizeof(int);
    MPI_OK(MPI_Put(across, 8, MPI_INT, right, at, 8, MPI_INT, win));
    MPI_OK(MPI_Win_flush(right, win));
    MPI_OK(MPI_Get(got, 8, MPI_INT, right, at - 4 * sizeof(int), 8, MPI_INT, win));
    MPI_OK(MPI_Win_unlock(right, win));
    for (int k = 0; k < 4; k++)
        CHECK(got[k] == right * 1000 + HALF - 8 + k, "Get across the boundary: element %d is %d", k, got[k]);
    for (int k = 4; k < 8; k++)
        CHECK(got[k] == -(rank * 100 + k - 4), "Get across the boundary: element %d is %d", k, got[k]);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    for (int i = 0; i < NREG; i++)
        CHECK(small[i][0] == left && small[i][1] == i && small[i][2] == left + i && small[i][3] == 7,
              "region %d holds %d %d %d %d", i, small[i][0], small[i][1], small[i][2], small[i][3]);
    for (int k = 0; k < 8; k++)
        CHECK(big[HALF - 4 + k] == -(left * 100 + k), "byte-crossing Put: element %d is %d", HALF - 4 + k, big[HALF - 4 + k]);

    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Win_detach(win, big + HALF));
    MPI_OK(MPI_Win_detach(win, big));
    for (int i = 0; i < NREG; i++) {
        MPI_OK(MPI_Win_detach(win, small[i]));
        free(small[i]);
    }
    free(big);
    MPI_OK(MPI_Win_free(&win));
    MPI_Finalize();
    return 0;
}
