/* oxmpi-test: ranks=2,3,4 timeout=60 */
/* A target that polls its own window through RMA calls still serves the other ranks' RMA (MPI
   4.1 section 12.7, progress): rank 0 waits for a value that only the last rank's operations
   put into rank 0's window, looking at it (1) with MPI_Fetch_and_op(MPI_NO_OP) on itself and
   MPI_Win_flush inside lock_all, (2) with MPI_Win_lock / MPI_Get / MPI_Win_unlock of itself,
   (3) with loads and MPI_Win_sync inside lock_all. Across nodes (mpiexec --nodes 2: rank 0 and
   the last rank on different nodes) the last rank's lock, put, accumulate and unlock are
   requests that only rank 0's progress answers, and rank 0 makes no other MPI call meanwhile:
   the loops end only if those calls progress (the rma_accumulate mutex loop hung this way).
   The last rank starts each step only after rank 0 said (by a message) it is polling. */
#include "oxtest.h"

int main(int argc, char **argv)
{
    int rank, size;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int last = size - 1;
    long *mem;
    MPI_Win win;
    MPI_OK(MPI_Win_allocate(4 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    for (int i = 0; i < 4; i++)
        mem[i] = 0;
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    long one = 1, go = 0;
    for (int step = 0; step < 3; step++) {
        if (rank == 0) {
            long v = 0, none = 0;
            MPI_OK(MPI_Send(&go, 1, MPI_LONG, last, step, MPI_COMM_WORLD));
            if (step == 0) {
                MPI_OK(MPI_Win_lock_all(0, win));
                do {
                    MPI_OK(MPI_Fetch_and_op(&none, &v, MPI_LONG, 0, 0, MPI_NO_OP, win));
                    MPI_OK(MPI_Win_flush(0, win));
                } while (v != 1);
                MPI_OK(MPI_Win_unlock_all(win));
            } else if (step == 1) {
                do {
                    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
                    MPI_OK(MPI_Get(&v, 1, MPI_LONG, 0, 1, 1, MPI_LONG, win));
                    MPI_OK(MPI_Win_unlock(0, win));
                } while (v != 1);
            } else {
                MPI_OK(MPI_Win_lock_all(0, win));
                while ((v = ((volatile long *)mem)[2]) != 1)
                    MPI_OK(MPI_Win_sync(win));
                MPI_OK(MPI_Win_unlock_all(win));
            }
            CHECK(v == 1, "step %d: rank 0 saw %ld", step, v);
        } else if (rank == last) {
            MPI_OK(MPI_Recv(&go, 1, MPI_LONG, 0, step, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            if (step == 0) {
                MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
                MPI_OK(MPI_Accumulate(&one, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_REPLACE, win));
                MPI_OK(MPI_Win_unlock(0, win));
            } else if (step == 1) {
                MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
                MPI_OK(MPI_Put(&one, 1, MPI_LONG, 0, 1, 1, MPI_LONG, win));
                MPI_OK(MPI_Win_unlock(0, win));
            } else {
                MPI_OK(MPI_Win_lock_all(0, win));
                MPI_OK(MPI_Put(&one, 1, MPI_LONG, 0, 2, 1, MPI_LONG, win));
                MPI_OK(MPI_Win_unlock_all(win));
            }
        }
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    }
    MPI_OK(MPI_Win_free(&win));
    MPI_OK(MPI_Finalize());
    return 0;
}
