/* oxmpi-test: ranks=2,4 */
/* Writes with holes (MPI 4.1 section 14.6.1: non-conflicting accesses of different ranks must all
 * land). 1. A collective write through a view with holes into a file opened MPI_MODE_WRONLY (the
 * aggregators read the holes back before writing: ROMIO opens such files read-write for this); the
 * holes keep the file's earlier bytes. 2. Independent strided writes of all ranks at once into
 * interleaved ints (sieved read-modify-write of covering blocks): no rank's ints are lost to
 * another's read-modify-write. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failures = 0, rank, size;
#define CHECK(c, ...) do { if (!(c)) { failures++; fprintf(stderr, "rank %d line %d: ", rank, __LINE__); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)
#define OK(call) do { int rc_ = (call); if (rc_ != MPI_SUCCESS) { char s_[MPI_MAX_ERROR_STRING]; int l_; MPI_Error_string(rc_, s_, &l_); fprintf(stderr, "rank %d line %d: %s failed: %s\n", rank, __LINE__, #call, s_); MPI_Abort(MPI_COMM_WORLD, 1); } } while (0)

enum { BLOCKS = 64, BLOCK = 8, INTS = 1024, ROUNDS = 20 };
#define REGION_B 65536 /* byte offset of part 2's region */

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int pid = getpid();
    MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
    char name[256];
    snprintf(name, sizeof name, "/tmp/oxmpi-io_wronly_holes-%d", pid);
    const int period = 2 * size * BLOCK, span = BLOCKS * period;
    MPI_File fh;

    /* The file's earlier bytes: 'x' everywhere part 1 writes. */
    OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    if (rank == 0) {
        char *x = malloc(span);
        memset(x, 'x', span);
        OK(MPI_File_write_at(fh, 0, x, span, MPI_BYTE, MPI_STATUS_IGNORE));
        free(x);
    }
    OK(MPI_File_close(&fh));

    /* 1. Rank r's block of BLOCK bytes at r * BLOCK in every period: half of each period is holes. */
    OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    MPI_Datatype block, cell;
    MPI_Type_contiguous(BLOCK, MPI_BYTE, &block);
    MPI_Type_create_resized(block, 0, period, &cell);
    MPI_Type_commit(&cell);
    OK(MPI_File_set_view(fh, rank * BLOCK, MPI_BYTE, cell, "native", MPI_INFO_NULL));
    char *mine = malloc(BLOCKS * BLOCK);
    for (int i = 0; i < BLOCKS * BLOCK; i++) mine[i] = (char)('A' + rank);
    int rc = MPI_File_write_all(fh, mine, BLOCKS * BLOCK, MPI_BYTE, MPI_STATUS_IGNORE);
    CHECK(rc == MPI_SUCCESS, "write_all with holes into a write-only file failed (%d)", rc);
    OK(MPI_File_close(&fh));

    /* 2. Every rank writes int i * size + rank of region B, all at once, ROUNDS times. */
    OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    MPI_Datatype every;
    MPI_Type_create_resized(MPI_INT, 0, (MPI_Aint)sizeof(int) * size, &every);
    MPI_Type_commit(&every);
    OK(MPI_File_set_view(fh, REGION_B + rank * (MPI_Offset)sizeof(int), MPI_INT, every, "native", MPI_INFO_NULL));
    int *ints = malloc(sizeof(int) * INTS);
    for (int round = 0; round < ROUNDS; round++) {
        for (int i = 0; i < INTS; i++) ints[i] = round * 1000000 + i * size + rank;
        MPI_Barrier(MPI_COMM_WORLD);
        OK(MPI_File_write_at(fh, 0, ints, INTS, MPI_INT, MPI_STATUS_IGNORE));
    }
    OK(MPI_File_close(&fh));

    /* Read back on rank 0. */
    if (rank == 0) {
        OK(MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_RDONLY | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));
        char *img = malloc(span);
        OK(MPI_File_read_at(fh, 0, img, span, MPI_BYTE, MPI_STATUS_IGNORE));
        for (int o = 0; o < span; o++) {
            int q = o % period;
            char want = q < size * BLOCK ? (char)('A' + q / BLOCK) : 'x';
            if (img[o] != want) {
                CHECK(0, "byte %d is '%c', not '%c' (%s)", o, img[o], want, want == 'x' ? "a hole lost its earlier byte" : "a rank's block is missing");
                break;
            }
        }
        int *all = malloc(sizeof(int) * INTS * size);
        OK(MPI_File_read_at(fh, REGION_B, all, INTS * size, MPI_INT, MPI_STATUS_IGNORE));
        for (int k = 0; k < INTS * size; k++) {
            int want = (ROUNDS - 1) * 1000000 + k;
            if (all[k] != want) {
                CHECK(0, "int %d of region B is %d, not %d (rank %d's last write lost)", k, all[k], want, k % size);
                break;
            }
        }
        OK(MPI_File_close(&fh));
        free(img);
        free(all);
    }
    MPI_Type_free(&cell);
    MPI_Type_free(&block);
    MPI_Type_free(&every);
    free(mine);
    free(ints);
    int total;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("io_wronly_holes: %s\n", total ? "FAIL" : "ok");
    MPI_Finalize();
    return total != 0;
}
