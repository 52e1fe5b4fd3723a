/* oxmpi-test: ranks=2,4,8 timeout=120 */
/* Many nonblocking collective accesses outstanding at once (MPI 4.1 section 14.4.1) on two files
 * whose views interleave the ranks' ints (the case of two-phase I/O): K iwrite_at_all on one
 * file and K iwrite_all on the other, started in the same order everywhere but at different
 * times (odd ranks first wait for a message the even ranks send only after starting theirs: a
 * call that waited for the other ranks would deadlock); a blocking collective write on the first
 * file and an MPI_Allreduce while they are outstanding; all completed with point-to-point
 * requests in one MPI_Waitall, in reverse order; then read back with iread_at_all / iread_all
 * completed by MPI_Waitany and checked, with every count. Both files are deleted. */
#include "oxtest.h"
#include <unistd.h>

#define K 6
#define N 2048 /* ints per access and rank */

static int value(int f, int r, int k, int i) { return ((f * 64 + r) * 16 + k) * 100003 + i; }

int main(int argc, char **argv)
{
    int rank, size;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int pid = getpid();
    MPI_OK(MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD));
    char name[2][256];
    MPI_File fh[2];
    MPI_Datatype vec, ft;
    MPI_OK(MPI_Type_vector(N, 1, size, MPI_INT, &vec));
    MPI_OK(MPI_Type_create_resized(vec, 0, (MPI_Aint)N * size * sizeof(int), &ft));
    MPI_OK(MPI_Type_commit(&ft));
    for (int f = 0; f < 2; f++) {
        snprintf(name[f], sizeof name[f], "/tmp/oxmpi-io_nonblocking_coll-%d-%d", pid, f);
        MPI_OK(MPI_File_open(MPI_COMM_WORLD, name[f], MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh[f]));
        MPI_OK(MPI_File_set_view(fh[f], rank * sizeof(int), MPI_INT, ft, "native", MPI_INFO_NULL));
    }
    int *out = malloc(sizeof(int) * 2 * (K + 1) * N), *in = malloc(sizeof(int) * 2 * (K + 1) * N);
    for (int f = 0; f < 2; f++)
        for (int k = 0; k <= K; k++)
            for (int i = 0; i < N; i++)
                out[(f * (K + 1) + k) * N + i] = value(f, rank, k, i);
#define BUF(b, f, k) (&(b)[((f) * (K + 1) + (k)) * N])
    MPI_Request reqs[2 * K + 2];
    MPI_Status sts[2 * K + 2];
    int token = 7, got = 0;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_OK(MPI_Irecv(&got, 1, MPI_INT, left, 1, MPI_COMM_WORLD, &reqs[2 * K]));
    if (rank % 2 == 1)
        MPI_OK(MPI_Recv(&token, 1, MPI_INT, rank - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int k = 0; k < K; k++) {
        /* File 0: explicit offsets, blocks k = 0..K-1; file 1: the individual pointer. */
        MPI_OK(MPI_File_iwrite_at_all(fh[0], (MPI_Offset)k * N, BUF(out, 0, k), N, MPI_INT, &reqs[k]));
        MPI_OK(MPI_File_iwrite_all(fh[1], BUF(out, 1, k), N, MPI_INT, &reqs[K + k]));
    }
    if (rank % 2 == 0 && rank + 1 < size)
        MPI_OK(MPI_Send(&token, 1, MPI_INT, rank + 1, 0, MPI_COMM_WORLD));
    /* A blocking collective on the same file, and another on the world, meanwhile. */
    MPI_Status st;
    MPI_OK(MPI_File_write_at_all(fh[0], (MPI_Offset)K * N, BUF(out, 0, K), N, MPI_INT, &st));
    int n = -1;
    MPI_OK(MPI_Get_count(&st, MPI_INT, &n));
    CHECK(n == N, "write_at_all count %d", n);
    int sum = 0;
    MPI_OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum == size * (size - 1) / 2, "allreduce %d", sum);
    MPI_OK(MPI_Isend(&token, 1, MPI_INT, right, 1, MPI_COMM_WORLD, &reqs[2 * K + 1]));
    /* Reverse order. */
    for (int i = 0; i < K + 1; i++) {
        MPI_Request t = reqs[i];
        reqs[i] = reqs[2 * K + 1 - i];
        reqs[2 * K + 1 - i] = t;
    }
    MPI_OK(MPI_Waitall(2 * K + 2, reqs, sts));
    CHECK(got == 7, "token %d", got);
    for (int j = 0; j < 2 * K + 2; j++) {
        if (j < 2)
            continue; /* the point-to-point ones (swapped to the front) */
        MPI_OK(MPI_Get_count(&sts[j], MPI_INT, &n));
        CHECK(n == N, "collective write %d: count %d", j, n);
    }
    MPI_Offset pos = -1;
    MPI_OK(MPI_File_get_position(fh[1], &pos));
    CHECK(pos == (MPI_Offset)K * N, "file 1 position %lld", (long long)pos);
    for (int f = 0; f < 2; f++)
        MPI_OK(MPI_File_sync(fh[f]));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int f = 0; f < 2; f++)
        MPI_OK(MPI_File_sync(fh[f]));

    /* Read back through the views, a nonblocking collective read on each file at a time (ROMIO
     * 4.0.2 mixes up several outstanding on one file), completed by MPI_Waitany. */
    memset(in, 0xff, sizeof(int) * 2 * (K + 1) * N);
    MPI_OK(MPI_File_seek(fh[1], 0, MPI_SEEK_SET));
    for (int k = 0; k <= K; k++) {
        int nr = k < K ? 2 : 1;
        MPI_OK(MPI_File_iread_at_all(fh[0], (MPI_Offset)k * N, BUF(in, 0, k), N, MPI_INT, &reqs[0]));
        if (k < K)
            MPI_OK(MPI_File_iread_all(fh[1], BUF(in, 1, k), N, MPI_INT, &reqs[1]));
        for (int d = 0; d < nr; d++) {
            int idx = -1;
            MPI_OK(MPI_Waitany(nr, reqs, &idx, &st));
            CHECK(idx >= 0, "MPI_Waitany index %d", idx);
            MPI_OK(MPI_Get_count(&st, MPI_INT, &n));
            CHECK(n == N, "collective read %d of block %d: count %d", idx, k, n);
        }
    }
    for (int f = 0; f < 2; f++)
        for (int k = 0; k < (f ? K : K + 1); k++)
            for (int i = 0; i < N; i++)
                CHECK(BUF(in, f, k)[i] == value(f, rank, k, i), "file %d block %d [%d] = %d, expected %d", f, k, i,
                      BUF(in, f, k)[i], value(f, rank, k, i));
    /* The ranks' ints interleave in the file: int j*size + r of block 0 is rank r's j-th. */
    MPI_OK(MPI_File_set_view(fh[0], 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    int probe = -1;
    MPI_OK(MPI_File_read_at(fh[0], (MPI_Offset)5 * size + left, &probe, 1, MPI_INT, MPI_STATUS_IGNORE));
    CHECK(probe == value(0, left, 0, 5), "int %d of file 0 is %d", 5 * size + left, probe);

    for (int f = 0; f < 2; f++)
        MPI_OK(MPI_File_close(&fh[f]));
    MPI_OK(MPI_Type_free(&ft));
    MPI_OK(MPI_Type_free(&vec));
    free(out);
    free(in);
    MPI_OK(MPI_Finalize());
    return 0;
}
