/* oxmpi-test: ranks=2 mpich=skip expect-exit=137 expect-exit-threads=139 timeout=60 */
/* oxmpi-test: expect-stderr="the other ranks go on (failure survival is on)" */
/* A sender dies while its large contiguous message is on the way to a receive with a
 * non-contiguous datatype (failure survival on): the receive ends whole (every element in
 * place, the gaps untouched) or with MPIX_ERR_PROC_FAILED, never another class. Across nodes
 * (run.sh --nodes 2) the payload is pulled by UCX into a bounce buffer and unpacked at the end;
 * UCX often learns of the death before the launcher does, and the receive must then still end
 * as ProcFailed. Where the sender dies varies from run to run; every outcome is checked. */
#define _DEFAULT_SOURCE /* usleep */
#include "oxtest.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { N = 16 << 20 }; /* ints sent; received every other int of 2N */

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size == 2, "needs 2 ranks, got %d", size);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    if (rank == 0) {
        int *buf = oxt_malloc((size_t)N * sizeof(int));
        for (int i = 0; i < N; i++)
            buf[i] = i * 3 + 1;
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        MPI_Request req;
        MPI_OK(MPI_Isend(buf, N, MPI_INT, 1, 0, MPI_COMM_WORLD, &req));
        /* Let the transfer start (the receiver pulls while this rank progresses), then die. */
        for (int i = 0; i < 50; i++) {
            int done = 0;
            MPI_OK(MPI_Test(&req, &done, MPI_STATUS_IGNORE));
            usleep(100);
        }
        oxt_die();
    }
    int *buf = oxt_malloc((size_t)2 * N * sizeof(int));
    for (size_t i = 0; i < (size_t)2 * N; i++)
        buf[i] = -1;
    MPI_Datatype every_other;
    MPI_OK(MPI_Type_vector(N, 1, 2, MPI_INT, &every_other));
    MPI_OK(MPI_Type_commit(&every_other));
    MPI_Request req;
    MPI_OK(MPI_Irecv(buf, 1, every_other, 0, 0, MPI_COMM_WORLD, &req));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    int rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS) {
        for (size_t i = 0; i < (size_t)N; i += 4093) {
            CHECK(buf[2 * i] == (int)(i * 3 + 1), "element %zu is %d after a whole receive", i, buf[2 * i]);
            CHECK(buf[2 * i + 1] == -1, "the gap after element %zu is %d", i, buf[2 * i + 1]);
        }
    } else {
        CHECK_CLASS(rc, MPIX_ERR_PROC_FAILED);
    }
    /* The failure is known to the survivor. */
    int x = 0;
    rc = MPI_Recv(&x, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK_CLASS(rc, MPIX_ERR_PROC_FAILED);
    MPI_Type_free(&every_other);
    free(buf);
    MPI_Finalize();
    return 0;
}
