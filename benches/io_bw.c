/* MPI-IO bandwidth: a global 2-D array of doubles (rows x cols, row-major in the file) written and
 * read back in three patterns:
 *   coll     each rank a 2-D block of a process grid (MPI_Dims_create), seen through a subarray
 *            filetype view (strided in the file: one segment per row of the block),
 *            MPI_File_write_all / MPI_File_read_all
 *   contig   each rank one contiguous slab of the file, MPI_File_write_at / MPI_File_read_at
 *   strided  the same subarray view as coll, MPI_File_write / MPI_File_read (independent)
 * Each timed phase is open + view + one data call + close, between barriers; bandwidth is the
 * whole array over the slowest rank's time, the best of -r repetitions. Every read is checked
 * element by element (untimed), and after each pattern's first write every rank also reads its
 * part of the file contiguously, without a view, and checks it: element i of the file must hold i,
 * so a view that is ignored on both write and read cannot pass. The file is deleted after each
 * repetition. Standard MPI only.
 *
 * Usage: io_bw [-s MiB] [-r reps] [-c cols] [-p patterns] [-S] [-d dir]
 *   -s  total array size in MiB (default 64), -r repetitions (default 3), -c columns (default
 *   4096), -p comma-separated patterns (default coll,contig,strided), -S MPI_File_sync before
 *   closing a written file (timed), -d directory for the file (default $TMPDIR, else /tmp).
 * Output: '# ...' lines, then one line per pattern and operation:
 *   result PATTERN OP NP MIB FSTYPE MB_PER_S
 * Exit status 1 on any MPI error or wrong data. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>

static int rank, nprocs;

#define BENCH_NAME "io_bw"
#include "mpi_check.h"

static void die(const char *msg) {
    if (rank == 0)
        fprintf(stderr, "io_bw: %s\n", msg);
    MPI_Finalize();
    exit(2);
}

static const char *fs_name(const char *dir) {
    struct statfs s;
    if (statfs(dir, &s) != 0)
        return "unknown";
    switch ((unsigned long)s.f_type) {
    case 0x01021994UL: return "tmpfs";
    case 0xEF53UL: return "ext4";
    case 0x58465342UL: return "xfs";
    case 0x9123683EUL: return "btrfs";
    case 0x794C7630UL: return "overlayfs";
    case 0x6969UL: return "nfs";
    default: return "other";
    }
}

/* The layout: a block per rank of a pr x pc grid, and a contiguous slab per rank. */
struct layout {
    long long rows, cols;    /* global array */
    int pr, pc;              /* process grid */
    long long brows, bcols;  /* this rank's block */
    long long r0, c0;        /* its first row and column */
    long long slab, slab0;   /* contiguous: elements per rank, first element */
    MPI_Datatype block_view; /* subarray of the global array */
};

static double *fill_block(double *buf, const struct layout *l) {
    for (long long i = 0; i < l->brows; i++)
        for (long long j = 0; j < l->bcols; j++)
            buf[i * l->bcols + j] = (double)((l->r0 + i) * l->cols + l->c0 + j);
    return buf;
}

static double *fill_slab(double *buf, const struct layout *l) {
    for (long long i = 0; i < l->slab; i++)
        buf[i] = (double)(l->slab0 + i);
    return buf;
}

/* Counts the elements of buf that differ from the values fill would put there; reports a few. */
static long long verify(const double *buf, const double *want, long long n, const char *what) {
    long long bad = 0;
    for (long long i = 0; i < n; i++)
        if (buf[i] != want[i] && bad++ < 3)
            fprintf(stderr, "io_bw: rank %d: %s: element %lld is %.0f, expected %.0f\n", rank, what,
                    i, buf[i], want[i]);
    return bad;
}

enum pattern { COLL, CONTIG, STRIDED };
static const char *pattern_name[] = {"coll", "contig", "strided"};

