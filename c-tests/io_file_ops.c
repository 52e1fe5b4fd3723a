/* oxmpi-test: ranks=1,2,4 */
/* File manipulation (MPI 4.1 section 14.2): set_size, preallocate, get_size, get_group,
 * get_amode, hints given at open and with set_info / set_view and reported by get_info
 * (cb_buffer_size, cb_nodes, romio_cb_read/write, romio_ds_read/write, striping_factor and
 * striping_unit), MPI_MODE_APPEND, MPI_MODE_EXCL, MPI_File_c2f / f2c, opening on a
 * subcommunicator, get/set atomicity. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failures = 0, rank, size;
#define CHECK(c, ...) do { if (!(c)) { failures++; fprintf(stderr, "rank %d line %d: ", rank, __LINE__); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)
#define OK(call) do { int rc_ = (call); if (rc_ != MPI_SUCCESS) { char s_[MPI_MAX_ERROR_STRING]; int l_; MPI_Error_string(rc_, s_, &l_); fprintf(stderr, "rank %d line %d: %s failed: %s\n", rank, __LINE__, #call, s_); MPI_Abort(MPI_COMM_WORLD, 1); } } while (0)

static void hint(MPI_Info info, const char *key, const char *want) {
    char v[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    MPI_Info_get(info, key, MPI_MAX_INFO_VAL, v, &flag);
    CHECK(flag, "hint %s is not reported", key);
    if (flag && want) CHECK(strcmp(v, want) == 0, "hint %s = %s, want %s", key, v, want);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int pid = getpid();
    MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
    char name[256];
    snprintf(name, sizeof name, "/tmp/oxmpi-io_file_ops-%d", pid);
    MPI_File fh;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "cb_buffer_size", "1048576");
    MPI_Info_set(info, "romio_cb_write", "enable");
    MPI_Info_set(info, "romio_ds_read", "disable");
    OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR, info, &fh));
    MPI_Info_free(&info);
    MPI_Info used;
    OK(MPI_File_get_info(fh, &used));
    hint(used, "cb_buffer_size", "1048576");
    hint(used, "romio_cb_write", "enable");
    hint(used, "romio_ds_read", "disable");
    hint(used, "romio_cb_read", NULL);
    hint(used, "romio_ds_write", NULL);
    hint(used, "cb_nodes", NULL);
    MPI_Info_free(&used);

    MPI_Group g, wg;
    OK(MPI_File_get_group(fh, &g));
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int cmp;
    MPI_Group_compare(g, wg, &cmp);
    CHECK(cmp == MPI_IDENT, "the file's group is not MPI_COMM_WORLD's (%d)", cmp);
    MPI_Group_free(&g);
    MPI_Group_free(&wg);

    MPI_Offset sz;
    OK(MPI_File_set_size(fh, 1000));
    OK(MPI_File_get_size(fh, &sz));
    CHECK(sz == 1000, "size after set_size(1000): %lld", (long long)sz);
    OK(MPI_File_preallocate(fh, 4096));
    OK(MPI_File_get_size(fh, &sz));
    CHECK(sz == 4096, "size after preallocate(4096): %lld", (long long)sz);
    OK(MPI_File_preallocate(fh, 10));
    OK(MPI_File_get_size(fh, &sz));
    CHECK(sz == 4096, "preallocate shrank the file to %lld", (long long)sz);
    OK(MPI_File_set_size(fh, 10));
    OK(MPI_File_get_size(fh, &sz));
    CHECK(sz == 10, "size after set_size(10): %lld", (long long)sz);

    int flag = -1;
    OK(MPI_File_get_atomicity(fh, &flag));
    CHECK(flag == 0, "files start non-atomic (%d)", flag);
    OK(MPI_File_set_atomicity(fh, 1));
    OK(MPI_File_get_atomicity(fh, &flag));
    CHECK(flag == 1, "atomicity not set (%d)", flag);

    MPI_Fint f = MPI_File_c2f(fh);
    CHECK(f != 0 && MPI_File_f2c(f) == fh, "c2f/f2c do not round-trip");
    OK(MPI_File_close(&fh));
    CHECK(MPI_File_f2c(f) == MPI_FILE_NULL || MPI_File_get_size(MPI_File_f2c(f), &sz) != MPI_SUCCESS, "a closed file's Fortran handle still works");

    /* APPEND: both pointers start at the end. */
    OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_WRONLY | MPI_MODE_APPEND, MPI_INFO_NULL, &fh));
    MPI_Offset pos;
    OK(MPI_File_get_position(fh, &pos));
    CHECK(pos == 10, "MPI_MODE_APPEND position %lld", (long long)pos);
    OK(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == 10, "MPI_MODE_APPEND shared position %lld", (long long)pos);
    OK(MPI_File_close(&fh));

    /* A file of a subcommunicator: each half opens its own file. */
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    char hname[300];
    snprintf(hname, sizeof hname, "%s-half%d", name, rank % 2);
    OK(MPI_File_open(half, hname, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));
    int hr, hs;
    MPI_Comm_rank(half, &hr);
    MPI_Comm_size(half, &hs);
    OK(MPI_File_write_at_all(fh, hr, &(char){(char)('A' + rank % 2)}, 1, MPI_CHAR, MPI_STATUS_IGNORE));
    OK(MPI_File_sync(fh));
    MPI_Barrier(half);
    OK(MPI_File_sync(fh));
    OK(MPI_File_get_size(fh, &sz));
    CHECK(sz == hs, "half file size %lld, want %d", (long long)sz, hs);
    OK(MPI_File_close(&fh));
    MPI_Comm_free(&half);

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) OK(MPI_File_delete(name, MPI_INFO_NULL));
    int bad;
    MPI_Allreduce(&failures, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && bad == 0) printf("io_file_ops: OK\n");
    MPI_Finalize();
    return bad != 0;
}
