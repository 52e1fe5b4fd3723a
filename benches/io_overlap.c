/* Overlap of nonblocking MPI-IO with computation, in the manner of OSU's nonblocking collective
 * benchmarks: for each operation,
 *   pure     the time of the call plus MPI_Wait alone (the slowest rank, best of -r);
 *   total    post the call, compute for `pure` with no MPI call in between, then MPI_Wait;
 *   overlap  = 100 * (1 - (total - compute) / pure): 100 when the I/O ran entirely during the
 *            computation, 0 when none of it did (it can fall below 0 when computing slows the I/O).
 * Each rank moves one contiguous slab of -s MiB at offset rank * slab. Operations:
 *   iwrite_at       MPI_File_iwrite_at           iread_at      MPI_File_iread_at
 *   iwrite_at_all   MPI_File_iwrite_at_all       iread_at_all  MPI_File_iread_at_all
 * The computation is -c busy (a loop reading the clock, the rank's core is taken) or -c sleep
 * (nanosleep: the core is free, as when a rank waits on another device). Every read is checked
 * (untimed) and the file is deleted at the end. Standard MPI only.
 *
 * Usage: io_overlap [-s MiB per rank] [-r reps] [-c busy|sleep] [-d dir]
 * Output: '# ...' lines, then one line per operation:
 *   result OP NP MIB COMPUTE PURE_MS TOTAL_MS OVERLAP_PCT
 * Exit status 1 on any MPI error or wrong data. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int rank, nprocs;

#define BENCH_NAME "io_overlap"
#include "mpi_check.h"

enum op { IWRITE_AT, IWRITE_AT_ALL, IREAD_AT, IREAD_AT_ALL, NOPS };
static const char *op_name[NOPS] = {"iwrite_at", "iwrite_at_all", "iread_at", "iread_at_all"};

static double maxof(double v) {
    double m;
    MPI_Allreduce(&v, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return m;
}

/* Compute for `s` seconds without calling MPI (MPI_Wtime is a clock read, no progress). */
static double compute(double s, int busy) {
    double t0 = MPI_Wtime(), x = 0;
    if (busy) {
        while (MPI_Wtime() - t0 < s)
            x += 1e-9;
    } else {
        struct timespec ts = {(time_t)s, (long)((s - (time_t)s) * 1e9)};
        while (nanosleep(&ts, &ts) != 0)
            ;
    }
    return x;
}

static void post(enum op o, MPI_File fh, MPI_Offset off, long long *buf, int n, MPI_Request *q) {
    switch (o) {
    case IWRITE_AT: CHECK(MPI_File_iwrite_at(fh, off, buf, n, MPI_LONG_LONG, q)); break;
    case IWRITE_AT_ALL: CHECK(MPI_File_iwrite_at_all(fh, off, buf, n, MPI_LONG_LONG, q)); break;
    case IREAD_AT: CHECK(MPI_File_iread_at(fh, off, buf, n, MPI_LONG_LONG, q)); break;
    case IREAD_AT_ALL: CHECK(MPI_File_iread_at_all(fh, off, buf, n, MPI_LONG_LONG, q)); break;
    default: abort();
    }
}

/* One timed run of `o`, with `work` seconds of computation between the post and the wait;
 * returns the slowest rank's time from the post to the end of the wait. */
static double run(enum op o, MPI_File fh, MPI_Offset off, long long *buf, int n, double work,
                  int busy) {
    MPI_Request q;
    CHECK(MPI_Barrier(MPI_COMM_WORLD));
    double t0 = MPI_Wtime();
    post(o, fh, off, buf, n, &q);
    if (work > 0)
        compute(work, busy);
    CHECK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    return maxof(MPI_Wtime() - t0);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    int mib = 64, reps = 3, busy = 1, c;
    const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    while ((c = getopt(argc, argv, "s:r:c:d:")) != -1) {
        switch (c) {
        case 's': mib = atoi(optarg); break;
        case 'r': reps = atoi(optarg); break;
        case 'c': busy = strcmp(optarg, "sleep") != 0; break;
        case 'd': dir = optarg; break;
        default:
            if (rank == 0)
                fprintf(stderr, "usage: io_overlap [-s MiB per rank] [-r reps] [-c busy|sleep] [-d dir]\n");
            MPI_Finalize();
            return 2;
        }
    }
    if (mib < 1 || mib > 1024 || reps < 1) {
        if (rank == 0)
            fprintf(stderr, "io_overlap: -s must be 1..1024 MiB and -r at least 1\n");
        MPI_Finalize();
        return 2;
    }
    int n = (int)((long long)mib * 1048576 / sizeof(long long));
    long long *buf = malloc((size_t)n * sizeof *buf);
    if (!buf) {
        fprintf(stderr, "io_overlap: rank %d: out of memory\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Offset off = (MPI_Offset)rank * n * (MPI_Offset)sizeof(long long);
    long long base = (long long)rank * n;

    char path[4096];
    int pid = (int)getpid();
    MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
    snprintf(path, sizeof path, "%s/oxmpi-io_overlap-%d.dat", dir, pid);
    MPI_File fh;
    CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    CHECK(MPI_File_set_errhandler(fh, MPI_ERRORS_ARE_FATAL));
    if (rank == 0)
        printf("# %d ranks, %d MiB per rank, %s computation, best of %d, file %s\n", nprocs, mib,
               busy ? "busy" : "sleep", reps, path);

    for (int o = 0; o < NOPS; o++) {
        int is_write = o == IWRITE_AT || o == IWRITE_AT_ALL;
        double pure = 1e30, total = 1e30;
        for (int r = 0; r < reps; r++) {
            for (int i = 0; i < n; i++)
                buf[i] = is_write ? base + i : -1;
            double t = run((enum op)o, fh, off, buf, n, 0, busy);
            if (t < pure)
                pure = t;
        }
        for (int r = 0; r < reps; r++) {
            for (int i = 0; i < n; i++)
                buf[i] = is_write ? base + i : -1;
            double t = run((enum op)o, fh, off, buf, n, pure, busy);
            if (t < total)
                total = t;
        }
        if (!is_write) {
            for (int i = 0; i < n; i++) {
                if (buf[i] != base + i) {
                    fprintf(stderr, "io_overlap: rank %d: %s read %lld at element %d, expected %lld\n",
                            rank, op_name[o], buf[i], i, base + i);
                    MPI_Abort(MPI_COMM_WORLD, 1);
                }
            }
        }
        double overlap = 100.0 * (1.0 - (total - pure) / pure);
        if (rank == 0)
            printf("result %s %d %d %s %.2f %.2f %.1f\n", op_name[o], nprocs, mib,
                   busy ? "busy" : "sleep", pure * 1e3, total * 1e3, overlap);
    }
    CHECK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        MPI_File_delete(path, MPI_INFO_NULL);
    free(buf);
    MPI_Finalize();
    return 0;
}
