/* oxmpi-test: ranks=2,3,4,8 */
/* Collective buffering with many small windows (cb_buffer_size 4096, romio_cb_read/write
 * enable): the ranks' blocks of B ints interleave in the file (a vector filetype), so every
 * window is tiled by several ranks' pieces (oxmpi: one vectored access per window, straight from
 * and into the ranks' buffers in threads mode); then every rank reads the whole file with
 * read_all (all ranks' pieces overlap: each aggregator copies its window to every rank), and
 * the interleaved view again, reading back into a strided memory type. Every value is checked;
 * the file is deleted. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define B 37   /* ints per block: blocks and windows do not line up */
#define K 300  /* blocks per rank */
static int failures = 0, rank, size;
#define CHECK(c, ...) do { if (!(c)) { if (failures++ < 5) { fprintf(stderr, "rank %d line %d: ", rank, __LINE__); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } } while (0)
#define OK(call) do { int rc_ = (call); if (rc_ != MPI_SUCCESS) { char s_[MPI_MAX_ERROR_STRING]; int l_; MPI_Error_string(rc_, s_, &l_); fprintf(stderr, "rank %d line %d: %s failed: %s\n", rank, __LINE__, #call, s_); MPI_Abort(MPI_COMM_WORLD, 1); } } while (0)

/* The value of int i of the file: block i / B belongs to rank (i / B) % size. */
static int value(long i) { return (int)(i * 7 + 3); }

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* One name for all ranks: rank 0's process id. */
    long pid = (long)getpid();
    MPI_Bcast(&pid, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    char path[4096];
    snprintf(path, sizeof path, "%s/oxmpi-io-cbwin-%ld.dat", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", pid);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "cb_buffer_size", "4096");
    MPI_Info_set(info, "romio_cb_write", "enable");
    MPI_Info_set(info, "romio_cb_read", "enable");
    MPI_Datatype blocks, strided_mem;
    OK(MPI_Type_vector(K, B, B * size, MPI_INT, &blocks));
    OK(MPI_Type_commit(&blocks));
    /* Memory: every other int of a buffer twice as large. */
    OK(MPI_Type_vector(K * B, 1, 2, MPI_INT, &strided_mem));
    OK(MPI_Type_commit(&strided_mem));
    const long total = (long)K * B * size;
    int *mine = malloc(sizeof(int) * K * B), *all = malloc(sizeof(int) * total), *wide = malloc(sizeof(int) * 2 * K * B);
    for (long k = 0; k < K; k++)
        for (long j = 0; j < B; j++)
            mine[k * B + j] = value((k * size + rank) * B + j);

    MPI_File fh;
    MPI_Status st;
    int count;
    OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    OK(MPI_File_set_view(fh, (MPI_Offset)rank * B * sizeof(int), MPI_INT, blocks, "native", MPI_INFO_NULL));
    OK(MPI_File_write_all(fh, mine, K * B, MPI_INT, &st));
    OK(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == K * B, "write_all wrote %d ints", count);
    OK(MPI_File_sync(fh));

    /* Everyone reads everything: overlapping pieces. */
    OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    memset(all, 0xee, sizeof(int) * total);
    OK(MPI_File_read_all(fh, all, (int)total, MPI_INT, &st));
    OK(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == total, "read_all of the whole file read %d ints", count);
    for (long i = 0; i < total; i++)
        CHECK(all[i] == value(i), "file int %ld is %d, want %d", i, all[i], value(i));

    /* The interleaved view again, into every other int of memory. */
    OK(MPI_File_set_view(fh, (MPI_Offset)rank * B * sizeof(int), MPI_INT, blocks, "native", MPI_INFO_NULL));
    memset(wide, 0xee, sizeof(int) * 2 * K * B);
    OK(MPI_File_read_all(fh, wide, 1, strided_mem, &st));
    for (long i = 0; i < (long)K * B; i++) {
        CHECK(wide[2 * i] == mine[i], "strided read_all int %ld is %d, want %d", i, wide[2 * i], mine[i]);
        CHECK(wide[2 * i + 1] == (int)0xeeeeeeee, "strided read_all wrote between the ints (%ld)", i);
    }
    OK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        OK(MPI_File_delete(path, MPI_INFO_NULL));
    MPI_Info_free(&info);
    MPI_Type_free(&blocks);
    MPI_Type_free(&strided_mem);
    free(mine);
    free(all);
    free(wide);
    int bad = 0;
    MPI_Allreduce(&failures, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    return bad != 0;
}
