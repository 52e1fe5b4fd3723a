/* oxmpi-test: ranks=1,2,4 env=OXMPI_FIBERS=0 */
/* MPI_ERR_READ_ONLY from a read-only file system (MPI 4.1 section 14.7: "read-only file or file
 * system"), not MPI_ERR_ACCESS (permission denied): creating a file there, opening an existing
 * file MPI_MODE_RDWR or MPI_MODE_WRONLY, deleting it; MPI_MODE_RDONLY still opens and reads it.
 * The read-only file system is a tmpfs, filled and then remounted read-only, over a fresh
 * directory in a mount namespace of each rank's own (unshare(CLONE_NEWNS): a thread of a
 * threads-mode job gets one of its own too), so nothing outside the test sees it. Where that
 * cannot be made (not root, no CAP_SYS_ADMIN, no tmpfs) the test prints a note and passes
 * without checking. The directory is removed at the end. Threads-mode ranks run as kernel
 * threads here (OXMPI_FIBERS=0): a namespace belongs to a thread, which fibers would share. */
#define _GNU_SOURCE
#include <errno.h>
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

static int failures = 0, rank;
#define CHECK(c, ...) do { if (!(c)) { failures++; fprintf(stderr, "rank %d line %d: ", rank, __LINE__); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)
#define OK(call) do { int rc_ = (call); if (rc_ != MPI_SUCCESS) { char s_[MPI_MAX_ERROR_STRING]; int l_; MPI_Error_string(rc_, s_, &l_); fprintf(stderr, "rank %d line %d: %s failed: %s\n", rank, __LINE__, #call, s_); MPI_Abort(MPI_COMM_WORLD, 1); } } while (0)
#define CLASS(call, want) do { int rc_ = (call), c_ = MPI_SUCCESS; if (rc_ != MPI_SUCCESS) MPI_Error_class(rc_, &c_); CHECK(c_ == (want), "%s: class %d, want %s (%d)", #call, c_, #want, want); } while (0)

static const char content[] = "read-only file system";

/* Mounts a tmpfs holding the file `existing` over `dir`, read-only, in a new mount namespace
 * of this thread. Returns 0, or a description of the step that failed. */
static const char *make_readonly(const char *dir, const char *existing) {
    if (unshare(CLONE_NEWNS) != 0)
        return "unshare(CLONE_NEWNS)";
    /* Private from here on: the mounts below must not propagate to the parent namespace. */
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
        return "making / private";
    if (mount("oxmpi-io-ro", dir, "tmpfs", 0, "size=64k") != 0)
        return "mounting a tmpfs";
    FILE *f = fopen(existing, "w");
    if (!f || fputs(content, f) < 0 || fclose(f) != 0)
        return "writing the file";
    if (mount(NULL, dir, NULL, MS_REMOUNT | MS_RDONLY, NULL) != 0)
        return "remounting read-only";
    return 0;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char dir[4096] = "";
    if (rank == 0) {
        const char *tmp = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/oxmpi-io-ro-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(dir)) {
            fprintf(stderr, "mkdtemp %s: %s\n", dir, strerror(errno));
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
    char existing[4200], fresh[4200];
    snprintf(existing, sizeof existing, "%s/existing", dir);
    snprintf(fresh, sizeof fresh, "%s/new", dir);
    const char *why = make_readonly(dir, existing);
    int mine = why == 0, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (all) {
        MPI_File fh;
        CLASS(MPI_File_open(MPI_COMM_WORLD, fresh, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh), MPI_ERR_READ_ONLY);
        CLASS(MPI_File_open(MPI_COMM_WORLD, fresh, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh), MPI_ERR_READ_ONLY);
        CLASS(MPI_File_open(MPI_COMM_WORLD, existing, MPI_MODE_RDWR, MPI_INFO_NULL, &fh), MPI_ERR_READ_ONLY);
        CLASS(MPI_File_open(MPI_COMM_WORLD, existing, MPI_MODE_WRONLY, MPI_INFO_NULL, &fh), MPI_ERR_READ_ONLY);
        if (rank == 0)
            CLASS(MPI_File_delete(existing, MPI_INFO_NULL), MPI_ERR_READ_ONLY);
        MPI_Barrier(MPI_COMM_WORLD);
        OK(MPI_File_open(MPI_COMM_WORLD, existing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
        char buf[sizeof content] = "";
        MPI_Status st;
        OK(MPI_File_read_at_all(fh, 0, buf, (int)strlen(content), MPI_CHAR, &st));
        CHECK(memcmp(buf, content, strlen(content)) == 0, "read back '%s'", buf);
        CLASS(MPI_File_write_at(fh, 0, buf, 1, MPI_CHAR, &st), MPI_ERR_READ_ONLY);
        OK(MPI_File_close(&fh));
    } else if (rank == 0) {
        printf("io_readonly_fs: no read-only file system could be made here (%s: %s): nothing checked\n",
               why ? why : "another rank", why ? strerror(errno) : "failed");
    }
    /* Unmount in this rank's namespace (a failed attempt may have mounted nothing; ranks sharing
       a thread may have stacked mounts), then remove the directory: mounts on it in other
       namespaces do not stop that (Linux 3.18 and later). */
    while (umount2(dir, MNT_DETACH) == 0)
        ;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0 && rmdir(dir) != 0)
        CHECK(0, "rmdir %s: %s", dir, strerror(errno));
    int bad = 0;
    MPI_Allreduce(&failures, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    return bad != 0;
}
