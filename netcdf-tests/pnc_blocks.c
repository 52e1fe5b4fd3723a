/* PnetCDF (Debian's libpnetcdf, built on Open MPI) on a 2-D block decomposition: each rank owns a
 * band of rows of a global NY x NX array. Writes three variables through three of PnetCDF's paths
 * (collective put_vara_all of ints, independent put_vara of doubles, nonblocking iput_vara +
 * wait_all of a strided subarray with put_vars), plus a record variable grown by each rank and a
 * global attribute; closes, reopens read-only and checks every element each rank reads back
 * (collective get_vara_all of the whole array on every rank, and independent gets), then
 * inquires the dimensions. The file is left for the runner (ncmpidump, ncmpidiff), whose name is
 * argv[1]. */
#include <pnetcdf.h>
#include <string.h>

#include "nccheck.h"

#define NY 48
#define NX 37

#define NCC_PNC(call)                                                                            \
    do {                                                                                         \
        int ncc_err_ = (call);                                                                   \
        if (ncc_err_ != NC_NOERR)                                                                \
            NCC_FATAL("%s failed: %s", #call, ncmpi_strerror(ncc_err_));                         \
    } while (0)

int main(int argc, char **argv) {
    const char *path = ncc_init(&argc, &argv, "pnc_blocks");
    long long band0, band;
    ncc_band(NY, &band0, &band);
    MPI_Offset ny = band, y0 = band0;

    MPI_Info info;
    NCC_MPI(MPI_Info_create(&info));
    NCC_MPI(MPI_Info_set(info, "cb_buffer_size", "4096")); /* several two-phase rounds */

    int nc, dy, dx, dt, v_int, v_dbl, v_str, v_rec;
    NCC_PNC(ncmpi_create(MPI_COMM_WORLD, path, NC_CLOBBER | NC_64BIT_DATA, info, &nc));
    NCC_PNC(ncmpi_def_dim(nc, "y", NY, &dy));
    NCC_PNC(ncmpi_def_dim(nc, "x", NX, &dx));
    NCC_PNC(ncmpi_def_dim(nc, "t", NC_UNLIMITED, &dt));
    int dims[2] = {dy, dx};
    NCC_PNC(ncmpi_def_var(nc, "ints", NC_INT, 2, dims, &v_int));
    NCC_PNC(ncmpi_def_var(nc, "doubles", NC_DOUBLE, 2, dims, &v_dbl));
    NCC_PNC(ncmpi_def_var(nc, "strided", NC_INT, 2, dims, &v_str));
    int rdims[2] = {dt, dx};
    NCC_PNC(ncmpi_def_var(nc, "records", NC_INT, 2, rdims, &v_rec));
    const char *title = "oxmpi netcdf-tests pnc_blocks";
    NCC_PNC(ncmpi_put_att_text(nc, NC_GLOBAL, "title", strlen(title), title));
    NCC_PNC(ncmpi_enddef(nc));

    int *ibuf = malloc(sizeof(int) * (ny * NX + 1));
    double *dbuf = malloc(sizeof(double) * (ny * NX + 1));
    for (MPI_Offset i = 0; i < ny; i++)
        for (MPI_Offset j = 0; j < NX; j++) {
            ibuf[i * NX + j] = ncc_value(0, y0 + i, j);
            dbuf[i * NX + j] = ncc_value(1, y0 + i, j) + 0.5;
        }
    MPI_Offset start[2] = {y0, 0}, count[2] = {ny, NX};

    /* Collective. */
    NCC_PNC(ncmpi_put_vara_int_all(nc, v_int, start, count, ibuf));

    /* Independent. */
    NCC_PNC(ncmpi_begin_indep_data(nc));
    NCC_PNC(ncmpi_put_vara_double(nc, v_dbl, start, count, dbuf));
    NCC_PNC(ncmpi_end_indep_data(nc));

    /* Nonblocking: the even columns of the band in one strided request, the odd ones in another,
     * both flushed by one collective wait. */
    MPI_Offset half[2] = {(NX + 1) / 2, NX / 2};
    int *even = malloc(sizeof(int) * (ny * half[0] + 1)), *odd = malloc(sizeof(int) * (ny * half[1] + 1));
    for (MPI_Offset i = 0; i < ny; i++) {
        for (MPI_Offset k = 0; k < half[0]; k++)
            even[i * half[0] + k] = ncc_value(2, y0 + i, 2 * k);
        for (MPI_Offset k = 0; k < half[1]; k++)
            odd[i * half[1] + k] = ncc_value(2, y0 + i, 2 * k + 1);
    }
    MPI_Offset s_even[2] = {y0, 0}, s_odd[2] = {y0, 1}, c_even[2] = {ny, half[0]}, c_odd[2] = {ny, half[1]}, stride[2] = {1, 2};
    int req[2], st[2];
    NCC_PNC(ncmpi_iput_vars_int(nc, v_str, s_even, c_even, stride, even, &req[0]));
    NCC_PNC(ncmpi_iput_vars_int(nc, v_str, s_odd, c_odd, stride, odd, &req[1]));
    NCC_PNC(ncmpi_wait_all(nc, 2, req, st));
    NCC_PNC(st[0]);
    NCC_PNC(st[1]);

    /* Records: record r is written by rank r % size, collectively (ranks with nothing write 0). */
    for (int r = 0; r < 3; r++) {
        int row[NX];
        for (int j = 0; j < NX; j++)
            row[j] = ncc_value(3, r, j);
        MPI_Offset rs[2] = {r, 0}, rc[2] = {r % ncc_size == ncc_rank ? 1 : 0, NX};
        NCC_PNC(ncmpi_put_vara_int_all(nc, v_rec, rs, rc, row));
    }
    NCC_PNC(ncmpi_close(nc));

    /* Read back: the whole array collectively on every rank, then this rank's band independently. */
    NCC_PNC(ncmpi_open(MPI_COMM_WORLD, path, NC_NOWRITE, info, &nc));
    MPI_Offset len_y, len_x, len_t;
    NCC_PNC(ncmpi_inq_dimlen(nc, dy, &len_y));
    NCC_PNC(ncmpi_inq_dimlen(nc, dx, &len_x));
    NCC_PNC(ncmpi_inq_dimlen(nc, dt, &len_t));
    NCC_EXPECT(len_y == NY && len_x == NX && len_t == 3, "dimensions %lld x %lld, %lld records", (long long)len_y, (long long)len_x, (long long)len_t);
    char got_title[64] = {0};
    NCC_PNC(ncmpi_get_att_text(nc, NC_GLOBAL, "title", got_title));
    NCC_EXPECT(strcmp(got_title, title) == 0, "title '%s'", got_title);

    int *all = malloc(sizeof(int) * NY * NX);
    MPI_Offset s0[2] = {0, 0}, whole[2] = {NY, NX};
    NCC_PNC(ncmpi_get_vara_int_all(nc, v_int, s0, whole, all));
    for (int i = 0; i < NY; i++)
        for (int j = 0; j < NX; j++)
            NCC_EXPECT(all[i * NX + j] == ncc_value(0, i, j), "ints[%d][%d] = %d", i, j, all[i * NX + j]);
    NCC_PNC(ncmpi_get_vara_int_all(nc, v_str, s0, whole, all));
    for (int i = 0; i < NY; i++)
        for (int j = 0; j < NX; j++)
            NCC_EXPECT(all[i * NX + j] == ncc_value(2, i, j), "strided[%d][%d] = %d", i, j, all[i * NX + j]);
    MPI_Offset rs0[2] = {0, 0}, rall[2] = {3, NX};
    NCC_PNC(ncmpi_get_vara_int_all(nc, v_rec, rs0, rall, all));
    for (int r = 0; r < 3; r++)
        for (int j = 0; j < NX; j++)
            NCC_EXPECT(all[r * NX + j] == ncc_value(3, r, j), "records[%d][%d] = %d", r, j, all[r * NX + j]);

    NCC_PNC(ncmpi_begin_indep_data(nc));
    memset(dbuf, 0, sizeof(double) * ny * NX);
    NCC_PNC(ncmpi_get_vara_double(nc, v_dbl, start, count, dbuf));
    for (MPI_Offset i = 0; i < ny; i++)
        for (MPI_Offset j = 0; j < NX; j++)
            NCC_EXPECT(dbuf[i * NX + j] == ncc_value(1, y0 + i, j) + 0.5, "doubles[%lld][%lld] = %g", (long long)(y0 + i), (long long)j, dbuf[i * NX + j]);
    NCC_PNC(ncmpi_end_indep_data(nc));
    NCC_PNC(ncmpi_close(nc));

    MPI_Info_free(&info);
    free(all);
    free(even);
    free(odd);
    free(ibuf);
    free(dbuf);
    return ncc_finish("pnc_blocks");
}
