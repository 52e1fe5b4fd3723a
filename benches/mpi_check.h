/* CHECK(call) for the benchmarks: an MPI call that fails prints one line naming the benchmark
 * (BENCH_NAME, defined before this header), the rank, the call and MPI's error string, and aborts
 * the job. Each benchmark keeps its rank in a `rank` variable declared before this header. */
#ifndef OXMPI_BENCH_MPI_CHECK_H
#define OXMPI_BENCH_MPI_CHECK_H
#include <mpi.h>
#include <stdio.h>

#define CHECK(call)                                                                              \
    do {                                                                                         \
        int rc_ = (call);                                                                        \
        if (rc_ != MPI_SUCCESS) {                                                                \
            char msg_[MPI_MAX_ERROR_STRING];                                                     \
            int len_ = 0;                                                                        \
            MPI_Error_string(rc_, msg_, &len_);                                                  \
            fprintf(stderr, "%s: rank %d: %s failed: %s\n", BENCH_NAME, rank, #call, msg_);      \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                        \
        }                                                                                        \
    } while (0)
#endif
