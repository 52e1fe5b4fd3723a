/* Ping-pong benchmark for oxmpi, MPICH and Open MPI (built by scripts/bench.sh).
 *
 * Ranks are paired (0,1), (2,3), ...; every pair runs the same ping-pong at the same time, so
 * more than 2 ranks give an oversubscription test. Uses only MPI_Send, MPI_Recv and MPI_Barrier.
 *
 * latency:   8-byte messages; one-way latency = half the round-trip time, in microseconds.
 * bandwidth: 4 MiB messages;  one-way bytes / half the round-trip time, in GB/s (1e9 bytes/s).
 * Each is measured in REPS repetitions after a warm-up; the median repetition is reported.
 * The number of round trips per repetition is calibrated so a repetition lasts about TARGET
 * seconds. With several pairs the reported value is the mean over the pairs.
 *
 * Output (rank 0): human-readable lines starting with '#', then one machine-readable line
 *   latency_us=X bandwidth_GBps=Y
 *
 * Usage: pingpong [-r REPS] [-t TARGET_SECONDS] [-s LARGE_BYTES]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TAG_PP 1
#define TAG_CTL 2
#define TAG_RES 3
#define MAX_REPS 101

static int rank, size, peer, leader;

static void fail(const char *msg)
{
    fprintf(stderr, "pingpong: rank %d: %s\n", rank, msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

/* iters round trips of n bytes with the partner; returns the elapsed time on the leader. */
static double round_trips(char *sbuf, char *rbuf, int n, long iters)
{
    double t0 = MPI_Wtime();
    for (long i = 0; i < iters; i++) {
        if (leader) {
            MPI_Send(sbuf, n, MPI_BYTE, peer, TAG_PP, MPI_COMM_WORLD);
            MPI_Recv(rbuf, n, MPI_BYTE, peer, TAG_PP, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(rbuf, n, MPI_BYTE, peer, TAG_PP, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(sbuf, n, MPI_BYTE, peer, TAG_PP, MPI_COMM_WORLD);
        }
    }
    return MPI_Wtime() - t0;
}

/* The leader decides a value and tells its partner, so both loop the same number of times. */
static long agree(long v)
{
    if (leader)
        MPI_Send(&v, 1, MPI_LONG, peer, TAG_CTL, MPI_COMM_WORLD);
    else
        MPI_Recv(&v, 1, MPI_LONG, peer, TAG_CTL, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return v;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median one-way time in seconds for n-byte messages. */
static double measure(char *sbuf, char *rbuf, int n, int reps, double target, long warmup)
{
    double times[MAX_REPS];
    long iters;

    round_trips(sbuf, rbuf, n, warmup);
    /* calibrate: grow the count until a batch takes a measurable time */
    iters = 1;
    for (;;) {
        double t = round_trips(sbuf, rbuf, n, iters);
        long next = iters;
        if (leader) {
            if (t >= target / 10 || iters >= (1L << 24))
                next = -(long)(iters * (target / (t > 1e-9 ? t : 1e-9)));
            else
                next = iters * 4;
        }
        next = agree(next);
        if (next < 0) {
            iters = -next;
            break;
        }
        iters = next;
    }
    if (iters < 3)
        iters = 3;
    for (int r = 0; r < reps; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        times[r] = round_trips(sbuf, rbuf, n, iters) / (2.0 * iters);
    }
    qsort(times, reps, sizeof(double), cmp_double);
    return times[reps / 2];
}

int main(int argc, char **argv)
{
    int reps = 7, large = 4 << 20, opt;
    double target = 0.1;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    while ((opt = getopt(argc, argv, "r:t:s:")) != -1) {
        switch (opt) {
        case 'r': reps = atoi(optarg); break;
        case 't': target = atof(optarg); break;
        case 's': large = atoi(optarg); break;
        default: fail("usage: pingpong [-r REPS] [-t TARGET_SECONDS] [-s LARGE_BYTES]");
        }
    }
    if (reps < 1 || reps > MAX_REPS || target <= 0 || large < 8)
        fail("bad arguments");
    if (size < 2 || size % 2 != 0)
        fail("needs an even number of ranks (pairs 0-1, 2-3, ...)");
    peer = rank ^ 1;
    leader = (rank % 2 == 0);

    char *sbuf = malloc(large), *rbuf = malloc(large);
    if (!sbuf || !rbuf)
        fail("out of memory");
    for (int i = 0; i < large; i++)
        sbuf[i] = (char)(i * 7 + rank);
    memset(rbuf, 0, large);

    double lat = measure(sbuf, rbuf, 8, reps, target, 1000);

    /* check one large message's contents before timing them */
    round_trips(sbuf, rbuf, large, 1);
    for (int i = 0; i < large; i += 4093)
        if (rbuf[i] != (char)(i * 7 + peer))
            fail("large message arrived corrupted");
    double bw_time = measure(sbuf, rbuf, large, reps, target, 3);
    double bw = large / bw_time / 1e9;

    /* pair leaders report to rank 0 */
    double res[2] = {lat, bw}, sum_lat = lat, sum_bw = bw;
    if (leader && rank != 0)
        MPI_Send(res, 2, MPI_DOUBLE, 0, TAG_RES, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("# pingpong: %d ranks (%d pairs), %d repetitions, median of each\n", size, size / 2, reps);
        printf("# pair 0-1: latency %.3f us, bandwidth %.3f GB/s\n", lat * 1e6, bw);
        for (int p = 2; p < size; p += 2) {
            MPI_Recv(res, 2, MPI_DOUBLE, p, TAG_RES, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            printf("# pair %d-%d: latency %.3f us, bandwidth %.3f GB/s\n", p, p + 1, res[0] * 1e6, res[1]);
            sum_lat += res[0];
            sum_bw += res[1];
        }
        printf("latency_us=%.3f bandwidth_GBps=%.3f\n", sum_lat / (size / 2) * 1e6, sum_bw / (size / 2));
        fflush(stdout);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
