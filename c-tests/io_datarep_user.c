/* oxmpi-test: ranks=1,2,4 mpich=skip */
/* A data representation registered with MPI_Register_datarep (MPI 4.1 section 14.5.3) whose
 * conversion functions oxmpi calls: this one stores ints as their bitwise complement. MPICH
 * 4.0.2 refuses conversion functions ("currently not supported by MPI-IO"), hence mpich=skip. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failures = 0, rank, size;
#define CHECK(c, ...) do { if (!(c)) { failures++; fprintf(stderr, "rank %d line %d: ", rank, __LINE__); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)
#define OK(call) do { int rc_ = (call); if (rc_ != MPI_SUCCESS) { char s_[MPI_MAX_ERROR_STRING]; int l_; MPI_Error_string(rc_, s_, &l_); fprintf(stderr, "rank %d line %d: %s failed: %s\n", rank, __LINE__, #call, s_); MPI_Abort(MPI_COMM_WORLD, 1); } } while (0)

static int conversions = 0;
/* Writes (to the file) and reads (from it) ints as their bitwise complement. */
static int invert(void *userbuf, MPI_Datatype dt, int count, void *filebuf, MPI_Offset pos, void *x, int to_file) {
    (void)pos; (void)x;
    CHECK(dt == MPI_INT, "the conversion function got another datatype handle than MPI_INT");
    int *u = userbuf, *f = filebuf;
    for (int i = 0; i < count; i++) {
        if (to_file) f[i] = ~u[i]; else u[i] = ~f[i];
    }
    conversions++;
    return MPI_SUCCESS;
}
static int wconv(void *u, MPI_Datatype dt, int n, void *f, MPI_Offset p, void *x) { return invert(u, dt, n, f, p, x, 1); }
static int rconv(void *u, MPI_Datatype dt, int n, void *f, MPI_Offset p, void *x) { return invert(u, dt, n, f, p, x, 0); }
static int extent4(MPI_Datatype dt, MPI_Aint *e, void *x) {
    (void)x;
    CHECK(dt == MPI_INT, "the extent function got another datatype handle than MPI_INT");
    *e = 4;
    return MPI_SUCCESS;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int pid = getpid();
    MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
    char name[256];
    snprintf(name, sizeof name, "/tmp/oxmpi-io_datarep_user-%d", pid);
    MPI_File fh;
    OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));
    /* A registered representation: the conversion functions run on write and read. */
    OK(MPI_Register_datarep("oxmpi-invert", rconv, wconv, extent4, NULL));
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "oxmpi-invert", MPI_INFO_NULL));
    int w[4] = {rank, 7, -1, 12345}, r4[4] = {0};
    OK(MPI_File_write_at(fh, 4 * rank, w, 4, MPI_INT, MPI_STATUS_IGNORE));
    OK(MPI_File_read_at(fh, 4 * rank, r4, 4, MPI_INT, MPI_STATUS_IGNORE));
    for (int i = 0; i < 4; i++) CHECK(r4[i] == w[i], "user datarep round trip [%d] = %d", i, r4[i]);
    CHECK(conversions >= 2, "the conversion functions ran %d times", conversions);
    OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    OK(MPI_File_read_at(fh, 4 * rank, r4, 4, MPI_INT, MPI_STATUS_IGNORE));
    for (int i = 0; i < 4; i++) CHECK(r4[i] == ~w[i], "user datarep file bytes [%d] = %d", i, r4[i]);

    MPI_Aint ext;
    OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "oxmpi-invert", MPI_INFO_NULL));
    OK(MPI_File_get_type_extent(fh, MPI_INT, &ext));
    CHECK(ext == 4, "type extent in the representation: %ld", (long)ext);
    OK(MPI_File_close(&fh));
    int bad;
    MPI_Allreduce(&failures, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && bad == 0) printf("io_datarep_user: OK\n");
    MPI_Finalize();
    return bad != 0;
}
