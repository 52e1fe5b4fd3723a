/* oxmpi-test: ranks=2 mpich=skip expect-exit=137 expect-exit-threads=139 timeout=60 */
/* oxmpi-test: expect-stderr="the other ranks go on (failure survival is on)" */
/* A sender dies while its large message is on the way (failure survival on): the receive ends
 * whole or with MPIX_ERR_PROC_FAILED, and once it has ended the receive buffer is the user's
 * again: nothing writes into it any more. Across nodes (run.sh --nodes 2) the payload is pulled
 * by UCX straight into the receive buffer; the receive must not complete before UCX has ended
 * that transfer (a use after free when the buffer is freed at once, as here: the new buffer is
 * then watched for stray bytes). Where the sender dies (before, during or after the transfer)
 * varies from run to run; every outcome is checked. */
#define _DEFAULT_SOURCE /* usleep */
#include "oxtest.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { N = 64 << 20 };

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size == 2, "needs 2 ranks, got %d", size);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    unsigned char *buf = oxt_malloc(N);
    if (rank == 0) {
        for (size_t i = 0; i < N; i++)
            buf[i] = (unsigned char)(i * 7 + 1);
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        MPI_Request req;
        MPI_OK(MPI_Isend(buf, N, MPI_UNSIGNED_CHAR, 1, 0, MPI_COMM_WORLD, &req));
        /* Let the transfer start (the receiver pulls while this rank progresses), then die. */
        for (int i = 0; i < 50; i++) {
            int done = 0;
            MPI_OK(MPI_Test(&req, &done, MPI_STATUS_IGNORE));
            usleep(100);
        }
        oxt_die();
    }
    memset(buf, 0, N);
    MPI_Request req;
    MPI_OK(MPI_Irecv(buf, N, MPI_UNSIGNED_CHAR, 0, 0, MPI_COMM_WORLD, &req));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    int rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS) {
        for (size_t i = 0; i < N; i += 4093)
            CHECK(buf[i] == (unsigned char)(i * 7 + 1), "byte %zu is %u after a whole receive", i, buf[i]);
    } else {
        CHECK_CLASS(rc, MPIX_ERR_PROC_FAILED);
    }
    /* The buffer is ours: freed, its memory (likely the same pages) refilled and watched while
     * the library keeps progressing. */
    free(buf);
    unsigned char *again = oxt_malloc(N);
    memset(again, 0x5a, N);
    for (int i = 0; i < 2000; i++) {
        int flag = 0;
        MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        if (i % 100 == 0)
            usleep(1000);
    }
    for (size_t i = 0; i < N; i++)
        CHECK(again[i] == 0x5a, "byte %zu of memory freed after the receive ended changed to %u", i, again[i]);
    free(again);
    /* The failure is known to the survivor. */
    int x = 0;
    rc = MPI_Recv(&x, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK_CLASS(rc, MPIX_ERR_PROC_FAILED);
    MPI_Finalize();
    return 0;
}
