/* oxmpi-test: ranks=1,2,4,8 */
/* MPI-IO data access (MPI 4.1 section 14.4): explicit offsets, individual file pointers,
 * collective and split collective forms, nonblocking forms completed with point-to-point
 * requests in one MPI_Waitall, short reads at the end of the file (MPI_Get_count), seeks and
 * positions, MPI_File_get_byte_offset, and the _c forms. The file is deleted on close. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N 64
static int failures = 0;
#define CHECK(c, ...) do { if (!(c)) { failures++; fprintf(stderr, "rank %d line %d: ", rank, __LINE__); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)
#define OK(call) do { int rc_ = (call); if (rc_ != MPI_SUCCESS) { char s_[MPI_MAX_ERROR_STRING]; int l_; MPI_Error_string(rc_, s_, &l_); fprintf(stderr, "rank %d line %d: %s failed: %s\n", rank, __LINE__, #call, s_); MPI_Abort(MPI_COMM_WORLD, 1); } } while (0)
static int rank, size;

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char name[256];
    int pid = getpid();
    MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
    snprintf(name, sizeof name, "/tmp/oxmpi-io_access-%d", pid);
    MPI_File fh;
    OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));
    int buf[N], got[N];
    MPI_Status st;
    int count;

    /* Explicit offsets: rank r writes ints r*N .. r*N+N-1 at its own block. */
    for (int i = 0; i < N; i++) buf[i] = rank * N + i;
    OK(MPI_File_write_at(fh, (MPI_Offset)rank * N * sizeof(int), buf, N, MPI_INT, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == N, "write_at count %d", count);
    OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_sync(fh));
    MPI_Offset fsize;
    OK(MPI_File_get_size(fh, &fsize));
    CHECK(fsize == (MPI_Offset)size * N * sizeof(int), "size %lld", (long long)fsize);
    int peer = (rank + 1) % size;
    memset(got, 0, sizeof got);
    OK(MPI_File_read_at(fh, (MPI_Offset)peer * N * sizeof(int), got, N, MPI_INT, &st));
    for (int i = 0; i < N; i++) CHECK(got[i] == peer * N + i, "read_at [%d] = %d", i, got[i]);

    /* A short read at the end of the file: the last rank's block plus N more. */
    int big[2 * N];
    OK(MPI_File_read_at(fh, (MPI_Offset)(size - 1) * N * sizeof(int), big, 2 * N, MPI_INT, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == N, "short read count %d, want %d", count, N);
    OK(MPI_File_read_at(fh, fsize + 100, big, 2 * N, MPI_INT, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == 0, "read past the end count %d", count);

    /* Collective explicit offsets, then individual pointers (after everyone read). */
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < N; i++) buf[i] = -(rank * N + i);
    OK(MPI_File_write_at_all(fh, (MPI_Offset)rank * N * sizeof(int), buf, N, MPI_INT, &st));
    OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_sync(fh));
    OK(MPI_File_seek(fh, (MPI_Offset)peer * N * sizeof(int), MPI_SEEK_SET));
    OK(MPI_File_read_all(fh, got, N / 2, MPI_INT, &st));
    OK(MPI_File_read(fh, got + N / 2, N / 2, MPI_INT, &st));
    for (int i = 0; i < N; i++) CHECK(got[i] == -(peer * N + i), "read_all/read [%d] = %d", i, got[i]);
    MPI_Offset pos, byte;
    OK(MPI_File_get_position(fh, &pos));
    CHECK(pos == (MPI_Offset)(peer + 1) * N * sizeof(int), "position %lld", (long long)pos);
    OK(MPI_File_seek(fh, -(MPI_Offset)sizeof(int), MPI_SEEK_CUR));
    OK(MPI_File_get_position(fh, &pos));
    CHECK(pos == (MPI_Offset)(peer + 1) * N * sizeof(int) - 4, "position after SEEK_CUR %lld", (long long)pos);
    OK(MPI_File_seek(fh, 0, MPI_SEEK_END));
    OK(MPI_File_get_position(fh, &pos));
    CHECK(pos == fsize, "SEEK_END position %lld", (long long)pos);
    OK(MPI_File_get_byte_offset(fh, 12, &byte));
    CHECK(byte == 12, "byte offset %lld", (long long)byte);

    /* Nonblocking I/O mixed with point-to-point in one MPI_Waitall (after everyone read). */
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Request reqs[4];
    int token = rank, in = -1;
    for (int i = 0; i < N; i++) buf[i] = 1000 + rank * N + i;
    OK(MPI_File_iwrite_at(fh, (MPI_Offset)rank * N * sizeof(int), buf, N, MPI_INT, &reqs[0]));
    MPI_Irecv(&in, 1, MPI_INT, (rank + size - 1) % size, 7, MPI_COMM_WORLD, &reqs[1]);
    MPI_Isend(&token, 1, MPI_INT, peer, 7, MPI_COMM_WORLD, &reqs[2]);
    OK(MPI_File_iread_at(fh, (MPI_Offset)rank * N * sizeof(int), got, 0, MPI_INT, &reqs[3]));
    MPI_Status sts[4];
    OK(MPI_Waitall(4, reqs, sts));
    MPI_Get_count(&sts[0], MPI_INT, &count);
    CHECK(count == N, "iwrite_at count %d", count);
    CHECK(in == (rank + size - 1) % size, "p2p in Waitall got %d", in);
    OK(MPI_File_iread_at(fh, (MPI_Offset)rank * N * sizeof(int), got, N, MPI_INT, &reqs[0]));
    int flag = 0;
    while (!flag) OK(MPI_Test(&reqs[0], &flag, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == N, "iread_at count %d", count);
    for (int i = 0; i < N; i++) CHECK(got[i] == 1000 + rank * N + i, "iread_at [%d] = %d", i, got[i]);

    /* Nonblocking collective and individual-pointer forms. */
    OK(MPI_File_seek(fh, (MPI_Offset)rank * N * sizeof(int), MPI_SEEK_SET));
    for (int i = 0; i < N; i++) buf[i] = 2000 + rank * N + i;
    OK(MPI_File_iwrite_all(fh, buf, N / 2, MPI_INT, &reqs[0]));
    OK(MPI_File_iwrite(fh, buf + N / 2, N / 2, MPI_INT, &reqs[1]));
    OK(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));
    OK(MPI_File_seek(fh, (MPI_Offset)rank * N * sizeof(int), MPI_SEEK_SET));
    OK(MPI_File_iread_all(fh, got, N / 2, MPI_INT, &reqs[0]));
    OK(MPI_Wait(&reqs[0], MPI_STATUS_IGNORE));
    OK(MPI_File_iread(fh, got + N / 2, N / 2, MPI_INT, &reqs[0]));
    OK(MPI_Wait(&reqs[0], MPI_STATUS_IGNORE));
    OK(MPI_File_iwrite_at_all(fh, (MPI_Offset)rank * N * sizeof(int), buf, 1, MPI_INT, &reqs[0]));
    OK(MPI_File_iread_at_all(fh, (MPI_Offset)rank * N * sizeof(int), &in, 1, MPI_INT, &reqs[1]));
    OK(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));
    for (int i = 0; i < N; i++) CHECK(got[i] == 2000 + rank * N + i, "iread_all/iread [%d] = %d", i, got[i]);

    /* Split collectives. */
    for (int i = 0; i < N; i++) buf[i] = 3000 + rank * N + i;
    OK(MPI_File_write_at_all_begin(fh, (MPI_Offset)rank * N * sizeof(int), buf, N, MPI_INT));
    OK(MPI_File_write_at_all_end(fh, buf, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == N, "write_at_all_end count %d", count);
    OK(MPI_File_read_at_all_begin(fh, (MPI_Offset)rank * N * sizeof(int), got, N, MPI_INT));
    OK(MPI_File_read_at_all_end(fh, got, &st));
    for (int i = 0; i < N; i++) CHECK(got[i] == 3000 + rank * N + i, "split read_at_all [%d] = %d", i, got[i]);
    OK(MPI_File_seek(fh, (MPI_Offset)rank * N * sizeof(int), MPI_SEEK_SET));
    OK(MPI_File_write_all_begin(fh, buf, N, MPI_INT));
    OK(MPI_File_write_all_end(fh, buf, &st));
    OK(MPI_File_seek(fh, (MPI_Offset)rank * N * sizeof(int), MPI_SEEK_SET));
    OK(MPI_File_read_all_begin(fh, got, N, MPI_INT));
    OK(MPI_File_read_all_end(fh, got, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == N, "read_all_end count %d", count);

    /* The large-count forms. */
    MPI_Count ccount;
    OK(MPI_File_write_at_c(fh, (MPI_Offset)rank * N * sizeof(int), buf, (MPI_Count)N, MPI_INT, &st));
    OK(MPI_File_read_at_all_c(fh, (MPI_Offset)rank * N * sizeof(int), got, (MPI_Count)N, MPI_INT, &st));
    MPI_Get_count_c(&st, MPI_INT, &ccount);
    CHECK(ccount == N, "read_at_all_c count %lld", (long long)ccount);
    OK(MPI_File_seek(fh, (MPI_Offset)rank * N * sizeof(int), MPI_SEEK_SET));
    OK(MPI_File_read_c(fh, got, (MPI_Count)N, MPI_INT, &st));
    for (int i = 0; i < N; i++) CHECK(got[i] == 3000 + rank * N + i, "read_c [%d] = %d", i, got[i]);

    /* Errors on a valid file go to its handler, MPI_ERRORS_RETURN by default. */
    int rc = MPI_File_read_at(fh, -1, got, 1, MPI_INT, &st), cls;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ARG, "negative offset gave class %d", cls);
    rc = MPI_File_seek(fh, -1, MPI_SEEK_SET);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ARG, "seek before the start gave class %d", cls);
    rc = MPI_File_write_at_all_end(fh, buf, &st);
    CHECK(rc != MPI_SUCCESS, "an _end without _begin succeeded");

    OK(MPI_File_close(&fh));
    CHECK(fh == MPI_FILE_NULL, "close did not set MPI_FILE_NULL");
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(access(name, F_OK) != 0, "MPI_MODE_DELETE_ON_CLOSE left %s", name);
    int all;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all == 0) printf("io_access: OK\n");
    MPI_Finalize();
    return all != 0;
}
