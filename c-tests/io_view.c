/* oxmpi-test: ranks=1,2,4 */
/* File views (MPI 4.1 section 14.3) and data representations (14.5): ranks interleave their
 * data through a strided (vector) filetype and a derived etype, a subarray view of a 2-D array,
 * a strided memory datatype, MPI_File_get_view / get_byte_offset / get_type_extent, external32
 * (big-endian in the file). A registered representation is io_datarep_user. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failures = 0, rank, size;
#define CHECK(c, ...) do { if (!(c)) { failures++; fprintf(stderr, "rank %d line %d: ", rank, __LINE__); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)
#define OK(call) do { int rc_ = (call); if (rc_ != MPI_SUCCESS) { char s_[MPI_MAX_ERROR_STRING]; int l_; MPI_Error_string(rc_, s_, &l_); fprintf(stderr, "rank %d line %d: %s failed: %s\n", rank, __LINE__, #call, s_); MPI_Abort(MPI_COMM_WORLD, 1); } } while (0)

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int pid = getpid();
    MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
    char name[256];
    snprintf(name, sizeof name, "/tmp/oxmpi-io_view-%d", pid);
    MPI_File fh;
    OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));

    /* Interleaved: etype = 2 ints, filetype = one etype every `size` etypes, shifted by rank. */
    enum { K = 16 };
    MPI_Datatype etype, vec, filetype;
    MPI_Type_contiguous(2, MPI_INT, &etype);
    MPI_Type_commit(&etype);
    MPI_Type_vector(1, 1, size, etype, &vec);
    MPI_Type_create_resized(vec, 0, (MPI_Aint)size * 8, &filetype);
    MPI_Type_commit(&filetype);
    MPI_Offset disp = 16;
    OK(MPI_File_set_view(fh, disp + (MPI_Offset)rank * 8, etype, filetype, "native", MPI_INFO_NULL));
    int buf[2 * K], got[2 * K];
    for (int i = 0; i < 2 * K; i++) buf[i] = rank * 1000 + i;
    OK(MPI_File_write_all(fh, buf, K, etype, MPI_STATUS_IGNORE));
    OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_sync(fh));
    MPI_Offset off;
    OK(MPI_File_get_byte_offset(fh, 3, &off));
    CHECK(off == disp + rank * 8 + 3 * size * 8, "byte offset of etype 3: %lld", (long long)off);
    OK(MPI_File_get_position(fh, &off));
    CHECK(off == K, "position after writing %d etypes: %lld", K, (long long)off);
    /* The whole file through the default view: the ranks' pairs alternate. */
    OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    int *all = malloc(sizeof(int) * 2 * K * size);
    OK(MPI_File_read_at(fh, disp, all, 2 * K * size, MPI_INT, MPI_STATUS_IGNORE));
    for (int k = 0; k < K; k++)
        for (int r = 0; r < size; r++)
            for (int j = 0; j < 2; j++)
                CHECK(all[(k * size + r) * 2 + j] == r * 1000 + 2 * k + j, "interleaved [%d][%d][%d] = %d", k, r, j, all[(k * size + r) * 2 + j]);
    free(all);

    /* get_view gives back the displacement, equivalent types and the representation. */
    OK(MPI_File_set_view(fh, disp + (MPI_Offset)rank * 8, etype, filetype, "native", MPI_INFO_NULL));
    MPI_Datatype e2, f2;
    char rep[MPI_MAX_DATAREP_STRING];
    OK(MPI_File_get_view(fh, &off, &e2, &f2, rep));
    int sz;
    MPI_Aint lb, ext;
    MPI_Type_size(f2, &sz);
    MPI_Type_get_extent(f2, &lb, &ext);
    CHECK(off == disp + rank * 8 && sz == 8 && ext == size * 8 && strcmp(rep, "native") == 0, "get_view: disp %lld size %d extent %ld rep %s", (long long)off, sz, (long)ext, rep);
    MPI_Type_free(&e2);
    MPI_Type_free(&f2);
    /* Read back with a strided memory type: every other int of `got`. */
    MPI_Datatype every_other;
    MPI_Type_vector(K, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    memset(got, 0, sizeof got);
    OK(MPI_File_read_at_all(fh, 0, got, 1, every_other, MPI_STATUS_IGNORE));
    for (int i = 0; i < K; i++) CHECK(got[2 * i] == rank * 1000 + i && got[2 * i + 1] == 0, "strided memory [%d] = %d %d", i, got[2 * i], got[2 * i + 1]);
    MPI_Aint fext;
    OK(MPI_File_get_type_extent(fh, filetype, &fext));
    CHECK(fext == size * 8, "file type extent %ld", (long)fext);

    /* A subarray view: rank r owns rows [r*R, r*R+R) of a (size*R) x C array of ints. */
    enum { R = 3, C = 5 };
    int sizes[2] = {size * R, C}, sub[2] = {R, C - 2}, starts[2] = {rank * R, 1};
    MPI_Datatype block;
    MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_C, MPI_INT, &block);
    MPI_Type_commit(&block);
    OK(MPI_File_set_view(fh, 0, MPI_INT, block, "native", MPI_INFO_NULL));
    int mine[R * (C - 2)];
    for (int i = 0; i < R * (C - 2); i++) mine[i] = 100 * rank + i;
    OK(MPI_File_write_at_all(fh, 0, mine, R * (C - 2), MPI_INT, MPI_STATUS_IGNORE));
    OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_sync(fh));
    OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    int row[C];
    OK(MPI_File_read_at(fh, (MPI_Offset)(rank * R + 1) * C, row, C, MPI_INT, MPI_STATUS_IGNORE));
    for (int j = 1; j < C - 1; j++) CHECK(row[j] == 100 * rank + (C - 2) + (j - 1), "subarray row 1 col %d = %d", j, row[j]);

    /* external32: big-endian ints in the file. */
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "external32", MPI_INFO_NULL));
    int v = 0x01020304 + rank;
    OK(MPI_File_write_at(fh, rank, &v, 1, MPI_INT, MPI_STATUS_IGNORE));
    int back = 0;
    OK(MPI_File_read_at(fh, rank, &back, 1, MPI_INT, MPI_STATUS_IGNORE));
    CHECK(back == v, "external32 round trip %x", back);
    OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    unsigned char raw[4];
    OK(MPI_File_read_at(fh, (MPI_Offset)rank * 4, raw, 4, MPI_BYTE, MPI_STATUS_IGNORE));
    CHECK(raw[0] == 1 && raw[1] == 2 && raw[2] == 3 && raw[3] == 4 + rank, "external32 bytes %02x %02x %02x %02x", raw[0], raw[1], raw[2], raw[3]);

    OK(MPI_File_close(&fh));
    MPI_Type_free(&etype); MPI_Type_free(&vec); MPI_Type_free(&filetype); MPI_Type_free(&every_other); MPI_Type_free(&block);
    int bad;
    MPI_Allreduce(&failures, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && bad == 0) printf("io_view: OK\n");
    MPI_Finalize();
    return bad != 0;
}
