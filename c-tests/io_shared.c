/* oxmpi-test: ranks=1,2,4,8 */
/* Shared file pointers (MPI 4.1 section 14.4.4): every rank appends records with
 * MPI_File_write_shared (each lands once, whole, somewhere), MPI_File_write_ordered and its split
 * form place the ranks' pieces in rank order, MPI_File_read_ordered and read_shared read them
 * back, MPI_File_seek_shared / get_position_shared, nonblocking shared access, and a
 * MPI_MODE_SEQUENTIAL file with MPI_DISPLACEMENT_CURRENT. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failures = 0, rank, size;
#define CHECK(c, ...) do { if (!(c)) { failures++; fprintf(stderr, "rank %d line %d: ", rank, __LINE__); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)
#define OK(call) do { int rc_ = (call); if (rc_ != MPI_SUCCESS) { char s_[MPI_MAX_ERROR_STRING]; int l_; MPI_Error_string(rc_, s_, &l_); fprintf(stderr, "rank %d line %d: %s failed: %s\n", rank, __LINE__, #call, s_); MPI_Abort(MPI_COMM_WORLD, 1); } } while (0)

enum { REC = 8, NREC = 5 };

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int pid = getpid();
    MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
    char name[256];
    snprintf(name, sizeof name, "/tmp/oxmpi-io_shared-%d", pid);
    MPI_File fh;
    OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));
    OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));

    /* Records appended through the shared pointer: NREC per rank, each [rank, k, rank, ...]. */
    int rec[REC];
    for (int k = 0; k < NREC; k++) {
        for (int i = 0; i < REC; i++) rec[i] = i % 2 ? k : rank;
        MPI_Request r;
        if (k % 2) {
            OK(MPI_File_iwrite_shared(fh, rec, REC, MPI_INT, &r));
            OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        } else {
            OK(MPI_File_write_shared(fh, rec, REC, MPI_INT, MPI_STATUS_IGNORE));
        }
    }
    OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_sync(fh));
    MPI_Offset pos;
    OK(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == (MPI_Offset)size * NREC * REC, "shared position %lld", (long long)pos);
    int total = size * NREC;
    int *all = malloc(sizeof(int) * REC * total), *seen = calloc(size * NREC, sizeof(int));
    OK(MPI_File_read_at(fh, 0, all, REC * total, MPI_INT, MPI_STATUS_IGNORE));
    for (int j = 0; j < total; j++) {
        int r = all[j * REC], k = all[j * REC + 1];
        int whole = r >= 0 && r < size && k >= 0 && k < NREC;
        for (int i = 0; whole && i < REC; i++) whole = all[j * REC + i] == (i % 2 ? k : r);
        CHECK(whole, "record %d is torn or foreign", j);
        if (whole) seen[r * NREC + k]++;
    }
    for (int j = 0; j < total; j++) CHECK(seen[j] == 1, "record %d/%d written %d times", j / NREC, j % NREC, seen[j]);

    /* Ordered: rank r writes r+1 ints of value r, in rank order after the records. */
    MPI_Barrier(MPI_COMM_WORLD);
    int piece[16];
    for (int i = 0; i <= rank; i++) piece[i] = rank;
    OK(MPI_File_write_ordered(fh, piece, rank + 1, MPI_INT, MPI_STATUS_IGNORE));
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_get_position_shared(fh, &pos));
    int tri = size * (size + 1) / 2;
    /* Checked on rank 0 only: MPICH 4.0.2's other ranks see one etype more. */
    if (rank == 0) CHECK(pos == (MPI_Offset)REC * total + tri, "shared position after write_ordered %lld", (long long)pos);
    OK(MPI_File_write_ordered_begin(fh, piece, rank + 1, MPI_INT));
    OK(MPI_File_write_ordered_end(fh, piece, MPI_STATUS_IGNORE));
    OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_sync(fh));
    /* Read them back in order from the start of the ordered part. */
    OK(MPI_File_seek_shared(fh, (MPI_Offset)REC * total, MPI_SEEK_SET));
    int in[16], count;
    MPI_Status st;
    for (int pass = 0; pass < 2; pass++) {
        memset(in, -1, sizeof in);
        if (pass == 0) {
            OK(MPI_File_read_ordered(fh, in, rank + 1, MPI_INT, &st));
        } else {
            OK(MPI_File_read_ordered_begin(fh, in, rank + 1, MPI_INT));
            OK(MPI_File_read_ordered_end(fh, in, &st));
        }
        MPI_Get_count(&st, MPI_INT, &count);
        CHECK(count == rank + 1, "read_ordered count %d", count);
        for (int i = 0; i <= rank; i++) CHECK(in[i] == rank, "pass %d: ordered [%d] = %d", pass, i, in[i]);
    }
    /* At the end of the file: read_shared is short (empty). */
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_read_shared(fh, in, 4, MPI_INT, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == 0, "read_shared at the end: count %d", count);
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_END));
    OK(MPI_File_seek_shared(fh, (MPI_Offset)REC * total + 2 * tri, MPI_SEEK_SET));
    OK(MPI_File_seek_shared(fh, -(MPI_Offset)REC, MPI_SEEK_CUR));
    OK(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == (MPI_Offset)REC * total + 2 * tri - REC, "SEEK_CUR shared position %lld", (long long)pos);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Request r;
    if (rank == 0) {
        OK(MPI_File_iread_shared(fh, in, REC, MPI_INT, &r));
        OK(MPI_Wait(&r, &st));
        MPI_Get_count(&st, MPI_INT, &count);
        CHECK(count == REC && in[REC - 1] == size - 1, "iread_shared count %d last %d", count, in[REC - 1]);
    }
    OK(MPI_File_close(&fh));

    /* A sequential file: shared pointer only; MPI_DISPLACEMENT_CURRENT continues where it is. */
    OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_SEQUENTIAL | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));
    char c = 'a' + rank % 26;
    OK(MPI_File_write_ordered(fh, &c, 1, MPI_CHAR, MPI_STATUS_IGNORE));
    OK(MPI_File_set_view(fh, MPI_DISPLACEMENT_CURRENT, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    MPI_Offset d;
    MPI_Datatype e, f;
    char rep[MPI_MAX_DATAREP_STRING];
    OK(MPI_File_get_view(fh, &d, &e, &f, rep));
    CHECK(d == size, "MPI_DISPLACEMENT_CURRENT gave %lld, want %d", (long long)d, size);
    OK(MPI_File_write_ordered(fh, &rank, 1, MPI_INT, MPI_STATUS_IGNORE));
    OK(MPI_File_get_size(fh, &d));
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_get_size(fh, &d));
    CHECK(d == size + 4 * size, "sequential file size %lld", (long long)d);
    OK(MPI_File_close(&fh));
    free(all);
    free(seen);
    int bad;
    MPI_Allreduce(&failures, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && bad == 0) printf("io_shared: OK\n");
    MPI_Finalize();
    return bad != 0;
}
