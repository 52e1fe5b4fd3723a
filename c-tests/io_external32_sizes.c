/* oxmpi-test: ranks=1,2,4 mpich=skip */
/* external32 views of a type whose size in the file differs from its size in memory (MPI 4.1
 * section 14.5.2: long is 4 bytes in external32, 8 in memory on LP64): MPI_File_get_type_extent
 * gives the file's extents; a portable filetype (MPI_Type_vector of MPI_LONG, its stride in
 * elements) is scaled to the file's element size, a filetype with a byte stride
 * (MPI_Type_create_hvector) is taken as it is (section 14.5.1), darrays are laid out over the
 * global array of file elements. The ranks interleave their longs
 * in the file through each filetype with write_all; the file then holds 4-byte big-endian values
 * in rank order, read raw through a byte view, and reads back through the views (read_all and
 * independent read). The file is deleted. Not run on MPICH: ROMIO 4.0.2 keeps long 8 bytes in
 * external32 files (MPI_File_get_type_extent gives 8), against the standard's table and its own
 * MPI_Pack_external (4). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 100
static int failures = 0, rank, size;
#define CHECK(c, ...) do { if (!(c)) { failures++; fprintf(stderr, "rank %d line %d: ", rank, __LINE__); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)
#define OK(call) do { int rc_ = (call); if (rc_ != MPI_SUCCESS) { char s_[MPI_MAX_ERROR_STRING]; int l_; MPI_Error_string(rc_, s_, &l_); fprintf(stderr, "rank %d line %d: %s failed: %s\n", rank, __LINE__, #call, s_); MPI_Abort(MPI_COMM_WORLD, 1); } } while (0)

static long value(int r, int i) { return (i % 2 ? -1L : 1L) * (100000L * r + i); }

/* Writes this rank's N longs through `filetype` at displacement `disp`, checks the raw file and
 * reads them back through the view. */
