/* oxmpi-test: ranks=1,2 abi=mpi5 mpich=skip */
/* The MPI-5 ABI's Fortran properties (MPI 5.0 "Fortran Type Registration"): oxmpi's are set from
 * the start (gfortran's), so MPI_Abi_get_fortran_booleans reports .TRUE. 1 and .FALSE. 0 with
 * is_set true for every LOGICAL kind, and MPI_Abi_set_fortran_booleans/_info fail with
 * MPI_ERR_ABI (only the first setting counts, and it was the implementation's); bad arguments
 * (a size no LOGICAL kind has, NULL pointers, MPI_INFO_NULL) are MPI_ERR_ARG. */
#include "oxtest.h"

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    CHECK(MPI_ERR_ABI == 62, "MPI_ERR_ABI is %d, the standard's is 62", MPI_ERR_ABI);

    /* Every LOGICAL kind: .TRUE. is the integer 1 of that size, .FALSE. 0. */
    const int sizes[] = {1, 2, 4, 8, 16};
    for (int i = 0; i < 5; i++) {
        unsigned char t[16], f[16], want_t[16] = {0}, want_f[16] = {0};
        int is_set = -1, n = sizes[i];
        memset(t, 0xa5, sizeof t);
        memset(f, 0xa5, sizeof f);
        MPI_OK(MPI_Abi_get_fortran_booleans(n, t, f, &is_set));
        CHECK(is_set == 1, "size %d: is_set %d", n, is_set);
        if (n == 4) {
            int32_t ti, fi;
            memcpy(&ti, t, 4);
            memcpy(&fi, f, 4);
            CHECK(ti == 1 && fi == 0, "LOGICAL(4) .TRUE. %d .FALSE. %d", (int)ti, (int)fi);
        }
        uint64_t one = 1;
        memcpy(want_t, &one, n < 8 ? (size_t)n : 8); /* little-endian integer 1 */
        CHECK(memcmp(t, want_t, n) == 0 && memcmp(f, want_f, n) == 0, "size %d: wrong bytes", n);
        if (n < 16)
            CHECK(t[n] == 0xa5 && f[n] == 0xa5, "size %d: wrote past the logical", n);
    }
    /* The sizes agree with MPI_LOGICAL's and with MPI_Abi_get_fortran_info's. */
    int lsize = 0;
    MPI_OK(MPI_Type_size(MPI_LOGICAL, &lsize));
    MPI_Info info;
    char val[32];
    int flag = 0, len = sizeof val;
    MPI_OK(MPI_Abi_get_fortran_info(&info));
    CHECK(info != MPI_INFO_NULL, "MPI_Abi_get_fortran_info returned MPI_INFO_NULL");
    MPI_OK(MPI_Info_get_string(info, "mpi_logical_size", &len, val, &flag));
    CHECK(flag && atoi(val) == lsize, "mpi_logical_size %s, MPI_LOGICAL's size %d", flag ? val : "(unset)", lsize);

    /* Setting: already set, so MPI_ERR_ABI; the values stay. */
    int one4 = 1, zero4 = 0;
    CHECK_CLASS(MPI_Abi_set_fortran_booleans(4, &one4, &zero4), MPI_ERR_ABI);
    int minus1 = -1;
    CHECK_CLASS(MPI_Abi_set_fortran_booleans(4, &minus1, &zero4), MPI_ERR_ABI);
    CHECK_CLASS(MPI_Abi_set_fortran_info(info), MPI_ERR_ABI);
    MPI_Info mine;
    MPI_OK(MPI_Info_create(&mine));
    MPI_OK(MPI_Info_set(mine, "mpi_logical_size", "8"));
    CHECK_CLASS(MPI_Abi_set_fortran_info(mine), MPI_ERR_ABI);
    MPI_OK(MPI_Info_free(&mine));
    int t4 = -1, f4 = -1, is_set = 0;
    MPI_OK(MPI_Abi_get_fortran_booleans(4, &t4, &f4, &is_set));
    CHECK(t4 == 1 && f4 == 0 && is_set, "after a refused set: .TRUE. %d .FALSE. %d is_set %d", t4, f4, is_set);

    /* Bad arguments: not a LOGICAL size, NULL pointers, an invalid info. */
    CHECK_CLASS(MPI_Abi_get_fortran_booleans(3, &t4, &f4, &is_set), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Abi_get_fortran_booleans(0, &t4, &f4, &is_set), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Abi_get_fortran_booleans(4, NULL, &f4, &is_set), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Abi_get_fortran_booleans(4, &t4, &f4, NULL), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Abi_set_fortran_booleans(-4, &one4, &zero4), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Abi_set_fortran_booleans(4, &one4, NULL), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Abi_set_fortran_info(MPI_INFO_NULL), MPI_ERR_ARG); /* as MPI_Info_get_nkeys(MPI_INFO_NULL) */

    /* The class has a name and a message. */
    char msg[MPI_MAX_ERROR_STRING];
    int mlen = 0;
    MPI_OK(MPI_Error_string(MPI_ERR_ABI, msg, &mlen));
    CHECK(mlen > 0 && strstr(msg, "already set") != NULL, "MPI_Error_string(MPI_ERR_ABI) = '%s'", msg);

    MPI_OK(MPI_Info_free(&info));
    MPI_OK(MPI_Finalize());
    return 0;
}
