/* oxmpi-test: ranks=1,2,3,4,8 timeout=60 */
/* RMA synchronisation: fence (with asserts), post-start-complete-wait and Win_test, exclusive
   and shared locks (exclusive lock read-modify-write increments from every rank are exact),
   lock_all with flush/flush_all/flush_local/flush_local_all, MPI_MODE_NOCHECK. */
#include "oxtest.h"

static int rank, size;

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int *mem;
    MPI_Win win;
    MPI_OK(MPI_Win_allocate(64 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    for (int i = 0; i < 64; i++)
        mem[i] = 0;

    /* Fence: everyone writes its rank into slot `rank` of every other rank. */
    MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
    for (int t = 0; t < size; t++)
        MPI_OK(MPI_Put(&rank, 1, MPI_INT, t, rank, 1, MPI_INT, win));
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSTORE | MPI_MODE_NOSUCCEED, win));
    for (int r = 0; r < size; r++)
        CHECK(mem[r] == r, "fence: mem[%d]=%d", r, mem[r]);

    /* PSCW on a ring: rank exposes to its left neighbour, accesses its right one. */
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Group world, gl, gr;
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    MPI_OK(MPI_Group_incl(world, 1, &left, &gl));
    MPI_OK(MPI_Group_incl(world, 1, &right, &gr));
    for (int round = 0; round < 20; round++) {
        MPI_OK(MPI_Win_post(gl, 0, win));
        MPI_OK(MPI_Win_start(gr, 0, win));
        int v = round * 100 + rank;
        MPI_OK(MPI_Put(&v, 1, MPI_INT, right, 32, 1, MPI_INT, win));
        MPI_OK(MPI_Win_complete(win));
        if (round % 2) {
            int flag = 0;
            while (!flag)
                MPI_OK(MPI_Win_test(win, &flag));
        } else {
            MPI_OK(MPI_Win_wait(win));
        }
        CHECK(mem[32] == round * 100 + left, "pscw round %d: mem[32]=%d", round, mem[32]);
    }
    /* PSCW with everyone: all ranks access rank 0, which exposes to all. */
    if (rank == 0)
        MPI_OK(MPI_Win_post(world, 0, win));
    MPI_Group g0;
    int zero = 0;
    MPI_OK(MPI_Group_incl(world, 1, &zero, &g0));
    MPI_OK(MPI_Win_start(g0, 0, win));
    int one = 1;
    MPI_OK(MPI_Accumulate(&one, 1, MPI_INT, 0, 33, 1, MPI_INT, MPI_SUM, win));
    MPI_OK(MPI_Win_complete(win));
    if (rank == 0) {
        MPI_OK(MPI_Win_wait(win));
        CHECK(mem[33] == size, "pscw all: mem[33]=%d", mem[33]);
    }

    /* Exclusive locks: non-atomic read-modify-write increments of rank 0's slot 40. */
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int it = 0; it < 20; it++) {
        int x;
        MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        MPI_OK(MPI_Get(&x, 1, MPI_INT, 0, 40, 1, MPI_INT, win));
        MPI_OK(MPI_Win_flush(0, win));
        x++;
        MPI_OK(MPI_Put(&x, 1, MPI_INT, 0, 40, 1, MPI_INT, win));
        MPI_OK(MPI_Win_unlock(0, win));
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        CHECK(mem[40] == 20 * size, "exclusive lock counter %d", mem[40]);
        MPI_OK(MPI_Win_unlock(0, win));
    }
    /* Shared locks held by everyone at once on the same target, reading. */
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    int seen;
    MPI_OK(MPI_Get(&seen, 1, MPI_INT, 0, 40, 1, MPI_INT, win));
    MPI_OK(MPI_Win_flush_local(0, win));
    CHECK(seen == 20 * size, "shared lock read %d", seen);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD)); /* all hold the shared lock here */
    MPI_OK(MPI_Win_unlock(0, win));

    /* lock_all + flushes: write slot 48 + rank of everyone, flush, read back. */
    MPI_OK(MPI_Win_lock_all(0, win));
    for (int t = 0; t < size; t++)
        MPI_OK(MPI_Put(&rank, 1, MPI_INT, t, 48 + rank % 16, 1, MPI_INT, win));
    MPI_OK(MPI_Win_flush_all(win));
    MPI_OK(MPI_Win_flush_local_all(win));
    int back;
    MPI_OK(MPI_Get(&back, 1, MPI_INT, right, 48 + rank % 16, 1, MPI_INT, win));
    MPI_OK(MPI_Win_flush(right, win));
    CHECK(size > 16 || back == rank, "lock_all flush read %d", back);
    MPI_OK(MPI_Win_unlock_all(win));
    /* MPI_MODE_NOCHECK lock (no conflicting locks exist here: each rank locks itself). */
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, MPI_MODE_NOCHECK, win));
    MPI_OK(MPI_Put(&rank, 1, MPI_INT, rank, 63, 1, MPI_INT, win));
    MPI_OK(MPI_Win_unlock(rank, win));
    CHECK(mem[63] == rank, "nocheck put %d", mem[63]);

    MPI_OK(MPI_Group_free(&g0));
    MPI_OK(MPI_Group_free(&gl));
    MPI_OK(MPI_Group_free(&gr));
    MPI_OK(MPI_Group_free(&world));
    MPI_OK(MPI_Win_free(&win));
    MPI_Finalize();
    return 0;
}
