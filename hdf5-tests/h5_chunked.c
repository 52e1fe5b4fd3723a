/* Parallel HDF5, chunked storage: a chunked dataset whose chunks straddle the ranks' row blocks
 * (with partial edge chunks) written collectively; a chunked dataset with a fill value where rank 0
 * writes nothing (an empty selection in the collective call), so its rows must read back as the
 * fill value; a deflate-compressed chunked dataset written collectively; and an extendible dataset
 * (unlimited rows) grown with H5Dset_extent in three steps, each step's rows written collectively.
 * Reopened and read back collectively and independently; every value checked. */
#include "h5check.h"

#define ROWS_PER_RANK 16
#define NCOLS 20
#define CHUNK_R 5 /* 16 and 5 are coprime: chunks straddle rank boundaries */
#define CHUNK_C 7 /* 20 is not a multiple of 7: partial edge chunks */
#define FILL (-7)
#define EXT_ROWS 3 /* rows per rank and step of the extendible dataset */
#define EXT_NCOLS 8
#define EXT_STEPS 3

enum { D_CHUNK = 1, D_SPARSE = 2, D_DEFLATE = 3, D_EXT = 4 };

static hid_t chunked(hid_t f, const char *name, hsize_t nr, hsize_t nc, int fill, int deflate) {
    hsize_t dims[2] = {nr, nc}, chunk[2] = {CHUNK_R, CHUNK_C};
    hid_t space;
    H5C(space = H5Screate_simple(2, dims, NULL));
    hid_t dcpl;
    H5C(dcpl = H5Pcreate(H5P_DATASET_CREATE));
    H5C(H5Pset_chunk(dcpl, 2, chunk));
    if (fill) {
        int v = FILL;
        H5C(H5Pset_fill_value(dcpl, H5T_NATIVE_INT, &v));
        H5C(H5Pset_fill_time(dcpl, H5D_FILL_TIME_ALLOC));
    }
    if (deflate)
        H5C(H5Pset_deflate(dcpl, 6));
    hid_t d;
    H5C(d = H5Dcreate2(f, name, H5T_NATIVE_INT, space, H5P_DEFAULT, dcpl, H5P_DEFAULT));
    H5C(H5Pclose(dcpl));
    H5C(H5Sclose(space));
    return d;
}

/* Writes or reads rows [r0, r0+nr) x all nc columns of d through dxpl; nr may be 0 (an empty
 * selection, still taking part in a collective call). */
static void rows_io(hid_t d, int write, hid_t dxpl, hsize_t r0, hsize_t nr, hsize_t nc, int *buf) {
    hid_t fs;
    H5C(fs = H5Dget_space(d));
    hsize_t start[2] = {r0, 0}, count[2] = {nr, nc}, mdims[2] = {nr ? nr : 1, nc};
    hid_t ms;
    H5C(ms = H5Screate_simple(2, mdims, NULL));
    if (nr) {
        H5C(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL));
    } else {
        H5C(H5Sselect_none(fs));
        H5C(H5Sselect_none(ms));
    }
    if (write)
        H5C(H5Dwrite(d, H5T_NATIVE_INT, ms, fs, dxpl, buf));
    else
        H5C(H5Dread(d, H5T_NATIVE_INT, ms, fs, dxpl, buf));
    H5C(H5Sclose(ms));
    H5C(H5Sclose(fs));
}

static long check_fill(const int *buf, hsize_t r0, hsize_t nr, hsize_t nc, const char *what) {
    long bad = 0;
    for (hsize_t i = 0; i < nr * nc; i++)
        if (buf[i] != FILL && bad++ < 5)
            fprintf(stderr, "rank %d: %s: element (%llu, %llu) is %d, expected the fill value %d\n",
                    h5c_rank, what, (unsigned long long)(r0 + i / nc), (unsigned long long)(i % nc),
                    buf[i], FILL);
    return bad;
}

static long check_layout(hid_t d, const char *what) {
    hid_t dcpl;
    H5C(dcpl = H5Dget_create_plist(d));
    hsize_t chunk[2] = {0, 0};
    long bad = 0;
    if (H5Pget_layout(dcpl) != H5D_CHUNKED || H5Pget_chunk(dcpl, 2, chunk) != 2 ||
        chunk[0] != CHUNK_R || chunk[1] != CHUNK_C) {
        fprintf(stderr, "rank %d: %s: not chunked %dx%d after reopening\n", h5c_rank, what, CHUNK_R,
                CHUNK_C);
        bad = 1;
    }
    H5C(H5Pclose(dcpl));
    return bad;
}

