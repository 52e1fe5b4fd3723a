/* Parallel HDF5 over H5Pset_fapl_mpio with MPI_Info hints (collective buffering, data sieving,
 * striping): the property list gives back its communicator and hints; the MPI file under HDF5
 * (H5Fget_vfd_handle) reports the collective buffer size asked for and is opened read-write; MPI
 * atomicity set through HDF5 reaches it; writes with H5FD_MPIO_INDIVIDUAL_IO under a collective
 * transfer; and two files at once, each on half of the ranks (MPI_Comm_split). Read back and checked. */
#include "h5check.h"

#define N_PER_RANK 1000 /* doubles per rank in a 1-D dataset */
#define CB_SIZE "1048576"

static long check_hint(MPI_Info info, const char *key, const char *want, const char *where) {
    char got[MPI_MAX_INFO_VAL + 1] = {0};
    int flag = 0;
    H5C_MPI(MPI_Info_get(info, key, MPI_MAX_INFO_VAL, got, &flag));
    if (!flag) {
        fprintf(stderr, "rank %d: %s: hint %s missing, expected %s\n", h5c_rank, where, key, want);
        return 1;
    }
    if (strcmp(got, want) != 0) {
        fprintf(stderr, "rank %d: %s: hint %s is '%s', expected '%s'\n", h5c_rank, where, key, got,
                want);
        return 1;
    }
    return 0;
}

static double value(int file, long i) { return file * 1e6 + i * 0.5; }

/* Writes a 1-D dataset of comm's size * N_PER_RANK doubles (each rank its block, in two writes:
 * collective, then collective with individual I/O underneath), reads it all back and checks it. */
static long write_read(hid_t f, MPI_Comm comm, int file) {
    int crank, csize;
    MPI_Comm_rank(comm, &crank);
    MPI_Comm_size(comm, &csize);
    long errors = 0;
    hsize_t n = (hsize_t)csize * N_PER_RANK;
    hid_t space;
    H5C(space = H5Screate_simple(1, &n, NULL));
    hid_t d;
    H5C(d = H5Dcreate2(f, "values", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    double *buf = malloc(sizeof(double) * n);
    if (!buf)
        H5C_FATAL("out of memory");
    hid_t coll = h5c_dxpl(H5FD_MPIO_COLLECTIVE), indio = h5c_dxpl(H5FD_MPIO_COLLECTIVE);
    H5C(H5Pset_dxpl_mpio_collective_opt(indio, H5FD_MPIO_INDIVIDUAL_IO));
    for (int half = 0; half < 2; half++) {
        hsize_t start = (hsize_t)crank * N_PER_RANK + (hsize_t)half * (N_PER_RANK / 2),
                count = N_PER_RANK / 2;
        for (hsize_t i = 0; i < count; i++)
            buf[i] = value(file, (long)(start + i));
        hid_t fs = H5Dget_space(d);
        H5C(H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &count, NULL));
        hid_t ms = H5Screate_simple(1, &count, NULL);
        H5C(H5Dwrite(d, H5T_NATIVE_DOUBLE, ms, fs, half ? indio : coll, buf));
        H5C(H5Sclose(ms));
        H5C(H5Sclose(fs));
    }
    H5C(H5Fflush(f, H5F_SCOPE_GLOBAL));
    memset(buf, 0, sizeof(double) * n);
    H5C(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, coll, buf));
    long bad = 0;
    for (hsize_t i = 0; i < n; i++)
        if (buf[i] != value(file, (long)i) && bad++ < 5)
            fprintf(stderr, "rank %d: file %d: element %llu is %g, expected %g\n", h5c_rank, file,
                    (unsigned long long)i, buf[i], value(file, (long)i));
    if (bad)
        fprintf(stderr, "rank %d: file %d: %ld of %llu elements differ\n", h5c_rank, file, bad,
                (unsigned long long)n);
    errors += bad;
    free(buf);
    H5C(H5Pclose(coll));
    H5C(H5Pclose(indio));
    H5C(H5Dclose(d));
    H5C(H5Sclose(space));
    return errors;
}

