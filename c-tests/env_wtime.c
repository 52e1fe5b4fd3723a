/* oxmpi-test: ranks=1,2,8 */
/* MPI_Wtime is monotonic and advances; MPI_Wtick > 0. The PMPI_ names too: in the Open MPI and
 * MPI-5 ABI layers (run.sh --ompi-abi / --mpi-abi) an inlined wrapper once became a jump to its
 * own PMPI_Wtime, an endless loop (scripts/check-got-recursion.py guards the class). */
#define _POSIX_C_SOURCE 200809L
#include "oxtest.h"
#include <time.h>

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    double tick = MPI_Wtick(), ptick = PMPI_Wtick();
    CHECK(tick > 0.0 && tick < 1.0, "MPI_Wtick() = %g", tick);
    CHECK(ptick == tick, "PMPI_Wtick() = %g, MPI_Wtick() = %g", ptick, tick);

    double prev = MPI_Wtime();
    for (int i = 0; i < 100000; i++) {
        double t = i % 2 ? MPI_Wtime() : PMPI_Wtime();
        CHECK(t >= prev, "MPI_Wtime went backwards: %.9f after %.9f", t, prev);
        prev = t;
    }
    double t0 = MPI_Wtime();
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
    double t1 = PMPI_Wtime();
    /* lower bound only: sleeping 20 ms must advance the clock by at least ~20 ms */
    CHECK(t1 - t0 >= 0.019, "MPI_Wtime advanced %.6f s over a 20 ms sleep", t1 - t0);
    CHECK(t1 - t0 < 3600.0, "MPI_Wtime advanced %.6f s over a 20 ms sleep (units not seconds?)", t1 - t0);
    MPI_OK(MPI_Finalize());
    return 0;
}