/* One timed phase: open, view, one data call, (sync), close. Returns the slowest rank's seconds. */
static double phase(enum pattern p, int write, const char *path, double *buf,
                    const struct layout *l, int sync) {
    MPI_File fh;
    MPI_Status st;
    int amode = write ? MPI_MODE_CREATE | MPI_MODE_WRONLY : MPI_MODE_RDONLY;
    long long n = p == CONTIG ? l->slab : l->brows * l->bcols;
    if (n > 0x7fffffffLL)
        die("a rank's part exceeds 2^31 elements; use more ranks or a smaller -s");
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    CHECK(MPI_File_open(MPI_COMM_WORLD, path, amode, MPI_INFO_NULL, &fh));
    if (p == CONTIG) {
        MPI_Offset off = (MPI_Offset)l->slab0 * (MPI_Offset)sizeof(double);
        if (write)
            CHECK(MPI_File_write_at(fh, off, buf, (int)n, MPI_DOUBLE, &st));
        else
            CHECK(MPI_File_read_at(fh, off, buf, (int)n, MPI_DOUBLE, &st));
    } else {
        CHECK(MPI_File_set_view(fh, 0, MPI_DOUBLE, l->block_view, "native", MPI_INFO_NULL));
        if (p == COLL && write)
            CHECK(MPI_File_write_all(fh, buf, (int)n, MPI_DOUBLE, &st));
        else if (p == COLL)
            CHECK(MPI_File_read_all(fh, buf, (int)n, MPI_DOUBLE, &st));
        else if (write)
            CHECK(MPI_File_write(fh, buf, (int)n, MPI_DOUBLE, &st));
        else
            CHECK(MPI_File_read(fh, buf, (int)n, MPI_DOUBLE, &st));
    }
    int got = -1;
    CHECK(MPI_Get_count(&st, MPI_DOUBLE, &got));
    if (got != (int)n) {
        fprintf(stderr, "io_bw: rank %d: %s %s transferred %d of %lld elements\n", rank,
                pattern_name[p], write ? "write" : "read", got, n);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (write && sync)
        CHECK(MPI_File_sync(fh));
    CHECK(MPI_File_close(&fh));
    double dt = MPI_Wtime() - t0, slowest = 0;
    MPI_Allreduce(&dt, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return slowest;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    long long mib = 64, cols = 4096;
    int reps = 3, sync = 0;
    int want[3] = {1, 1, 1};
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    /* Only rank 0 parses the options and tells the others: getopt's state is libc's, which the
       ranks of a threads-mode job share, so ranks parsing at once would misread them. */
    int opt;
    while (rank == 0 && (opt = getopt(argc, argv, "s:r:c:p:d:S")) != -1) {
        switch (opt) {
        case 's': mib = atoll(optarg); break;
        case 'r': reps = atoi(optarg); break;
        case 'c': cols = atoll(optarg); break;
        case 'd': dir = optarg; break;
        case 'S': sync = 1; break;
        case 'p': {
            want[0] = strstr(optarg, "coll") != NULL;
            want[1] = strstr(optarg, "contig") != NULL;
            want[2] = strstr(optarg, "strided") != NULL;
            break;
        }
        default: die("usage: io_bw [-s MiB] [-r reps] [-c cols] [-p coll,contig,strided] [-S] [-d dir]");
        }
    }
    long long nums[2] = {mib, cols};
    int ints[5] = {reps, sync, want[0], want[1], want[2]};
    char dirbuf[4096];
    snprintf(dirbuf, sizeof dirbuf, "%s", dir);
    MPI_Bcast(nums, 2, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    MPI_Bcast(ints, 5, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Bcast(dirbuf, sizeof dirbuf, MPI_CHAR, 0, MPI_COMM_WORLD);
    mib = nums[0], cols = nums[1];
    reps = ints[0], sync = ints[1], want[0] = ints[2], want[1] = ints[3], want[2] = ints[4];
    dir = dirbuf;
    if (mib <= 0 || reps <= 0 || cols <= 0)
        die("-s, -r and -c need positive values");

    struct layout l;
    int dims[2] = {0, 0};
    MPI_Dims_create(nprocs, 2, dims);
    l.pr = dims[0];
    l.pc = dims[1];
    l.cols = cols - cols % l.pc;
    l.rows = mib * 1048576LL / (long long)sizeof(double) / l.cols;
    l.rows -= l.rows % l.pr;
    if (l.rows <= 0 || l.cols <= 0)
        die("array too small for the process grid");
    l.brows = l.rows / l.pr;
    l.bcols = l.cols / l.pc;
    l.r0 = (rank / l.pc) * l.brows;
    l.c0 = (rank % l.pc) * l.bcols;
    l.slab = l.rows * l.cols / nprocs;
    l.slab0 = (long long)rank * l.slab;
    if (l.rows > 0x7fffffffLL || l.cols > 0x7fffffffLL)
        die("array dimensions exceed 2^31");
    int gs[2] = {(int)l.rows, (int)l.cols}, ls[2] = {(int)l.brows, (int)l.bcols},
        st[2] = {(int)l.r0, (int)l.c0};
    CHECK(MPI_Type_create_subarray(2, gs, ls, st, MPI_ORDER_C, MPI_DOUBLE, &l.block_view));
    CHECK(MPI_Type_commit(&l.block_view));

    char path[4096];
    long pid = (long)getpid();
    MPI_Bcast(&pid, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    snprintf(path, sizeof path, "%s/oxmpi-io_bw-%ld.dat", dir, pid);
    const double total = (double)l.rows * (double)l.cols * sizeof(double);
    const char *fs = fs_name(dir);
    if (rank == 0) {
        char ver[MPI_MAX_LIBRARY_VERSION_STRING];
        int len = 0;
        MPI_Get_library_version(ver, &len);
        ver[strcspn(ver, "\n")] = 0;
        printf("# io_bw: %lld x %lld doubles (%.0f MiB), %d ranks as a %d x %d grid (block %lld x %lld, "
               "%lld-byte segments), best of %d, %s\n",
               l.rows, l.cols, total / 1048576.0, nprocs, l.pr, l.pc, l.brows, l.bcols,
               l.bcols * (long long)sizeof(double), reps, sync ? "writes synced" : "no sync");
        printf("# file %s on %s\n# library: %s\n", path, fs, ver);
        fflush(stdout);
    }

    const long long nmax = l.slab > l.brows * l.bcols ? l.slab : l.brows * l.bcols;
    double *data = malloc(sizeof(double) * nmax), *want_buf = malloc(sizeof(double) * nmax),
           *in = malloc(sizeof(double) * nmax);
    if (!data || !want_buf || !in) {
        fprintf(stderr, "io_bw: rank %d: out of memory\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    long long bad = 0;
    for (int p = COLL; p <= STRIDED; p++) {
        if (!want[p])
            continue;
        double best_w = 1e300, best_r = 1e300;
        long long n = p == CONTIG ? l.slab : l.brows * l.bcols;
        if (p == CONTIG)
            fill_slab(data, &l);
        else
            fill_block(data, &l);
        for (int rep = 0; rep < reps; rep++) {
            double tw = phase((enum pattern)p, 1, path, data, &l, sync);
            if (rep == 0) { /* the file itself: element i holds i */
                MPI_File fh;
                MPI_Status s;
                CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
                memset(in, 0xff, sizeof(double) * l.slab);
                CHECK(MPI_File_read_at(fh, (MPI_Offset)l.slab0 * (MPI_Offset)sizeof(double), in,
                                       (int)l.slab, MPI_DOUBLE, &s));
                CHECK(MPI_File_close(&fh));
                char what[64];
                snprintf(what, sizeof what, "file after the %s write", pattern_name[p]);
                bad += verify(in, fill_slab(want_buf, &l), l.slab, what);
            }
            memset(in, 0xff, sizeof(double) * n);
            double tr = phase((enum pattern)p, 0, path, in, &l, sync);
            char what[64];
            snprintf(what, sizeof what, "%s read", pattern_name[p]);
            bad += verify(in, data, n, what);
            MPI_Barrier(MPI_COMM_WORLD);
            if (rank == 0)
                CHECK(MPI_File_delete(path, MPI_INFO_NULL));
            if (tw < best_w)
                best_w = tw;
            if (tr < best_r)
                best_r = tr;
        }
        long long all_bad = 0;
        MPI_Allreduce(&bad, &all_bad, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        if (all_bad) {
            if (rank == 0)
                fprintf(stderr, "io_bw: %lld wrong elements read back: no result\n", all_bad);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        if (rank == 0) {
            printf("result %s write %d %lld %s %.1f\n", pattern_name[p], nprocs, mib, fs,
                   total / best_w / 1e6);
            printf("result %s read %d %lld %s %.1f\n", pattern_name[p], nprocs, mib, fs,
                   total / best_r / 1e6);
            fflush(stdout);
        }
    }
    free(data);
    free(want_buf);
    free(in);
    MPI_Type_free(&l.block_view);
    MPI_Finalize();
    return 0;
}
