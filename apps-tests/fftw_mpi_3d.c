/* FFTW's MPI interface (Debian's libfftw3-mpi, built on Open MPI): a distributed 3-D complex
 * transform (slab decomposition: FFTW transposes with MPI_Alltoall(v)), forward then backward,
 * and a distributed 2-D real-to-complex transform with a transposed output. Checked against
 * the analytic transform of a plane wave and by the round trip.
 * Prints "fftw_mpi_3d: OK (N ranks)" on rank 0 when every check passed. */
#include <fftw3-mpi.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define N0 32
#define N1 24
#define N2 20

static int fail(const char *what, double err) {
    fprintf(stderr, "fftw_mpi_3d: FAIL %s (error %g)\n", what, err);
    return 1;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    fftw_mpi_init();
    int rank, size, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* 3-D complex: a plane wave with wave numbers (k0, k1, k2) has one nonzero coefficient. */
    ptrdiff_t local_n0, local_0_start;
    ptrdiff_t alloc = fftw_mpi_local_size_3d(N0, N1, N2, MPI_COMM_WORLD, &local_n0, &local_0_start);
    fftw_complex *data = fftw_alloc_complex(alloc);
    fftw_plan fwd = fftw_mpi_plan_dft_3d(N0, N1, N2, data, data, MPI_COMM_WORLD, FFTW_FORWARD, FFTW_ESTIMATE);
    fftw_plan bwd = fftw_mpi_plan_dft_3d(N0, N1, N2, data, data, MPI_COMM_WORLD, FFTW_BACKWARD, FFTW_ESTIMATE);
    const int k0 = 3, k1 = 5, k2 = 7;
    for (ptrdiff_t i = 0; i < local_n0; i++)
        for (int j = 0; j < N1; j++)
            for (int k = 0; k < N2; k++) {
                double ph = 2 * M_PI * ((double)k0 * (i + local_0_start) / N0 + (double)k1 * j / N1 + (double)k2 * k / N2);
                fftw_complex *c = &data[(i * N1 + j) * N2 + k];
                (*c)[0] = cos(ph);
                (*c)[1] = sin(ph);
            }
    fftw_execute(fwd);
    double err = 0, total = (double)N0 * N1 * N2;
    for (ptrdiff_t i = 0; i < local_n0; i++)
        for (int j = 0; j < N1; j++)
            for (int k = 0; k < N2; k++) {
                int peak = i + local_0_start == k0 && j == k1 && k == k2;
                fftw_complex *c = &data[(i * N1 + j) * N2 + k];
                err = fmax(err, fabs((*c)[0] - (peak ? total : 0)) + fabs((*c)[1]));
            }
    double gerr;
    MPI_Allreduce(&err, &gerr, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (gerr > 1e-6 * total) bad |= fail("3-D forward transform of a plane wave", gerr);
    fftw_execute(bwd);
    err = 0;
    for (ptrdiff_t i = 0; i < local_n0; i++)
        for (int j = 0; j < N1; j++)
            for (int k = 0; k < N2; k++) {
                double ph = 2 * M_PI * ((double)k0 * (i + local_0_start) / N0 + (double)k1 * j / N1 + (double)k2 * k / N2);
                fftw_complex *c = &data[(i * N1 + j) * N2 + k];
                err = fmax(err, fabs((*c)[0] / total - cos(ph)) + fabs((*c)[1] / total - sin(ph)));
            }
    MPI_Allreduce(&err, &gerr, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (gerr > 1e-9) bad |= fail("3-D round trip", gerr);
    fftw_destroy_plan(fwd);
    fftw_destroy_plan(bwd);
    fftw_free(data);

    /* 2-D real to complex, output transposed (FFTW_MPI_TRANSPOSED_OUT): a cosine along
     * dimension 1 gives N0*N1/2 at (0, k) in the transposed layout. */
    const ptrdiff_t M0 = 36, M1 = 30;
    ptrdiff_t ln0, l0s, ln1, l1s;
    ptrdiff_t a2 = fftw_mpi_local_size_2d_transposed(M0, M1 / 2 + 1, MPI_COMM_WORLD, &ln0, &l0s, &ln1, &l1s);
    double *in = fftw_alloc_real(2 * a2);
    fftw_complex *out = fftw_alloc_complex(a2);
    fftw_plan r2c = fftw_mpi_plan_dft_r2c_2d(M0, M1, in, out, MPI_COMM_WORLD, FFTW_ESTIMATE | FFTW_MPI_TRANSPOSED_OUT);
    const int kk = 4;
    for (ptrdiff_t i = 0; i < ln0; i++)
        for (ptrdiff_t j = 0; j < M1; j++) in[i * (2 * (M1 / 2 + 1)) + j] = cos(2 * M_PI * kk * j / M1) + (double)(i + l0s) * 0;
    fftw_execute(r2c);
    err = 0;
    for (ptrdiff_t j = 0; j < ln1; j++) /* transposed: rows are dimension 1 */
        for (ptrdiff_t i = 0; i < M0; i++) {
            int peak = (j + l1s) == kk && i == 0;
            fftw_complex *c = &out[j * M0 + i];
            err = fmax(err, fabs((*c)[0] - (peak ? (double)M0 * M1 / 2 : 0)) + fabs((*c)[1]));
        }
    MPI_Allreduce(&err, &gerr, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (gerr > 1e-6 * M0 * M1) bad |= fail("2-D r2c transposed transform", gerr);
    fftw_destroy_plan(r2c);
    fftw_free(in);
    fftw_free(out);

    int gbad;
    MPI_Allreduce(&bad, &gbad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0 && !gbad) printf("fftw_mpi_3d: OK (%d ranks)\n", size);
    fftw_mpi_cleanup();
    MPI_Finalize();
    return gbad;
}
