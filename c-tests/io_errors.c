/* oxmpi-test: ranks=1,2,4 */
/* MPI-IO error classes (MPI 4.1 sections 14.2, 14.5 and 14.7) under the files' default error
 * handler, MPI_ERRORS_RETURN: MPI_ERR_AMODE, MPI_ERR_NO_SUCH_FILE, MPI_ERR_FILE_EXISTS,
 * MPI_ERR_ACCESS, MPI_ERR_READ_ONLY, MPI_ERR_FILE, MPI_ERR_BAD_FILE, MPI_ERR_UNSUPPORTED_DATAREP,
 * MPI_ERR_DUP_DATAREP, MPI_ERR_UNSUPPORTED_OPERATION, MPI_ERR_COMM; a user handler set on
 * MPI_FILE_NULL receives the errors of MPI_File_open and is inherited by new files; files'
 * get/set/call errhandler. Everything created is deleted. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

static int failures = 0, rank, size;
#define CHECK(c, ...) do { if (!(c)) { failures++; fprintf(stderr, "rank %d line %d: ", rank, __LINE__); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)
#define OK(call) do { int rc_ = (call); if (rc_ != MPI_SUCCESS) { char s_[MPI_MAX_ERROR_STRING]; int l_; MPI_Error_string(rc_, s_, &l_); fprintf(stderr, "rank %d line %d: %s failed: %s\n", rank, __LINE__, #call, s_); MPI_Abort(MPI_COMM_WORLD, 1); } } while (0)
#define CLASS(call, want) do { int rc_ = (call), c_ = MPI_SUCCESS; if (rc_ != MPI_SUCCESS) MPI_Error_class(rc_, &c_); CHECK(c_ == (want), "%s: class %d, want %s (%d)", #call, c_, #want, want); } while (0)

static int handled = 0;
static void on_file(MPI_File *fh, int *code, ...) {
    (void)fh;
    (void)code;
    handled++;
}
static int ext(MPI_Datatype t, MPI_Aint *e, void *x) {
    (void)x;
    return MPI_Type_get_extent(t, &(MPI_Aint){0}, e);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int pid = getpid();
    MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
    char name[256], missing[256], dir[256];
    snprintf(name, sizeof name, "/tmp/oxmpi-io_errors-%d", pid);
    snprintf(missing, sizeof missing, "/tmp/oxmpi-io_errors-%d-missing", pid);
    snprintf(dir, sizeof dir, "/tmp/oxmpi-io_errors-%d-dir", pid);
    MPI_File fh = MPI_FILE_NULL;
    MPI_Errhandler eh;

    OK(MPI_File_get_errhandler(MPI_FILE_NULL, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "MPI_FILE_NULL's handler is not MPI_ERRORS_RETURN");

    /* Access modes. */
    CLASS(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE, MPI_INFO_NULL, &fh), MPI_ERR_AMODE);
    CLASS(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDWR | MPI_MODE_WRONLY | MPI_MODE_CREATE, MPI_INFO_NULL, &fh), MPI_ERR_AMODE);
    CLASS(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY | MPI_MODE_CREATE, MPI_INFO_NULL, &fh), MPI_ERR_AMODE);
    CLASS(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY | MPI_MODE_EXCL, MPI_INFO_NULL, &fh), MPI_ERR_AMODE);
    CLASS(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDWR | MPI_MODE_SEQUENTIAL | MPI_MODE_CREATE, MPI_INFO_NULL, &fh), MPI_ERR_AMODE);
    CHECK(fh == MPI_FILE_NULL, "a failed open set the handle");

    /* Missing files, existing files, directories. */
    CLASS(MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh), MPI_ERR_NO_SUCH_FILE);
    if (rank == 0) CLASS(MPI_File_delete(missing, MPI_INFO_NULL), MPI_ERR_NO_SUCH_FILE);
    OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    int amode;
    OK(MPI_File_get_amode(fh, &amode));
    CHECK(amode == (MPI_MODE_CREATE | MPI_MODE_WRONLY), "amode %d", amode);
    OK(MPI_File_get_errhandler(fh, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "a new file's handler is not MPI_ERRORS_RETURN");
    int x = 42;
    CLASS(MPI_File_read_at(fh, 0, &x, 1, MPI_INT, MPI_STATUS_IGNORE), MPI_ERR_ACCESS);
    OK(MPI_File_write_at(fh, rank * 4, &x, 1, MPI_INT, MPI_STATUS_IGNORE));
    CLASS(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "no-such-datarep", MPI_INFO_NULL), MPI_ERR_UNSUPPORTED_DATAREP);
    OK(MPI_File_close(&fh));
    CLASS(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR, MPI_INFO_NULL, &fh), MPI_ERR_FILE_EXISTS);
    OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    /* Writing a file opened MPI_MODE_RDONLY: MPI_ERR_READ_ONLY, as ROMIO says (reading a
       MPI_MODE_WRONLY file above is MPI_ERR_ACCESS). */
    CLASS(MPI_File_write_at(fh, 0, &x, 1, MPI_INT, MPI_STATUS_IGNORE), MPI_ERR_READ_ONLY);
    CLASS(MPI_File_set_size(fh, 0), MPI_ERR_READ_ONLY);
    OK(MPI_File_read_at(fh, 0, &x, 1, MPI_INT, MPI_STATUS_IGNORE));
    CHECK(x == 42, "read %d", x);
    MPI_File closed = fh;
    OK(MPI_File_close(&fh));
    CLASS(MPI_File_get_amode(closed, &amode), MPI_ERR_FILE);
    CLASS(MPI_File_get_amode(MPI_FILE_NULL, &amode), MPI_ERR_FILE);
    CLASS(MPI_File_close(&closed), MPI_ERR_FILE);
    CHECK(MPI_File_c2f(MPI_FILE_NULL) == 0 && MPI_File_f2c(0) == MPI_FILE_NULL, "MPI_FILE_NULL converts");
    if (rank == 0) {
        OK(MPI_File_delete(name, MPI_INFO_NULL));
        mkdir(dir, 0700);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CLASS(MPI_File_open(MPI_COMM_WORLD, dir, MPI_MODE_RDWR, MPI_INFO_NULL, &fh), MPI_ERR_BAD_FILE);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) rmdir(dir);

    /* Sequential files have only the shared file pointer. */
    OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_SEQUENTIAL | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));
    CLASS(MPI_File_seek(fh, 0, MPI_SEEK_SET), MPI_ERR_UNSUPPORTED_OPERATION);
    CLASS(MPI_File_write(fh, &x, 1, MPI_INT, MPI_STATUS_IGNORE), MPI_ERR_UNSUPPORTED_OPERATION);
    OK(MPI_File_write_shared(fh, &x, 1, MPI_INT, MPI_STATUS_IGNORE));
    OK(MPI_File_close(&fh));

    /* Data representations. */
    OK(MPI_Register_datarep("oxmpi-io-errors-rep", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, ext, NULL));
    CLASS(MPI_Register_datarep("oxmpi-io-errors-rep", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, ext, NULL), MPI_ERR_DUP_DATAREP);

    /* Intercommunicators cannot open files. */
    if (size >= 2) {
        MPI_Comm half, inter;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 5, &inter);
        CLASS(MPI_File_open(inter, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh), MPI_ERR_COMM);
        MPI_Comm_free(&inter);
        MPI_Comm_free(&half);
    }

    /* A user handler on MPI_FILE_NULL gets open's errors and is inherited by new files;
     * MPI_File_call_errhandler calls a file's handler. */
    MPI_Errhandler mine;
    OK(MPI_File_create_errhandler(on_file, &mine));
    OK(MPI_File_set_errhandler(MPI_FILE_NULL, mine));
    handled = 0;
    CLASS(MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh), MPI_ERR_NO_SUCH_FILE);
    CHECK(handled == 1, "open's error reached MPI_FILE_NULL's handler %d times", handled);
    OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));
    OK(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN));
    OK(MPI_File_get_errhandler(fh, &eh));
    CHECK(eh == mine, "the new file did not inherit MPI_FILE_NULL's handler");
    handled = 0;
    CLASS(MPI_File_read_at(fh, -5, &x, 1, MPI_INT, MPI_STATUS_IGNORE), MPI_ERR_ARG);
    OK(MPI_File_call_errhandler(fh, MPI_ERR_IO));
    CHECK(handled == 2, "the file's handler ran %d times, want 2", handled);
    OK(MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN));
    OK(MPI_File_close(&fh));

    int all;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all == 0) printf("io_errors: OK\n");
    MPI_Finalize();
    return all != 0;
}
