/* oxmpi-test: ranks=2,3,4 */
/* Collective access with default hints whose pieces interleave in the file (a vector filetype:
 * each rank a block of its own in every slot of SLOT ints per rank). oxmpi in processes mode
 * lets each rank access its own pieces when every rank's pieces are at least 8 KiB, else it
 * goes two-phase; the three cases sit on both sides of that line: every block 8 KiB (blocks
 * tile the file), every block one int short (holes between), and 8 KiB blocks except the last
 * rank's short ones. Each case writes with write_all on a fresh file, reads back with read_all
 * through the view, and rank 0 reads the whole file and checks every written value.
 * The file is deleted. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SLOT 2048 /* ints per rank and slot: 8 KiB */
#define K 40      /* slots */
static int failures = 0, rank, size;
#define CHECK(c, ...) do { if (!(c)) { if (failures++ < 5) { fprintf(stderr, "rank %d line %d: ", rank, __LINE__); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } } while (0)
#define OK(call) do { int rc_ = (call); if (rc_ != MPI_SUCCESS) { char s_[MPI_MAX_ERROR_STRING]; int l_; MPI_Error_string(rc_, s_, &l_); fprintf(stderr, "rank %d line %d: %s failed: %s\n", rank, __LINE__, #call, s_); MPI_Abort(MPI_COMM_WORLD, 1); } } while (0)

/* The value of int i of the file (written ints only); never 0. */
static int value(long i) { return (int)(i * 7 + 3); }

/* One case: rank r writes blocks of blen(r) ints at the start of its part of every slot. */
static void run(const char *path, int (*blen)(int)) {
    int b = blen(rank);
    MPI_Datatype blocks;
    OK(MPI_Type_vector(K, b, SLOT * size, MPI_INT, &blocks));
    OK(MPI_Type_commit(&blocks));
    int *mine = malloc(sizeof(int) * K * b), *back = malloc(sizeof(int) * K * b);
    for (long k = 0; k < K; k++)
        for (long j = 0; j < b; j++)
            mine[k * b + j] = value((k * size + rank) * SLOT + j);
    MPI_File fh;
    MPI_Status st;
    int count;
    OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    OK(MPI_File_set_view(fh, (MPI_Offset)rank * SLOT * sizeof(int), MPI_INT, blocks, "native", MPI_INFO_NULL));
    OK(MPI_File_write_all(fh, mine, K * b, MPI_INT, &st));
    OK(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == K * b, "write_all (blocks of %d) wrote %d ints", b, count);
    OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_sync(fh));
    OK(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    memset(back, 0xee, sizeof(int) * K * b);
    OK(MPI_File_read_all(fh, back, K * b, MPI_INT, &st));
    OK(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == K * b, "read_all (blocks of %d) read %d ints", b, count);
    for (long i = 0; i < (long)K * b; i++)
        CHECK(back[i] == mine[i], "read_all (blocks of %d): int %ld is %d, want %d", b, i, back[i], mine[i]);
    OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    if (rank == 0) {
        /* The file ends with the last rank's last block. */
        long n = ((long)(K - 1) * size + size - 1) * SLOT + blen(size - 1);
        int *all = malloc(sizeof(int) * n);
        OK(MPI_File_read_at(fh, 0, all, (int)n, MPI_INT, &st));
        OK(MPI_Get_count(&st, MPI_INT, &count));
        CHECK(count == n, "the file holds %d ints, want %ld", count, n);
        /* Only written ints: ROMIO may fill holes past the end of the file from its buffer. */
        for (long i = 0; i < n; i++)
            if (i % SLOT < blen((int)(i / SLOT % size)))
                CHECK(all[i] == value(i), "file int %ld (blocks of %d) is %d, want %d", i, b, all[i], value(i));
        free(all);
    }
    OK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        OK(MPI_File_delete(path, MPI_INFO_NULL));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Type_free(&blocks);
    free(mine);
    free(back);
}

static int full(int r) { (void)r; return SLOT; }
static int short_by_one(int r) { (void)r; return SLOT - 1; }
static int last_short(int r) { return r == size - 1 ? 100 : SLOT; }

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* One name for all ranks: rank 0's process id. */
    long pid = (long)getpid();
    MPI_Bcast(&pid, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    char path[4096];
    snprintf(path, sizeof path, "%s/oxmpi-io-large-%ld.dat", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", pid);
    run(path, full);
    run(path, short_by_one);
    run(path, last_short);
    int bad = 0;
    MPI_Allreduce(&failures, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    return bad != 0;
}