int main(int argc, char **argv) {
    h5c_init(&argc, &argv);
    const int P = h5c_size, r = h5c_rank;
    char name[4096];
    h5c_filename(name, sizeof name, "chunked", argc, argv);
    long errors = 0;
    const hsize_t nr = (hsize_t)ROWS_PER_RANK * P, my0 = (hsize_t)r * ROWS_PER_RANK;
    const hsize_t ext_nr = (hsize_t)EXT_ROWS * P * EXT_STEPS;
    int *buf = malloc(sizeof(int) * (nr * NCOLS + ext_nr * EXT_NCOLS));
    if (!buf)
        H5C_FATAL("out of memory");

    hid_t fapl = h5c_fapl(MPI_COMM_WORLD, MPI_INFO_NULL);
    hid_t coll = h5c_dxpl(H5FD_MPIO_COLLECTIVE), ind = h5c_dxpl(H5FD_MPIO_INDEPENDENT);
    hid_t f;
    H5C(f = H5Fcreate(name, H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    hid_t dch = chunked(f, "chunked", nr, NCOLS, 0, 0);
    hid_t dsp = chunked(f, "sparse", nr, NCOLS, 1, 0);
    hid_t ddf = chunked(f, "deflate", nr, NCOLS, 0, 1);
    h5c_fill(buf, D_CHUNK, my0, 0, 1, ROWS_PER_RANK, NCOLS);
    rows_io(dch, 1, coll, my0, ROWS_PER_RANK, NCOLS, buf);
    h5c_fill(buf, D_SPARSE, my0, 0, 1, ROWS_PER_RANK, NCOLS);
    rows_io(dsp, 1, coll, my0, r == 0 ? 0 : ROWS_PER_RANK, NCOLS, buf);
    h5c_fill(buf, D_DEFLATE, my0, 0, 1, ROWS_PER_RANK, NCOLS);
    rows_io(ddf, 1, coll, my0, ROWS_PER_RANK, NCOLS, buf);

    /* extendible: starts empty, grows by EXT_ROWS * P rows per step */
    hid_t dex;
    {
        hsize_t dims[2] = {0, EXT_NCOLS}, maxd[2] = {H5S_UNLIMITED, EXT_NCOLS},
                chunk[2] = {4, EXT_NCOLS};
        hid_t space;
        H5C(space = H5Screate_simple(2, dims, maxd));
        hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
        H5C(H5Pset_chunk(dcpl, 2, chunk));
        H5C(dex = H5Dcreate2(f, "extendible", H5T_NATIVE_INT, space, H5P_DEFAULT, dcpl, H5P_DEFAULT));
        H5C(H5Pclose(dcpl));
        H5C(H5Sclose(space));
    }
    for (int s = 0; s < EXT_STEPS; s++) {
        hsize_t newd[2] = {(hsize_t)(s + 1) * EXT_ROWS * P, EXT_NCOLS};
        H5C(H5Dset_extent(dex, newd));
        hsize_t r0 = (hsize_t)s * EXT_ROWS * P + (hsize_t)r * EXT_ROWS;
        h5c_fill(buf, D_EXT, r0, 0, 1, EXT_ROWS, EXT_NCOLS);
        rows_io(dex, 1, coll, r0, EXT_ROWS, EXT_NCOLS, buf);
    }
    H5C(H5Dclose(dch));
    H5C(H5Dclose(dsp));
    H5C(H5Dclose(ddf));
    H5C(H5Dclose(dex));
    H5C(H5Fclose(f));


    H5C(f = H5Fopen(name, H5F_ACC_RDONLY, fapl));
    H5C(dch = H5Dopen2(f, "chunked", H5P_DEFAULT));
    H5C(dsp = H5Dopen2(f, "sparse", H5P_DEFAULT));
    H5C(ddf = H5Dopen2(f, "deflate", H5P_DEFAULT));
    H5C(dex = H5Dopen2(f, "extendible", H5P_DEFAULT));
    errors += check_layout(dch, "chunked") + check_layout(dsp, "sparse") + check_layout(ddf, "deflate");
    {
        hsize_t dims[2] = {0, 0};
        hid_t s;
        H5C(s = H5Dget_space(dex));
        H5C(H5Sget_simple_extent_dims(s, dims, NULL));
        H5C(H5Sclose(s));
        if (dims[0] != ext_nr || dims[1] != EXT_NCOLS) {
            fprintf(stderr, "rank %d: extendible: dims %llu x %llu, expected %llu x %d\n", r,
                    (unsigned long long)dims[0], (unsigned long long)dims[1],
                    (unsigned long long)ext_nr, EXT_NCOLS);
            errors++;
        }
    }
    /* collective: all of every dataset on every rank */
    H5C(H5Dread(dch, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, coll, buf));
    errors += h5c_check(buf, D_CHUNK, 0, 0, 1, nr, NCOLS, "chunked, collective read of all");
    H5C(H5Dread(dsp, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, coll, buf));
    errors += check_fill(buf, 0, ROWS_PER_RANK, NCOLS, "sparse, rank 0's unwritten rows");
    errors += h5c_check(buf + ROWS_PER_RANK * NCOLS, D_SPARSE, ROWS_PER_RANK, 0, 1, nr - ROWS_PER_RANK,
                        NCOLS, "sparse, collective read of all");
    H5C(H5Dread(ddf, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, coll, buf));
    errors += h5c_check(buf, D_DEFLATE, 0, 0, 1, nr, NCOLS, "deflate, collective read of all");
    H5C(H5Dread(dex, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, coll, buf));
    errors += h5c_check(buf, D_EXT, 0, 0, 1, ext_nr, EXT_NCOLS, "extendible, collective read of all");
    /* collective, a row block shifted by half a block (straddling two writers) */
    {
        hsize_t r0 = (my0 + ROWS_PER_RANK / 2) % nr, n = r0 + ROWS_PER_RANK <= nr ? ROWS_PER_RANK : nr - r0;
        memset(buf, 0, sizeof(int) * n * NCOLS);
        rows_io(dch, 0, coll, r0, n, NCOLS, buf);
        errors += h5c_check(buf, D_CHUNK, r0, 0, 1, n, NCOLS, "chunked, collective shifted block");
        memset(buf, 0, sizeof(int) * n * NCOLS);
        rows_io(ddf, 0, coll, r0, n, NCOLS, buf);
        errors += h5c_check(buf, D_DEFLATE, r0, 0, 1, n, NCOLS, "deflate, collective shifted block");
    }
    /* independent: the next rank's block of each */
    {
        const hsize_t nx0 = (hsize_t)((r + 1) % P) * ROWS_PER_RANK;
        memset(buf, 0, sizeof(int) * ROWS_PER_RANK * NCOLS);
        rows_io(dch, 0, ind, nx0, ROWS_PER_RANK, NCOLS, buf);
        errors += h5c_check(buf, D_CHUNK, nx0, 0, 1, ROWS_PER_RANK, NCOLS, "chunked, independent block");
        memset(buf, 0, sizeof(int) * ROWS_PER_RANK * NCOLS);
        rows_io(dsp, 0, ind, nx0, ROWS_PER_RANK, NCOLS, buf);
        if (nx0 == 0)
            errors += check_fill(buf, 0, ROWS_PER_RANK, NCOLS, "sparse, independent read of rank 0's rows");
        else
            errors += h5c_check(buf, D_SPARSE, nx0, 0, 1, ROWS_PER_RANK, NCOLS, "sparse, independent block");
        memset(buf, 0, sizeof(int) * ROWS_PER_RANK * NCOLS);
        rows_io(ddf, 0, ind, nx0, ROWS_PER_RANK, NCOLS, buf);
        errors += h5c_check(buf, D_DEFLATE, nx0, 0, 1, ROWS_PER_RANK, NCOLS, "deflate, independent block");
        const hsize_t e0 = (hsize_t)(EXT_STEPS - 1) * EXT_ROWS * P + (hsize_t)((r + 1) % P) * EXT_ROWS;
        memset(buf, 0, sizeof(int) * EXT_ROWS * EXT_NCOLS);
        rows_io(dex, 0, ind, e0, EXT_ROWS, EXT_NCOLS, buf);
        errors += h5c_check(buf, D_EXT, e0, 0, 1, EXT_ROWS, EXT_NCOLS, "extendible, independent block");
    }
    H5C(H5Dclose(dch));
    H5C(H5Dclose(dsp));
    H5C(H5Dclose(ddf));
    H5C(H5Dclose(dex));
    H5C(H5Fclose(f));
    H5C(H5Pclose(coll));
    H5C(H5Pclose(ind));
    H5C(H5Pclose(fapl));
    free(buf);
    errors += h5c_remove(name);
    return h5c_finish("h5_chunked", errors);
}