static void round_trip(const char *path, MPI_Offset disp, MPI_Datatype filetype, const char *what) {
    MPI_File fh;
    MPI_Status st;
    OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    OK(MPI_File_set_size(fh, 0));
    OK(MPI_File_set_view(fh, disp, MPI_LONG, filetype, "external32", MPI_INFO_NULL));
    long out[N], in[N];
    for (int i = 0; i < N; i++)
        out[i] = value(rank, i);
    OK(MPI_File_write_all(fh, out, N, MPI_LONG, &st));
    int count = -1;
    OK(MPI_Get_count(&st, MPI_LONG, &count));
    CHECK(count == N, "%s: wrote %d longs", what, count);
    OK(MPI_File_sync(fh));
    MPI_Offset fsize = 0;
    OK(MPI_File_get_size(fh, &fsize));
    CHECK(fsize == (MPI_Offset)4 * N * size, "%s: the file has %lld bytes, want %d", what, (long long)fsize, 4 * N * size);
    /* The raw file: element i of rank r at (i * size + r) * 4, a big-endian 32-bit value. */
    OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    unsigned char *raw = calloc(4 * N * size, 1);
    OK(MPI_File_read_at_all(fh, 0, raw, 4 * N * size, MPI_BYTE, &st));
    for (int r = 0; r < size; r++)
        for (int i = 0; i < N; i++) {
            const unsigned char *b = raw + 4 * ((size_t)i * size + r);
            long v = (long)(int)((unsigned)b[0] << 24 | (unsigned)b[1] << 16 | (unsigned)b[2] << 8 | b[3]);
            CHECK(v == value(r, i), "%s: file element %d of rank %d is %ld, want %ld", what, i, r, v, value(r, i));
        }
    free(raw);
    OK(MPI_File_set_view(fh, disp, MPI_LONG, filetype, "external32", MPI_INFO_NULL));
    memset(in, 0x5a, sizeof in);
    OK(MPI_File_read_all(fh, in, N, MPI_LONG, &st));
    for (int i = 0; i < N; i++)
        CHECK(in[i] == out[i], "%s: read_all element %d is %ld, want %ld", what, i, in[i], out[i]);
    memset(in, 0x5a, sizeof in);
    OK(MPI_File_read_at(fh, 3, in, N - 3, MPI_LONG, &st));
    for (int i = 0; i < N - 3; i++)
        CHECK(in[i] == out[i + 3], "%s: read_at element %d is %ld, want %ld", what, i, in[i], out[i + 3]);
    OK(MPI_File_close(&fh));
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char path[4096];
    const char *tmp = getenv("TMPDIR");
    int token = rank == 0 ? (int)(MPI_Wtime() * 1000) % 100000 : 0;
    MPI_Bcast(&token, 1, MPI_INT, 0, MPI_COMM_WORLD);
    snprintf(path, sizeof path, "%s/oxmpi-io-ext32-%d.dat", tmp && *tmp ? tmp : "/tmp", token);

    MPI_File fh;
    OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    OK(MPI_File_set_view(fh, 0, MPI_LONG, MPI_LONG, "external32", MPI_INFO_NULL));
    MPI_Aint ext = 0;
    OK(MPI_File_get_type_extent(fh, MPI_LONG, &ext));
    CHECK(ext == 4, "MPI_LONG's extent in external32 is %ld, want 4", (long)ext);
    MPI_Datatype vec, hvec;
    OK(MPI_Type_vector(N, 1, size, MPI_LONG, &vec));
    OK(MPI_Type_commit(&vec));
    OK(MPI_File_get_type_extent(fh, vec, &ext));
    CHECK(ext == (MPI_Aint)4 * ((N - 1) * size + 1), "the vector's extent in external32 is %ld, want %d", (long)ext, 4 * ((N - 1) * size + 1));
    OK(MPI_File_close(&fh));
    OK(MPI_Type_create_hvector(N, 1, (MPI_Aint)4 * size, MPI_LONG, &hvec));
    OK(MPI_Type_commit(&hvec));

    round_trip(path, (MPI_Offset)4 * rank, vec, "vector");
    round_trip(path, (MPI_Offset)4 * rank, hvec, "hvector");
    /* darrays (portable: scaled like vector) giving the same layout: cyclic(1) over N * size
     * longs, and a column block of an N x size C-order array. */
    MPI_Datatype cyc, col;
    int g1[1] = {N * size}, d1[1] = {MPI_DISTRIBUTE_CYCLIC}, a1[1] = {1}, p1[1] = {size};
    OK(MPI_Type_create_darray(size, rank, 1, g1, d1, a1, p1, MPI_ORDER_C, MPI_LONG, &cyc));
    OK(MPI_Type_commit(&cyc));
    int g2[2] = {N, size}, d2[2] = {MPI_DISTRIBUTE_NONE, MPI_DISTRIBUTE_BLOCK}, a2[2] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG}, p2[2] = {1, size};
    OK(MPI_Type_create_darray(size, rank, 2, g2, d2, a2, p2, MPI_ORDER_C, MPI_LONG, &col));
    OK(MPI_Type_commit(&col));
    OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    OK(MPI_File_set_view(fh, 0, MPI_LONG, cyc, "external32", MPI_INFO_NULL));
    OK(MPI_File_get_type_extent(fh, cyc, &ext));
    CHECK(ext == (MPI_Aint)4 * N * size, "the darray's extent in external32 is %ld, want %d", (long)ext, 4 * N * size);
    OK(MPI_File_close(&fh));
    round_trip(path, 0, cyc, "darray cyclic");
    round_trip(path, 0, col, "darray block");
    OK(MPI_Type_free(&cyc));
    OK(MPI_Type_free(&col));

    OK(MPI_Type_free(&vec));
    OK(MPI_Type_free(&hvec));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        OK(MPI_File_delete(path, MPI_INFO_NULL));
    int bad = 0;
    MPI_Allreduce(&failures, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    return bad != 0;
}
