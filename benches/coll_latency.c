/* Collective latency benchmark for oxmpi, MPICH and Open MPI (built by scripts/bench.sh).
 *
 * Usage: coll_latency [-t TARGET_SECONDS] [-T BUDGET_SECONDS] [-M MAX_BYTES] [-a ALLTOALL_CAP] [-m] COLL[,COLL...]
 *   COLL: bcast, reduce, allreduce, alltoall, barrier
 *   -t  time to spend measuring each message size (default 0.02 s; at least 3 repetitions)
 *   -T  time budget per collective (default: none): sizes not started within it are skipped, so a
 *       pathologically slow implementation (MPICH oversubscribed: milliseconds per call) cannot
 *       stall the whole comparison
 *   -M  largest message size (default 4 MiB)
 *   -a  alltoall: largest send (and receive) buffer per rank, block size x ranks (default 16 MiB);
 *       larger points are skipped
 *   -m  report the median over the calls of each call's slowest rank instead of the OSU mean: on
 *       a loaded machine one descheduled call (milliseconds) dominates a mean of a few calls
 *
 * Message sizes are 8 B .. 4 MiB by factors of 8 (alltoall: the block sent to each peer).
 * bcast and alltoall move MPI_BYTE; reduce and allreduce sum MPI_DOUBLEs (size / 8 of them).
 * Method (as the OSU micro-benchmarks): each repetition is one collective call timed on every rank
 * on its own, followed by an untimed MPI_Barrier, so consecutive calls cannot overlap (pipelining
 * would flatter implementations whose root returns early). Rooted collectives rotate the root
 * from one call to the next. Each rank averages its call times; the reported latency is the
 * maximum of these means over the ranks. The repetition count is calibrated during the warm-up so
 * a size takes about TARGET seconds, which keeps oversubscribed runs (16 ranks on 2 cores) short.
 * The first call of every size checks its result.
 *
 * Errors are returned (MPI_ERRORS_RETURN), not fatal: a collective whose checked call fails (e.g.
 * MPI_ERR_UNSUPPORTED_OPERATION) is reported as n/a and the next collective runs. A failure in a
 * timed call is reported as n/a too, but then the ranks may disagree on what comes next, so the
 * job is aborted.
 *
 * Output (rank 0): comment lines starting with '#', and one line per collective and size:
 *   COLL SIZE RANKS USEC        (USEC = max over ranks of the mean call time, microseconds; with -m
 *                                the median over calls of the slowest rank's call time)
 *   COLL SIZE RANKS n/a         (the collective failed or returned a wrong result; see '#' lines)
 *   COLL SIZE RANKS skip        (not measured: the time budget was used up)
 * barrier prints one line with SIZE 0.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define USAGE "usage: coll_latency [-t TARGET_SECONDS] [-T BUDGET_SECONDS] [-M MAX_BYTES] [-a ALLTOALL_CAP] [-m] COLL[,COLL...]"

enum coll { BCAST, REDUCE, ALLREDUCE, ALLTOALL, BARRIER };
static const char *const NAMES[] = {"bcast", "reduce", "allreduce", "alltoall", "barrier"};
#define NCOLL 5

static const long SIZES[] = {8, 64, 512, 4096, 32768, 262144, 1048576, 4194304};
#define NSIZES (sizeof SIZES / sizeof SIZES[0])

/* Outcome of a checked call, agreed on by all ranks with MPI_MAX. */
enum { OK = 0, WRONG = 1, FAILED = 2 };

static int rank, size;
static char *sbuf, *rbuf;
static long next_root; /* rotates over all calls, so each size starts where the last one ended */
static int median;     /* -m: report the median over calls of the slowest rank's call time */

