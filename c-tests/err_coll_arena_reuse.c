/* oxmpi-test: ranks=2,3 timeout=120 */
/* A communicator freed after an erroneous broadcast that only the root ran (the other ranks
   passed count -1 and got MPI_ERR_COUNT before taking part), then a new communicator with the
   same members: its collectives must start afresh. In threads mode the freed communicator's
   shared arena (coll/arena.rs), which only the root took, once stayed registered for ever
   (its entry waited for every member to take it); a communicator with the same context id and
   members would have inherited its episode counts (the receivers reading the root's old
   record). Context ids carry a generation (p2p/incarnation.rs), so that reuse needs the key to
   lose it: this test guards the behaviour, the unit test coll::arena::tests checks that the
   entry leaves. In processes mode the arena is made collectively, so there the ranks first
   run a correct barrier on each communicator. oxmpi-specific (count -1 at some ranks only). */
#include "oxtest.h"
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank, size;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    /* Threads mode: every rank is in one process. */
    int pid = (int)getpid(), pid0 = pid;
    MPI_OK(MPI_Bcast(&pid0, 1, MPI_INT, 0, MPI_COMM_WORLD));
    int same = pid == pid0, threads;
    MPI_OK(MPI_Allreduce(&same, &threads, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD));
    for (int k = 0; k < 20; k++) {
        MPI_Comm c;
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        MPI_OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
        if (!threads)
            MPI_OK(MPI_Barrier(c));
        int b[2] = {k, -k};
        int rc = MPI_Bcast(b, rank == 0 ? 2 : -1, MPI_INT, 0, c);
        if (rank == 0)
            CHECK(rc == MPI_SUCCESS, "iteration %d: the root's broadcast failed: %d", k, rc);
        else
            CHECK_CLASS(rc, MPI_ERR_COUNT);
        MPI_OK(MPI_Comm_free(&c));

        MPI_Comm d;
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
        int v[2] = {-1, -1};
        if (rank == 0) {
            v[0] = 1000 + k;
            v[1] = 2000 + k;
        }
        MPI_OK(MPI_Bcast(v, 2, MPI_INT, 0, d));
        CHECK(v[0] == 1000 + k && v[1] == 2000 + k, "iteration %d: rank %d got %d %d", k, rank, v[0], v[1]);
        long x = rank, sum = -1;
        MPI_OK(MPI_Allreduce(&x, &sum, 1, MPI_LONG, MPI_SUM, d));
        CHECK(sum == (long)size * (size - 1) / 2, "iteration %d: sum %ld", k, sum);
        MPI_OK(MPI_Comm_free(&d));
    }
    if (rank == 0)
        printf("ok\n");
    MPI_Finalize();
    return 0;
}
