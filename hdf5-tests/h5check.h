/* The checking harness of the parallel HDF5 test programs: a unique file name in the directory the
 * runner gives, fatal-call checks, value generation and comparison, removal of the file, and the
 * job-wide verdict. Each program includes it once. */
#ifndef OXMPI_H5CHECK_H
#define OXMPI_H5CHECK_H

#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int h5c_rank = 0, h5c_size = 1;

/* A failed HDF5 or MPI call: nothing sensible can follow (other ranks may sit in a collective), so
 * the job is aborted at once rather than left to hang. */
#define H5C_FATAL(...)                                                                           \
    do {                                                                                         \
        fprintf(stderr, "rank %d: %s:%d: ", h5c_rank, __FILE__, __LINE__);                       \
        fprintf(stderr, __VA_ARGS__);                                                            \
        fprintf(stderr, "\n");                                                                   \
        fflush(stderr);                                                                          \
        MPI_Abort(MPI_COMM_WORLD, 1);                                                            \
    } while (0)

/* HDF5 calls return a negative value on failure. */
#define H5C(call)                                                                                \
    do {                                                                                         \
        if ((long long)(call) < 0)                                                               \
            H5C_FATAL("%s failed", #call);                                                       \
    } while (0)

#define H5C_MPI(call)                                                                            \
    do {                                                                                         \
        int h5c_rc_ = (call);                                                                    \
        if (h5c_rc_ != MPI_SUCCESS) {                                                            \
            char h5c_msg_[MPI_MAX_ERROR_STRING];                                                 \
            int h5c_len_ = 0;                                                                    \
            MPI_Error_string(h5c_rc_, h5c_msg_, &h5c_len_);                                      \
            H5C_FATAL("%s failed: %s", #call, h5c_msg_);                                         \
        }                                                                                        \
    } while (0)

static inline void h5c_init(int *argc, char ***argv) {
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &h5c_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &h5c_size);
}

/* A file name no other run uses: DIR/oxmpi-h5-TAG-PID-TIME.h5, DIR being argv[1], else
 * $HDF5_TEST_DIR, else $TMPDIR, else /tmp. Rank 0 chooses it; every rank gets the same. */
static inline void h5c_filename(char *out, size_t cap, const char *tag, int argc, char **argv) {
    if (h5c_rank == 0) {
        const char *dir = argc > 1 ? argv[1] : getenv("HDF5_TEST_DIR");
        if (!dir || !*dir)
            dir = getenv("TMPDIR");
        if (!dir || !*dir)
            dir = "/tmp";
        int n = snprintf(out, cap, "%s/oxmpi-h5-%s-%ld-%ld.h5", dir, tag, (long)getpid(),
                         (long)time(NULL));
        if (n < 0 || (size_t)n >= cap)
            H5C_FATAL("file name too long for directory %s", dir);
    }
    H5C_MPI(MPI_Bcast(out, (int)cap, MPI_CHAR, 0, MPI_COMM_WORLD));
}

/* A file access property list for MPI-IO on comm with info. */
static inline hid_t h5c_fapl(MPI_Comm comm, MPI_Info info) {
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5C(fapl);
    H5C(H5Pset_fapl_mpio(fapl, comm, info));
    return fapl;
}

/* A transfer property list, collective or independent. */
static inline hid_t h5c_dxpl(H5FD_mpio_xfer_t mode) {
    hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
    H5C(dxpl);
    H5C(H5Pset_dxpl_mpio(dxpl, mode));
    return dxpl;
}

/* The value element (i, j) of dataset number d holds: distinct across datasets and positions. */
static inline int h5c_val(int d, hsize_t i, hsize_t j) {
    return d * 1000000 + (int)i * 1000 + (int)j;
}

static inline void h5c_fill(int *buf, int d, hsize_t r0, hsize_t c0, hsize_t cstride, hsize_t nr,
                     hsize_t nc) {
    for (hsize_t i = 0; i < nr; i++)
        for (hsize_t j = 0; j < nc; j++)
            buf[i * nc + j] = h5c_val(d, r0 + i, c0 + j * cstride);
}

/* Compares buf (nr x nc, row-major) with dataset d's values at rows r0.., columns c0, c0+cstride, ..;
 * prints the first mismatches and returns how many elements differ. */
static inline long h5c_check(const int *buf, int d, hsize_t r0, hsize_t c0, hsize_t cstride, hsize_t nr,
                      hsize_t nc, const char *what) {
    long bad = 0;
    for (hsize_t i = 0; i < nr; i++)
        for (hsize_t j = 0; j < nc; j++) {
            int want = h5c_val(d, r0 + i, c0 + j * cstride), got = buf[i * nc + j];
            if (got != want && bad++ < 5)
                fprintf(stderr, "rank %d: %s: element (%llu, %llu) is %d, expected %d\n", h5c_rank,
                        what, (unsigned long long)(r0 + i), (unsigned long long)(c0 + j * cstride),
                        got, want);
        }
    if (bad)
        fprintf(stderr, "rank %d: %s: %ld of %llu elements differ\n", h5c_rank, what, bad,
                (unsigned long long)(nr * nc));
    return bad;
}

/* Removes the file with MPI_File_delete (rank 0, after everyone closed it); falls back to remove()
 * so that nothing is left behind, but counts the failure. Returns the number of errors. */
static inline long h5c_remove(const char *name) {
    long errors = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (h5c_rank == 0) {
        int rc = MPI_File_delete((char *)name, MPI_INFO_NULL);
        if (rc != MPI_SUCCESS) {
            char msg[MPI_MAX_ERROR_STRING];
            int len = 0;
            MPI_Error_string(rc, msg, &len);
            fprintf(stderr, "rank 0: MPI_File_delete(%s) failed: %s\n", name, msg);
            remove(name);
            errors++;
        }
        if (access(name, F_OK) == 0) {
            fprintf(stderr, "rank 0: %s still exists after MPI_File_delete\n", name);
            remove(name);
            errors++;
        }
    }
    return errors;
}

/* Sums the errors of all ranks, prints the verdict, finalizes; the program's exit status. */
static inline int h5c_finish(const char *prog, long errors) {
    long total = 0;
    MPI_Allreduce(&errors, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (h5c_rank == 0) {
        if (total)
            printf("%s: %ld errors on %d ranks\n", prog, total, h5c_size);
        else
            printf("%s: all checks passed on %d ranks\n", prog, h5c_size);
    }
    MPI_Finalize();
    return total ? 1 : 0;
}

#endif
