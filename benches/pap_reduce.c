/* PAP mini-benchmark of Proficz & Ocetkiewicz 2021 section 6 (after Marendic et al. 2016):
   each iteration fills random data, runs a double barrier, emulates computation with a random
   per-rank delay (nanosleep, uniform in [0, max_delay]), then MPI_Reduce(MPI_SUM) of COUNT
   floats to rank 0, and validates the result. Times are taken relative to each rank's exit from
   the second barrier (no clock synchronisation needed) and gathered after the iteration:
     last->finish  = max(finish) - max(arrival)  (what the reduction adds after the last arrival)
     first->finish = max(finish) - min(arrival)  (the paper's metric)
   Usage: pap_reduce COUNT ITERATIONS MAX_DELAY_US [random|fixed] [SEED] [none|progress|expect]
     random: a new delay per rank and iteration (the paper's setting);
     fixed:  each rank keeps one random delay for the whole run (a repeating arrival pattern,
             which an arrival predictor can learn).
     Reports (oxmpi only; elsewhere the same sleeps without reports):
     none:     the delay is one sleep (default);
     progress: the delay is slept in 8 slices, and MPIX_Pap_progress reports the share done
               before the first and after every slice, as an application reports its compute;
     expect:   MPIX_Pap_expect announces the delay before sleeping it in one piece.
   Prints one line: count iters max_delay_us mode ranks mean_last_us mean_first_us reports
   floor_us (the first two iterations are warm-up and not counted; floor_us: the best of 5 times,
   on rank 0 alone, to copy COUNT floats once and add COUNT floats into COUNT once, about what
   the last arrival's vector must cost after it arrives). Exit status 1 on a wrong result. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef OXMPI_HAS_PAP_REPORTS
#define MPIX_Pap_progress(comm, f) ((void)(comm), (void)(f), MPI_SUCCESS)
#define MPIX_Pap_expect(comm, s) ((void)(comm), (void)(s), MPI_SUCCESS)
#endif

static void sleep_us(long us)
{
    if (us > 0) {
        struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
        nanosleep(&ts, NULL);
    }
}

static uint64_t rnd(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (argc < 4) {
        if (rank == 0)
            fprintf(stderr, "usage: pap_reduce COUNT ITERATIONS MAX_DELAY_US [random|fixed] [SEED] [none|progress|expect]\n");
        MPI_Finalize();
        return 2;
    }
    long count = atol(argv[1]);
    int iters = atoi(argv[2]);
    long max_delay = atol(argv[3]);
    int fixed = argc > 4 && strcmp(argv[4], "fixed") == 0;
    uint64_t seed = (argc > 5 ? strtoull(argv[5], NULL, 10) : 1) * 7919 + (uint64_t)rank * 104729;
    const char *reports = argc > 6 ? argv[6] : "none";
    int progress = strcmp(reports, "progress") == 0, expect = strcmp(reports, "expect") == 0;
    if (!progress && !expect && strcmp(reports, "none") != 0) {
        if (rank == 0)
            fprintf(stderr, "pap_reduce: reports must be none, progress or expect, not %s\n", reports);
        MPI_Finalize();
        return 2;
    }
    float *s = malloc(sizeof(float) * (size_t)count), *r = malloc(sizeof(float) * (size_t)count);
    double *times = malloc(sizeof(double) * 2 * (size_t)n);
    long my_fixed = max_delay > 0 ? (long)(rnd(&seed) % (uint64_t)(max_delay + 1)) : 0;
    double sum_last = 0, sum_first = 0;
    int counted = 0, bad = 0;
    for (int it = 0; it < iters + 2; it++) {
        /* Small integers: every partial sum is exact in float, so validation is exact. */
        int base = (int)(rnd(&seed) % 5);
        for (long i = 0; i < count; i++)
            s[i] = (float)((base + rank + i) % 8);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        long d = fixed ? my_fixed : (max_delay > 0 ? (long)(rnd(&seed) % (uint64_t)(max_delay + 1)) : 0);
        if (progress) {
            MPIX_Pap_progress(MPI_COMM_WORLD, 0.0);
            for (int k = 1; k <= 8; k++) {
                sleep_us(d * k / 8 - d * (k - 1) / 8);
                MPIX_Pap_progress(MPI_COMM_WORLD, k / 8.0);
            }
        } else {
            if (expect)
                MPIX_Pap_expect(MPI_COMM_WORLD, d * 1e-6);
            sleep_us(d);
        }
        double arrive = MPI_Wtime() - t0;
        MPI_Reduce(s, r, (int)count, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD);
        double mine[2] = {arrive, MPI_Wtime() - t0};
        MPI_Gather(mine, 2, MPI_DOUBLE, times, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        int bases[1] = {base}, *all = rank == 0 ? malloc(sizeof(int) * (size_t)n) : NULL;
        MPI_Gather(bases, 1, MPI_INT, all, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            for (long i = 0; i < count && !bad; i++) {
                float want = 0;
                for (int q = 0; q < n; q++)
                    want += (float)((all[q] + q + i) % 8);
                if (r[i] != want) {
                    fprintf(stderr, "pap_reduce: iteration %d element %ld is %g, expected %g\n", it, i, r[i], want);
                    bad = 1;
                }
            }
            double max_a = 0, min_a = 1e30, max_f = 0;
            for (int q = 0; q < n; q++) {
                max_a = times[2 * q] > max_a ? times[2 * q] : max_a;
                min_a = times[2 * q] < min_a ? times[2 * q] : min_a;
                max_f = times[2 * q + 1] > max_f ? times[2 * q + 1] : max_f;
            }
            if (it >= 2) {
                sum_last += max_f - max_a;
                sum_first += max_f - min_a;
                counted++;
            }
            free(all);
        }
    }
    double floor_s = 1e30;
    if (rank == 0) {
        for (int k = 0; k < 5; k++) {
            double t = MPI_Wtime();
            memcpy(r, s, sizeof(float) * (size_t)count);
            for (long i = 0; i < count; i++)
                r[i] += s[i];
            t = MPI_Wtime() - t;
            floor_s = t < floor_s ? t : floor_s;
        }
        printf("%ld %d %ld %s %d %.1f %.1f %s %.1f\n", count, iters, max_delay, fixed ? "fixed" : "random", n, 1e6 * sum_last / counted, 1e6 * sum_first / counted, reports, 1e6 * floor_s);
    }
    MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(s);
    free(r);
    free(times);
    MPI_Finalize();
    return bad;
}
