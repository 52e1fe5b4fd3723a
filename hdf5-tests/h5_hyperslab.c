/* Parallel HDF5: a file created collectively with groups and attributes; a 2-D dataset written with
 * collective hyperslabs (a block of rows per rank), one with a strided column decomposition (rank r
 * owns columns r, r+P, ...), one written with independent hyperslab writes; then the file reopened
 * read-only and everything read back collectively and independently, every value checked. */
#include "h5check.h"

#define ROWS_PER_RANK 12 /* rows dataset: (12 P) x 10, a block of 12 rows per rank */
#define ROWS_NCOLS 10
#define COLS_NROWS 9 /* strided dataset: 9 x (6 P), columns r, r+P, ... for rank r */
#define COLS_PER_RANK 6
#define IND_ROWS 4 /* independent dataset: (4 P) x 16, written in two column halves */
#define IND_NCOLS 16

enum { D_ROWS = 1, D_COLS = 2, D_IND = 3 };

static hid_t make_dataset(hid_t loc, const char *name, hsize_t nr, hsize_t nc, const char *how) {
    hsize_t dims[2] = {nr, nc};
    hid_t space;
    H5C(space = H5Screate_simple(2, dims, NULL));
    hid_t d;
    H5C(d = H5Dcreate2(loc, name, H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    /* a string attribute on each dataset: how it was decomposed */
    hid_t st;
    H5C(st = H5Tcopy(H5T_C_S1));
    H5C(H5Tset_size(st, strlen(how) + 1));
    hid_t as = H5Screate(H5S_SCALAR);
    hid_t a;
    H5C(a = H5Acreate2(d, "decomposition", st, as, H5P_DEFAULT, H5P_DEFAULT));
    H5C(H5Awrite(a, st, how));
    H5C(H5Aclose(a));
    H5C(H5Sclose(as));
    H5C(H5Tclose(st));
    H5C(H5Sclose(space));
    return d;
}

/* Writes (or reads) buf through a hyperslab of d: start, stride, count (block 1). */
static void slab_io(hid_t d, int write, hid_t dxpl, const hsize_t start[2], const hsize_t stride[2],
                    const hsize_t count[2], int *buf) {
    hid_t fs;
    H5C(fs = H5Dget_space(d));
    H5C(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, stride, count, NULL));
    hid_t ms;
    H5C(ms = H5Screate_simple(2, count, NULL));
    if (write)
        H5C(H5Dwrite(d, H5T_NATIVE_INT, ms, fs, dxpl, buf));
    else
        H5C(H5Dread(d, H5T_NATIVE_INT, ms, fs, dxpl, buf));
    H5C(H5Sclose(ms));
    H5C(H5Sclose(fs));
}

static long check_string_attr(hid_t d, const char *want, const char *what) {
    char got[128] = {0};
    hid_t a;
    H5C(a = H5Aopen(d, "decomposition", H5P_DEFAULT));
    hid_t t;
    H5C(t = H5Aget_type(a));
    if (H5Tget_size(t) >= sizeof got)
        H5C_FATAL("%s: attribute too long", what);
    H5C(H5Aread(a, t, got));
    H5C(H5Tclose(t));
    H5C(H5Aclose(a));
    if (strcmp(got, want) != 0) {
        fprintf(stderr, "rank %d: %s: attribute 'decomposition' is '%s', expected '%s'\n", h5c_rank,
                what, got, want);
        return 1;
    }
    return 0;
}

static long check_dims(hid_t d, hsize_t nr, hsize_t nc, const char *what) {
    hsize_t dims[2] = {0, 0};
    hid_t s;
    H5C(s = H5Dget_space(d));
    if (H5Sget_simple_extent_ndims(s) != 2 || H5Sget_simple_extent_dims(s, dims, NULL) != 2) {
        fprintf(stderr, "rank %d: %s: not a 2-D dataset\n", h5c_rank, what);
        H5Sclose(s);
        return 1;
    }
    H5C(H5Sclose(s));
    if (dims[0] != nr || dims[1] != nc) {
        fprintf(stderr, "rank %d: %s: dims %llu x %llu, expected %llu x %llu\n", h5c_rank, what,
                (unsigned long long)dims[0], (unsigned long long)dims[1], (unsigned long long)nr,
                (unsigned long long)nc);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv) {
    h5c_init(&argc, &argv);
    const int P = h5c_size, r = h5c_rank;
    char name[4096];
    h5c_filename(name, sizeof name, "hyperslab", argc, argv);
    long errors = 0;
    const hsize_t rows_nr = (hsize_t)ROWS_PER_RANK * P, cols_nc = (hsize_t)COLS_PER_RANK * P,
                  ind_nr = (hsize_t)IND_ROWS * P;
    const hsize_t one[2] = {1, 1};
    int *buf = malloc(sizeof(int) * ROWS_PER_RANK * ROWS_NCOLS * P * 2 + sizeof(int) * 1024 * P);
    if (!buf)
        H5C_FATAL("out of memory");

    /* ---- write ---- */
    hid_t fapl = h5c_fapl(MPI_COMM_WORLD, MPI_INFO_NULL);
    hid_t f;
    H5C(f = H5Fcreate(name, H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    {
        int nranks = P;
        hid_t as = H5Screate(H5S_SCALAR);
        hid_t a;
        H5C(a = H5Acreate2(f, "nranks", H5T_NATIVE_INT, as, H5P_DEFAULT, H5P_DEFAULT));
        H5C(H5Awrite(a, H5T_NATIVE_INT, &nranks));
        H5C(H5Aclose(a));
        H5C(H5Sclose(as));
    }
    hid_t g1;
    H5C(g1 = H5Gcreate2(f, "/grid", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    hid_t g2;
    H5C(g2 = H5Gcreate2(g1, "level1", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    hid_t dr = make_dataset(g1, "rows", rows_nr, ROWS_NCOLS, "rows");
    hid_t dc = make_dataset(g2, "columns", COLS_NROWS, cols_nc, "strided columns");
    hid_t di = make_dataset(f, "independent", ind_nr, IND_NCOLS, "rows, independent");
    hid_t coll = h5c_dxpl(H5FD_MPIO_COLLECTIVE), ind = h5c_dxpl(H5FD_MPIO_INDEPENDENT);
    {
        hsize_t start[2] = {(hsize_t)r * ROWS_PER_RANK, 0}, count[2] = {ROWS_PER_RANK, ROWS_NCOLS};
        h5c_fill(buf, D_ROWS, start[0], 0, 1, count[0], count[1]);
        slab_io(dr, 1, coll, start, one, count, buf);
    }
    {
        hsize_t start[2] = {0, (hsize_t)r}, stride[2] = {1, (hsize_t)P},
                count[2] = {COLS_NROWS, COLS_PER_RANK};
        h5c_fill(buf, D_COLS, 0, (hsize_t)r, (hsize_t)P, count[0], count[1]);
        slab_io(dc, 1, coll, start, stride, count, buf);
    }
    for (int half = 0; half < 2; half++) { /* two independent writes per rank, right half first */
        hsize_t c0 = half == 0 ? IND_NCOLS / 2 : 0;
        hsize_t start[2] = {(hsize_t)r * IND_ROWS, c0}, count[2] = {IND_ROWS, IND_NCOLS / 2};
        h5c_fill(buf, D_IND, start[0], c0, 1, count[0], count[1]);
        slab_io(di, 1, ind, start, one, count, buf);
    }
    H5C(H5Dclose(dr));
    H5C(H5Dclose(dc));
    H5C(H5Dclose(di));
    H5C(H5Gclose(g2));
    H5C(H5Gclose(g1));
    H5C(H5Fclose(f));

    /* ---- reopen read-only, read back everything ---- */
    H5C(f = H5Fopen(name, H5F_ACC_RDONLY, fapl));
    {
        int nranks = -1;
        hid_t a;
        H5C(a = H5Aopen(f, "nranks", H5P_DEFAULT));
        H5C(H5Aread(a, H5T_NATIVE_INT, &nranks));
        H5C(H5Aclose(a));
        if (nranks != P) {
            fprintf(stderr, "rank %d: root attribute nranks is %d, expected %d\n", r, nranks, P);
            errors++;
        }
    }
    {
        H5G_info_t info;
        H5C(H5Gget_info_by_name(f, "/grid", &info, H5P_DEFAULT));
        if (info.nlinks != 2) { /* rows and level1 */
            fprintf(stderr, "rank %d: /grid has %llu links, expected 2\n", r,
                    (unsigned long long)info.nlinks);
            errors++;
        }
        if (H5Lexists(f, "/grid/level1/columns", H5P_DEFAULT) <= 0) {
            fprintf(stderr, "rank %d: /grid/level1/columns does not exist\n", r);
            errors++;
        }
    }
    H5C(dr = H5Dopen2(f, "/grid/rows", H5P_DEFAULT));
    H5C(dc = H5Dopen2(f, "/grid/level1/columns", H5P_DEFAULT));
    H5C(di = H5Dopen2(f, "/independent", H5P_DEFAULT));
    errors += check_dims(dr, rows_nr, ROWS_NCOLS, "rows") + check_dims(dc, COLS_NROWS, cols_nc, "columns") +
              check_dims(di, ind_nr, IND_NCOLS, "independent");
    errors += check_string_attr(dr, "rows", "rows") +
              check_string_attr(dc, "strided columns", "columns") +
              check_string_attr(di, "rows, independent", "independent");

    /* collective: every rank reads every whole dataset */
    H5C(H5Dread(dr, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, coll, buf));
    errors += h5c_check(buf, D_ROWS, 0, 0, 1, rows_nr, ROWS_NCOLS, "rows, collective read of all");
    H5C(H5Dread(dc, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, coll, buf));
    errors += h5c_check(buf, D_COLS, 0, 0, 1, COLS_NROWS, cols_nc, "columns, collective read of all");
    H5C(H5Dread(di, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, coll, buf));
    errors += h5c_check(buf, D_IND, 0, 0, 1, ind_nr, IND_NCOLS, "independent, collective read of all");

    /* collective hyperslab reads of the next rank's part (another decomposition than the writer's) */
    const int nx = (r + 1) % P;
    {
        hsize_t start[2] = {(hsize_t)nx * ROWS_PER_RANK, 0}, count[2] = {ROWS_PER_RANK, ROWS_NCOLS};
        memset(buf, 0, sizeof(int) * count[0] * count[1]);
        slab_io(dr, 0, coll, start, one, count, buf);
        errors += h5c_check(buf, D_ROWS, start[0], 0, 1, count[0], count[1], "rows, collective slab");
    }
    {
        hsize_t start[2] = {0, (hsize_t)nx}, stride[2] = {1, (hsize_t)P},
                count[2] = {COLS_NROWS, COLS_PER_RANK};
        memset(buf, 0, sizeof(int) * count[0] * count[1]);
        slab_io(dc, 0, coll, start, stride, count, buf);
        errors += h5c_check(buf, D_COLS, 0, (hsize_t)nx, (hsize_t)P, count[0], count[1],
                            "columns, collective strided slab");
    }
    /* independent reads: a transposed view (a column block of the rows dataset), the strided
     * columns of the previous rank, and the independent dataset's block of this rank */
    {
        hsize_t start[2] = {0, (hsize_t)(r % ROWS_NCOLS)}, count[2] = {rows_nr, 1};
        memset(buf, 0, sizeof(int) * count[0]);
        slab_io(dr, 0, ind, start, one, count, buf);
        errors += h5c_check(buf, D_ROWS, 0, start[1], 1, count[0], 1, "rows, independent column");
    }
    {
        const int pv = (r + P - 1) % P;
        hsize_t start[2] = {0, (hsize_t)pv}, stride[2] = {1, (hsize_t)P},
                count[2] = {COLS_NROWS, COLS_PER_RANK};
        memset(buf, 0, sizeof(int) * count[0] * count[1]);
        slab_io(dc, 0, ind, start, stride, count, buf);
        errors += h5c_check(buf, D_COLS, 0, (hsize_t)pv, (hsize_t)P, count[0], count[1],
                            "columns, independent strided slab");
    }
    {
        hsize_t start[2] = {(hsize_t)r * IND_ROWS, 0}, count[2] = {IND_ROWS, IND_NCOLS};
        memset(buf, 0, sizeof(int) * count[0] * count[1]);
        slab_io(di, 0, ind, start, one, count, buf);
        errors += h5c_check(buf, D_IND, start[0], 0, 1, count[0], count[1], "independent, own block");
    }
    H5C(H5Dclose(dr));
    H5C(H5Dclose(dc));
    H5C(H5Dclose(di));
    H5C(H5Pclose(coll));
    H5C(H5Pclose(ind));
    H5C(H5Fclose(f));
    H5C(H5Pclose(fapl));
    free(buf);
    errors += h5c_remove(name);
    return h5c_finish("h5_hyperslab", errors);
}
