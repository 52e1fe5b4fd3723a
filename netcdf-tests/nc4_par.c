/* netCDF-4 parallel I/O (Debian's libnetcdf-mpi, over parallel HDF5, built on Open MPI): each rank
 * owns a band of rows of a global NY x NX array of doubles and a slice of a 1-D int variable.
 * Creates the file with nc_create_par, writes the band collectively and the slice independently
 * (nc_var_par_access), closes, reopens with nc_open_par and checks the whole array on every rank
 * and the slice independently. The file is argv[1]; the runner keeps it for ncdump. */
#include <netcdf.h>
#include <netcdf_par.h>
#include <string.h>

#include "nccheck.h"

#define NY 40
#define NX 29
#define NL 1000

#define NCC_NC(call)                                                                             \
    do {                                                                                         \
        int ncc_err_ = (call);                                                                   \
        if (ncc_err_ != NC_NOERR)                                                                \
            NCC_FATAL("%s failed: %s", #call, nc_strerror(ncc_err_));                            \
    } while (0)

int main(int argc, char **argv) {
    const char *path = ncc_init(&argc, &argv, "nc4_par");
    long long first, rows;
    ncc_band(NY, &first, &rows);
    size_t ny = rows, y0 = first;
    size_t lb = NL / ncc_size, l0 = ncc_rank * lb, ln = ncc_rank == ncc_size - 1 ? NL - l0 : lb;

    int nc, dy, dx, dl, v_grid, v_line;
    NCC_NC(nc_create_par(path, NC_NETCDF4 | NC_CLOBBER, MPI_COMM_WORLD, MPI_INFO_NULL, &nc));
    NCC_NC(nc_def_dim(nc, "y", NY, &dy));
    NCC_NC(nc_def_dim(nc, "x", NX, &dx));
    NCC_NC(nc_def_dim(nc, "l", NL, &dl));
    int dims[2] = {dy, dx};
    NCC_NC(nc_def_var(nc, "grid", NC_DOUBLE, 2, dims, &v_grid));
    NCC_NC(nc_def_var(nc, "line", NC_INT, 1, &dl, &v_line));
    const char *units = "oxmpi";
    NCC_NC(nc_put_att_text(nc, v_grid, "units", strlen(units), units));
    NCC_NC(nc_enddef(nc));

    double *band = malloc(sizeof(double) * (ny * NX + 1));
    for (size_t i = 0; i < ny; i++)
        for (size_t j = 0; j < NX; j++)
            band[i * NX + j] = ncc_value(0, y0 + i, j) + 0.25;
    size_t start[2] = {y0, 0}, count[2] = {ny, NX};
    NCC_NC(nc_var_par_access(nc, v_grid, NC_COLLECTIVE));
    NCC_NC(nc_put_vara_double(nc, v_grid, start, count, band));

    int *line = malloc(sizeof(int) * (ln + 1));
    for (size_t k = 0; k < ln; k++)
        line[k] = ncc_value(1, 0, l0 + k);
    NCC_NC(nc_var_par_access(nc, v_line, NC_INDEPENDENT));
    NCC_NC(nc_put_vara_int(nc, v_line, &l0, &ln, line));
    NCC_NC(nc_close(nc));

    NCC_NC(nc_open_par(path, NC_NOWRITE, MPI_COMM_WORLD, MPI_INFO_NULL, &nc));
    NCC_NC(nc_inq_varid(nc, "grid", &v_grid));
    NCC_NC(nc_inq_varid(nc, "line", &v_line));
    double *all = malloc(sizeof(double) * NY * NX);
    size_t s0[2] = {0, 0}, whole[2] = {NY, NX};
    NCC_NC(nc_var_par_access(nc, v_grid, NC_COLLECTIVE));
    NCC_NC(nc_get_vara_double(nc, v_grid, s0, whole, all));
    for (int i = 0; i < NY; i++)
        for (int j = 0; j < NX; j++)
            NCC_EXPECT(all[i * NX + j] == ncc_value(0, i, j) + 0.25, "grid[%d][%d] = %g", i, j, all[i * NX + j]);
    memset(line, 0, sizeof(int) * ln);
    NCC_NC(nc_get_vara_int(nc, v_line, &l0, &ln, line));
    for (size_t k = 0; k < ln; k++)
        NCC_EXPECT(line[k] == ncc_value(1, 0, l0 + k), "line[%zu] = %d", l0 + k, line[k]);
    char got[16] = {0};
    NCC_NC(nc_get_att_text(nc, v_grid, "units", got));
    NCC_EXPECT(strcmp(got, units) == 0, "units '%s'", got);
    NCC_NC(nc_close(nc));

    free(all);
    free(line);
    free(band);
    return ncc_finish("nc4_par");
}