static void fail(const char *msg)
{
    fprintf(stderr, "coll_latency: rank %d: %s\n", rank, msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

/* One call of collective c with n bytes (per peer for alltoall) rooted at root. */
static int call(enum coll c, long n, int root)
{
    switch (c) {
    case BCAST: return MPI_Bcast(sbuf, (int)n, MPI_BYTE, root, MPI_COMM_WORLD);
    case REDUCE: return MPI_Reduce(sbuf, rbuf, (int)(n / 8), MPI_DOUBLE, MPI_SUM, root, MPI_COMM_WORLD);
    case ALLREDUCE: return MPI_Allreduce(sbuf, rbuf, (int)(n / 8), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    case ALLTOALL: return MPI_Alltoall(sbuf, (int)n, MPI_BYTE, rbuf, (int)n, MPI_BYTE, MPI_COMM_WORLD);
    case BARRIER: return MPI_Barrier(MPI_COMM_WORLD);
    }
    return MPI_ERR_OTHER;
}

static unsigned char pattern(long a, long b, long k) { return (unsigned char)(a * 31 + b * 7 + k * 3 + 1); }

/* One call with known data and a check of its result on every rank; returns OK, WRONG or FAILED
 * agreed over all ranks. Leaves the buffers filled with valid data for the timed calls. */
static int checked_call(enum coll c, long n)
{
    int root = size - 1, status = OK;
    double *sd = (double *)sbuf, *rd = (double *)rbuf, want = (double)size * (size + 1) / 2;
    long stride = n / 64 > 0 ? n / 64 : 1;

    switch (c) {
    case BCAST:
        for (long k = 0; k < n; k++)
            sbuf[k] = rank == root ? (char)pattern(root, 0, k) : 0;
        break;
    case REDUCE:
    case ALLREDUCE:
        for (long k = 0; k < n / 8; k++) {
            sd[k] = rank + 1;
            rd[k] = -1;
        }
        break;
    case ALLTOALL:
        for (long j = 0; j < size; j++)
            for (long k = 0; k < n; k++) {
                sbuf[j * n + k] = (char)pattern(rank, j, k);
                rbuf[j * n + k] = 0;
            }
        break;
    case BARRIER: break;
    }
    int rc = call(c, n, root);
    if (rc != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, msg, &len);
        fprintf(stderr, "coll_latency: rank %d: %s of %ld bytes failed: %s\n", rank, NAMES[c], n, msg);
        status = FAILED;
    } else {
        switch (c) {
        case BCAST:
            for (long k = 0; k < n; k += stride)
                if ((unsigned char)sbuf[k] != pattern(root, 0, k))
                    status = WRONG;
            break;
        case REDUCE:
        case ALLREDUCE:
            if (c == ALLREDUCE || rank == root)
                for (long k = 0; k < n / 8; k += stride)
                    if (rd[k] != want)
                        status = WRONG;
            break;
        case ALLTOALL:
            for (long i = 0; i < size; i++)
                for (long k = 0; k < n; k += stride)
                    if ((unsigned char)rbuf[i * n + k] != pattern(i, rank, k))
                        status = WRONG;
            break;
        case BARRIER: break;
        }
        if (status == WRONG)
            fprintf(stderr, "coll_latency: rank %d: %s of %ld bytes returned a wrong result\n", rank, NAMES[c], n);
    }
    /* MPI_Allreduce of one int is assumed to work: every implementation under test has it. */
    int agreed = status;
    if (MPI_Allreduce(&status, &agreed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS)
        fail("MPI_Allreduce of the check result failed");
    return agreed;
}

/* iters timed calls, each followed by an untimed barrier; returns the sum of the call times and,
 * if `each` is not NULL, stores every call's time there. */
static double timed_calls(enum coll c, long n, long iters, double *each)
{
    double busy = 0;
    for (long i = 0; i < iters; i++) {
        int root = (int)(next_root++ % size);
        double t0 = MPI_Wtime();
        int rc = call(c, n, root);
        double t = MPI_Wtime() - t0;
        busy += t;
        if (each)
            each[i] = t;
        if (rc != MPI_SUCCESS) {
            char msg[MPI_MAX_ERROR_STRING];
            int len = 0;
            MPI_Error_string(rc, msg, &len);
            fprintf(stderr, "coll_latency: rank %d: %s of %ld bytes, root %d: %s\n", rank, NAMES[c], n, root, msg);
            printf("%s %ld %d n/a\n", NAMES[c], n, size); /* any rank: rank 0 has not reported n yet */
            fflush(stdout);
            fail("a collective failed after its checked call succeeded");
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    return busy;
}

/* Warm up, doubling the number of calls until a batch takes TARGET / 8 on the slowest rank, and
 * derive the repetition count that fills TARGET (calls plus barriers). The first call is not
 * counted: it may pay one-time costs (connections, buffers, page faults). */
static long calibrate(enum coll c, long n, double target)
{
    long iters = 1;
    double elapsed;
    timed_calls(c, n, 1, NULL);
    for (;;) {
        double t0 = MPI_Wtime();
        timed_calls(c, n, iters, NULL);
        double t = MPI_Wtime() - t0;
        MPI_Allreduce(&t, &elapsed, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (elapsed >= target / 8 || iters >= 4096)
            break;
        iters *= 2;
    }
    double reps = target / (elapsed / iters);
    return reps < 3 ? 3 : reps > 100000 ? 100000 : (long)reps;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void report(enum coll c, long n, const char *what)
{
    if (rank == 0) {
        printf("%s %ld %d %s\n", NAMES[c], n, size, what);
        fflush(stdout);
    }
}

static void bench(enum coll c, double target, double budget, long max_bytes, long a2a_cap)
{
    int dead = 0;
    double start = MPI_Wtime();
    for (size_t s = 0; s < NSIZES; s++) {
        long n = c == BARRIER ? 0 : SIZES[s];
        if (n > max_bytes)
            break;
        if (c == ALLTOALL && n * size > a2a_cap) {
            if (rank == 0)
                printf("# %s %ld: skipped, %ld bytes x %d ranks exceeds the per-rank cap of %ld bytes\n", NAMES[c],
                       n, n, size, a2a_cap);
            continue;
        }
        if (dead) {
            report(c, n, "n/a");
            continue;
        }
        /* rank 0's clock decides, so all ranks skip the same sizes */
        int over = budget > 0 && rank == 0 && MPI_Wtime() - start > budget;
        if (MPI_Bcast(&over, 1, MPI_INT, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
            fail("MPI_Bcast of the budget decision failed");
        if (over) {
            if (rank == 0)
                printf("# %s %ld: skipped, the budget of %.1f s is used up\n", NAMES[c], n, budget);
            report(c, n, "skip");
            continue;
        }
        int status = checked_call(c, n);
        if (status != OK) {
            if (rank == 0)
                printf("# %s %ld: %s\n", NAMES[c], n,
                       status == FAILED ? "the call returned an error (see stderr)" : "wrong result (see stderr)");
            report(c, n, "n/a");
            dead = 1; /* its state may be inconsistent across ranks: do not call it again */
            continue;
        }
        long reps = calibrate(c, n, target);
        MPI_Barrier(MPI_COMM_WORLD);
        double *each = median ? malloc(sizeof(double) * 2 * (size_t)reps) : NULL;
        if (median && !each)
            fail("out of memory for the call times");
        double mean = timed_calls(c, n, reps, each) / reps, worst = 0, sum = 0;
        MPI_Reduce(&mean, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        MPI_Reduce(&mean, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        if (median) {
            /* the slowest rank's time of each call, then the median over the calls */
            MPI_Reduce(each, each + reps, (int)reps, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
            if (rank == 0) {
                qsort(each + reps, (size_t)reps, sizeof(double), by_value);
                worst = reps % 2 ? each[reps + reps / 2] : (each[reps + reps / 2 - 1] + each[reps + reps / 2]) / 2;
            }
            free(each);
        }
        if (rank == 0) {
            printf("# %s %ld: %ld repetitions, mean over ranks %.3f us\n", NAMES[c], n, reps, sum / size * 1e6);
            printf("%s %ld %d %.3f\n", NAMES[c], n, size, worst * 1e6);
        }
        fflush(stdout);
        if (c == BARRIER)
            break;
    }
}

int main(int argc, char **argv)
{
    double target = 0.02, budget = 0;
    long max_bytes = SIZES[NSIZES - 1], a2a_cap = 16L << 20;
    int chosen[NCOLL], nchosen = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    /* No getopt or strtok: in oxmpi's threads mode all ranks share the C library (getopt's optind,
     * strtok's position) and possibly argv, so parsing must be reentrant and leave argv intact. */
    const char *list = NULL;
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] == '-' && argv[i][1] && !argv[i][2] && strchr("tTMa", argv[i][1]) && i + 1 < argc) {
            const char *v = argv[++i];
            switch (argv[i - 1][1]) {
            case 't': target = atof(v); break;
            case 'T': budget = atof(v); break;
            case 'M': max_bytes = atol(v); break;
            case 'a': a2a_cap = atol(v); break;
            }
        } else if (!strcmp(argv[i], "-m")) {
            median = 1;
        } else if (argv[i][0] != '-' && !list) {
            list = argv[i];
        } else {
            fail(USAGE);
        }
    }
    if (!list || target <= 0 || budget < 0 || max_bytes < 8 || a2a_cap < 8)
        fail(USAGE);
    for (const char *tok = list; *tok;) {
        size_t len = strcspn(tok, ",");
        int c = 0;
        while (c < NCOLL && !(strlen(NAMES[c]) == len && strncmp(tok, NAMES[c], len) == 0))
            c++;
        if (c == NCOLL || nchosen == NCOLL)
            fail("unknown collective (bcast, reduce, allreduce, alltoall, barrier)");
        chosen[nchosen++] = c;
        tok += len;
        if (*tok == ',')
            tok++;
    }

    long buf_bytes = max_bytes;
    for (int i = 0; i < nchosen; i++)
        if (chosen[i] == ALLTOALL && a2a_cap > buf_bytes)
            buf_bytes = a2a_cap;
    sbuf = malloc(buf_bytes);
    rbuf = malloc(buf_bytes);
    if (!sbuf || !rbuf)
        fail("out of memory");
    memset(sbuf, 0, buf_bytes);
    memset(rbuf, 0, buf_bytes);

    if (rank == 0)
        printf("# coll_latency: %d ranks, %.3f s per size, %s\n", size, target,
               median ? "median over calls of the slowest rank's call time" : "max over ranks of the mean call time");
    for (int i = 0; i < nchosen; i++)
        bench((enum coll)chosen[i], target, budget, max_bytes, a2a_cap);

    MPI_Barrier(MPI_COMM_WORLD);
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
