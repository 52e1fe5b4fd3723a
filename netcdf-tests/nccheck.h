/* The checking harness of the parallel netCDF test programs: fatal-call checks for PnetCDF, netCDF
 * and MPI calls, the value each global element must hold, and the job-wide verdict. Each program
 * includes it once. A failed call aborts the job at once (other ranks may sit in a collective). */
#ifndef OXMPI_NCCHECK_H
#define OXMPI_NCCHECK_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int ncc_rank = 0, ncc_size = 1;

#define NCC_FATAL(...)                                                                           \
    do {                                                                                         \
        fprintf(stderr, "rank %d: %s:%d: ", ncc_rank, __FILE__, __LINE__);                       \
        fprintf(stderr, __VA_ARGS__);                                                            \
        fprintf(stderr, "\n");                                                                   \
        fflush(stderr);                                                                          \
        MPI_Abort(MPI_COMM_WORLD, 1);                                                            \
    } while (0)

#define NCC_MPI(call)                                                                            \
    do {                                                                                         \
        int ncc_rc_ = (call);                                                                    \
        if (ncc_rc_ != MPI_SUCCESS)                                                              \
            NCC_FATAL("%s failed with MPI error %d", #call, ncc_rc_);                            \
    } while (0)

/* The value of global element (i, j) of variable v: distinct across elements and variables, exact
 * in an int and a double. */
static inline int ncc_value(int v, long long i, long long j) { return (int)(v * 1000003 + i * 4099 + j); }

/* This rank's band [*start, *start + *count) of n rows: the first n % size ranks get one more. */
static inline void ncc_band(long long n, long long *start, long long *count) {
    long long base = n / ncc_size, extra = n % ncc_size;
    *count = base + (ncc_rank < extra);
    *start = ncc_rank * base + (ncc_rank < extra ? ncc_rank : extra);
}

/* MPI_Init, this rank and the size, and the file name argv[1] (the usage line names `name`). */
static inline const char *ncc_init(int *argc, char ***argv, const char *name) {
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &ncc_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ncc_size);
    if (*argc < 2)
        NCC_FATAL("usage: %s FILE", name);
    return (*argv)[1];
}

/* Counts a mismatch, printing the first few. */
static long long ncc_bad = 0;
#define NCC_EXPECT(cond, ...)                                                                    \
    do {                                                                                         \
        if (!(cond)) {                                                                           \
            if (ncc_bad++ < 5) {                                                                 \
                fprintf(stderr, "rank %d: %s:%d: ", ncc_rank, __FILE__, __LINE__);               \
                fprintf(stderr, __VA_ARGS__);                                                    \
                fprintf(stderr, "\n");                                                           \
            }                                                                                    \
        }                                                                                        \
    } while (0)

/* Every rank's mismatches summed; rank 0 prints the verdict; the exit status says it too. */
static inline int ncc_finish(const char *name) {
    long long total = 0;
    NCC_MPI(MPI_Allreduce(&ncc_bad, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
    if (ncc_rank == 0)
        printf("%s: %s (%d ranks, %lld mismatches)\n", name, total ? "FAIL" : "OK", ncc_size, total);
    MPI_Finalize();
    return total ? 1 : 0;
}

#endif
