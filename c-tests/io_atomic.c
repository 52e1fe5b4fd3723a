/* oxmpi-test: ranks=2,4,8 */
/* Atomic mode (MPI 4.1 section 14.6.1): all ranks write the same strided region at once, each
 * its own value, many times; in atomic mode every round's result is one rank's data whole
 * (never a mix), and a rank reading the region while others write sees one write's data whole. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failures = 0, rank, size;
#define CHECK(c, ...) do { if (!(c)) { failures++; fprintf(stderr, "rank %d line %d: ", rank, __LINE__); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)
#define OK(call) do { int rc_ = (call); if (rc_ != MPI_SUCCESS) { char s_[MPI_MAX_ERROR_STRING]; int l_; MPI_Error_string(rc_, s_, &l_); fprintf(stderr, "rank %d line %d: %s failed: %s\n", rank, __LINE__, #call, s_); MPI_Abort(MPI_COMM_WORLD, 1); } } while (0)

enum { BLOCKS = 512, ROUNDS = 20 };

/* Whether the BLOCKS ints of `v` all hold one value (returned in *who), or all zero (unwritten). */
static int whole(const int *v, int *who) {
    for (int i = 1; i < BLOCKS; i++)
        if (v[i] != v[0]) return 0;
    *who = v[0];
    return 1;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int pid = getpid();
    MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
    char name[256];
    snprintf(name, sizeof name, "/tmp/oxmpi-io_atomic-%d", pid);
    MPI_File fh;
    OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));
    OK(MPI_File_set_atomicity(fh, 1));
    /* Every other int of a region: BLOCKS separate runs per access. */
    MPI_Datatype strided;
    MPI_Type_vector(BLOCKS, 1, 2, MPI_INT, &strided);
    MPI_Type_commit(&strided);
    OK(MPI_File_set_view(fh, 0, MPI_INT, strided, "native", MPI_INFO_NULL));
    int *mine = malloc(sizeof(int) * BLOCKS), *got = malloc(sizeof(int) * BLOCKS);
    for (int round = 0; round < ROUNDS; round++) {
        for (int i = 0; i < BLOCKS; i++) mine[i] = round * 100 + rank + 1;
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == size - 1 && round % 2) {
            /* A reader among the writers: sees the previous round's data or one new write. */
            OK(MPI_File_read_at(fh, 0, got, BLOCKS, MPI_INT, MPI_STATUS_IGNORE));
            int who;
            CHECK(whole(got, &who), "round %d: a concurrent read saw a torn region", round);
        } else {
            OK(MPI_File_write_at(fh, 0, mine, BLOCKS, MPI_INT, MPI_STATUS_IGNORE));
        }
        MPI_Barrier(MPI_COMM_WORLD);
        OK(MPI_File_read_at(fh, 0, got, BLOCKS, MPI_INT, MPI_STATUS_IGNORE));
        int who = -1;
        CHECK(whole(got, &who), "round %d: the region mixes several ranks' writes", round);
        CHECK(who / 100 == round && who % 100 >= 1 && who % 100 <= size, "round %d: the region holds %d", round, who);
    }
    OK(MPI_File_close(&fh));
    MPI_Type_free(&strided);
    free(mine);
    free(got);
    int bad;
    MPI_Allreduce(&failures, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && bad == 0) printf("io_atomic: OK\n");
    MPI_Finalize();
    return bad != 0;
}