int main(int argc, char **argv) {
    h5c_init(&argc, &argv);
    const int r = h5c_rank;
    char base[4096], name[4200];
    h5c_filename(base, sizeof base, "hints", argc, argv);
    long errors = 0;

    MPI_Info info;
    H5C_MPI(MPI_Info_create(&info));
    H5C_MPI(MPI_Info_set(info, "cb_buffer_size", CB_SIZE));
    H5C_MPI(MPI_Info_set(info, "romio_cb_write", "enable"));
    H5C_MPI(MPI_Info_set(info, "romio_cb_read", "enable"));
    H5C_MPI(MPI_Info_set(info, "romio_ds_write", "disable"));
    H5C_MPI(MPI_Info_set(info, "cb_nodes", "1"));
    H5C_MPI(MPI_Info_set(info, "striping_unit", "65536"));

    /* half of the ranks per file: even ranks file 0, odd ranks file 1 */
    const int color = r % 2;
    MPI_Comm half;
    H5C_MPI(MPI_Comm_split(MPI_COMM_WORLD, color, r, &half));
    snprintf(name, sizeof name, "%s.%d", base, color);
    hid_t fapl = h5c_fapl(half, info);
    H5C_MPI(MPI_Info_free(&info)); /* the property list keeps its own copy */

    {   /* the property list gives back a communicator congruent to half and the hints */
        MPI_Comm c2 = MPI_COMM_NULL;
        MPI_Info i2 = MPI_INFO_NULL;
        int cmp = MPI_UNEQUAL;
        H5C(H5Pget_fapl_mpio(fapl, &c2, &i2));
        H5C_MPI(MPI_Comm_compare(half, c2, &cmp));
        if (cmp != MPI_CONGRUENT) {
            fprintf(stderr, "rank %d: H5Pget_fapl_mpio's communicator compares %d, expected MPI_CONGRUENT\n",
                    r, cmp);
            errors++;
        }
        if (i2 == MPI_INFO_NULL) {
            fprintf(stderr, "rank %d: H5Pget_fapl_mpio returned no info\n", r);
            errors++;
        } else {
            errors += check_hint(i2, "cb_buffer_size", CB_SIZE, "H5Pget_fapl_mpio");
            errors += check_hint(i2, "striping_unit", "65536", "H5Pget_fapl_mpio");
            MPI_Info_free(&i2);
        }
        MPI_Comm_free(&c2);
    }

    hid_t f;

    H5C(f = H5Fcreate(name, H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    {   /* the MPI file under HDF5 */
        void *handle = NULL;
        H5C(H5Fget_vfd_handle(f, fapl, &handle));
        MPI_File fh = *(MPI_File *)handle;
        MPI_Info used;
        int amode = 0;
        H5C_MPI(MPI_File_get_info(fh, &used));
        errors += check_hint(used, "cb_buffer_size", CB_SIZE, "MPI_File_get_info of HDF5's file");
        H5C_MPI(MPI_Info_free(&used));
        H5C_MPI(MPI_File_get_amode(fh, &amode));
        if (!(amode & MPI_MODE_RDWR) || !(amode & MPI_MODE_CREATE)) {
            fprintf(stderr, "rank %d: HDF5's MPI file has amode %#x, expected RDWR|CREATE\n", r, amode);
            errors++;
        }
        MPI_Group g1, g2;
        int cmp = MPI_UNEQUAL;
        H5C_MPI(MPI_File_get_group(fh, &g1));
        H5C_MPI(MPI_Comm_group(half, &g2));
        H5C_MPI(MPI_Group_compare(g1, g2, &cmp));
        if (cmp != MPI_IDENT) {
            fprintf(stderr, "rank %d: HDF5's MPI file's group compares %d, expected MPI_IDENT\n", r, cmp);
            errors++;
        }
        MPI_Group_free(&g1);
        MPI_Group_free(&g2);
        /* atomic mode through HDF5 reaches the MPI file, and back */
        hbool_t atomic = 0;
        int flag = 0;
        H5C(H5Fset_mpi_atomicity(f, 1));
        H5C(H5Fget_mpi_atomicity(f, &atomic));
        H5C_MPI(MPI_File_get_atomicity(fh, &flag));
        if (!atomic || !flag) {
            fprintf(stderr, "rank %d: atomicity after H5Fset_mpi_atomicity(1): HDF5 %d, MPI %d\n", r,
                    (int)atomic, flag);
            errors++;
        }
        H5C(H5Fset_mpi_atomicity(f, 0));
        H5C_MPI(MPI_File_get_atomicity(fh, &flag));
        if (flag) {
            fprintf(stderr, "rank %d: MPI atomicity still on after H5Fset_mpi_atomicity(0)\n", r);
            errors++;
        }
    }
    errors += write_read(f, half, color);
    H5C(H5Fclose(f));

    /* reopen on the whole world: both files, one after the other, checked by every rank */
    hid_t wfapl = h5c_fapl(MPI_COMM_WORLD, MPI_INFO_NULL);
    hid_t coll = h5c_dxpl(H5FD_MPIO_COLLECTIVE);
    for (int file = 0; file < 2 && file < h5c_size; file++) {
        int members = h5c_size / 2 + (file == 0 ? h5c_size % 2 : 0);
        snprintf(name, sizeof name, "%s.%d", base, file);
        H5C(f = H5Fopen(name, H5F_ACC_RDONLY, wfapl));
        hid_t d;
        H5C(d = H5Dopen2(f, "values", H5P_DEFAULT));
        hsize_t n = 0;
        hid_t s = H5Dget_space(d);
        H5C(H5Sget_simple_extent_dims(s, &n, NULL));
        H5C(H5Sclose(s));
        if (n != (hsize_t)members * N_PER_RANK) {
            fprintf(stderr, "rank %d: file %d: %llu elements, expected %d\n", r, file,
                    (unsigned long long)n, members * N_PER_RANK);
            errors++;
        } else {
            double *buf = calloc(n, sizeof(double));
            H5C(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, coll, buf));
            long bad = 0;
            for (hsize_t i = 0; i < n; i++)
                if (buf[i] != value(file, (long)i) && bad++ < 5)
                    fprintf(stderr, "rank %d: reopened file %d: element %llu is %g, expected %g\n", r,
                            file, (unsigned long long)i, buf[i], value(file, (long)i));
            errors += bad;
            free(buf);
        }
        H5C(H5Dclose(d));
        H5C(H5Fclose(f));
        errors += h5c_remove(name);
    }
    H5C(H5Pclose(coll));
    H5C(H5Pclose(wfapl));
    H5C(H5Pclose(fapl));
    MPI_Comm_free(&half);
    return h5c_finish("h5_fapl_hints", errors);
}
