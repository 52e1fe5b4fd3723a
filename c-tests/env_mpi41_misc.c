/* oxmpi-test: ranks=1,2 mpich=skip */
/* mpich=skip: MPI_Get_hw_resource_info, MPI_Type_get_value_index, MPI_Status_set_elements_c
   (MPI 4.1) and the MPIX GPU queries are not in MPICH 4.0.
   MPI_Get_hw_resource_info gives an info naming this machine's resource types; the value-index
   pair type of each predefined pair, MPI_DATATYPE_NULL for a mismatch; GPU support is "no". */
#include "oxtest.h"
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));

    MPI_Info hw;
    int nkeys, flag;
    char key[MPI_MAX_INFO_KEY + 1], val[MPI_MAX_INFO_VAL + 1];
    MPI_OK(MPI_Get_hw_resource_info(&hw));
    CHECK(hw != MPI_INFO_NULL, "no info");
    MPI_OK(MPI_Info_get_nkeys(hw, &nkeys));
    CHECK(nkeys >= 2, "only %d resource types", nkeys);
    MPI_OK(MPI_Info_get_nthkey(hw, 0, key));
    CHECK(strcmp(key, "hwloc://Machine") == 0, "first resource type %s", key);
    int len = MPI_MAX_INFO_VAL;
    MPI_OK(MPI_Info_get_string(hw, "hwloc://PU", &len, val, &flag));
    CHECK(flag && atoi(val) >= 1, "no processing units (%d, %s)", flag, val);
    MPI_OK(MPI_Info_free(&hw));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    CHECK_CLASS(MPI_Get_hw_resource_info(NULL), MPI_ERR_ARG);

    const MPI_Datatype value[] = {MPI_FLOAT, MPI_DOUBLE, MPI_LONG, MPI_SHORT, MPI_INT, MPI_LONG_DOUBLE};
    const MPI_Datatype pair[] = {MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_LONG_INT, MPI_SHORT_INT, MPI_2INT, MPI_LONG_DOUBLE_INT};
    MPI_Datatype t;
    for (int i = 0; i < 6; i++) {
        MPI_OK(MPI_Type_get_value_index(value[i], MPI_INT, &t));
        CHECK(t == pair[i], "pair type %d is 0x%x", i, (unsigned)t);
    }
    MPI_OK(MPI_Type_get_value_index(MPI_DOUBLE, MPI_LONG, &t));
    CHECK(t == MPI_DATATYPE_NULL, "double/long gave 0x%x", (unsigned)t);
    MPI_OK(MPI_Type_get_value_index(MPI_CHAR, MPI_INT, &t));
    CHECK(t == MPI_DATATYPE_NULL, "char/int gave 0x%x", (unsigned)t);
    MPI_Datatype v;
    MPI_OK(MPI_Type_contiguous(2, MPI_INT, &v));
    MPI_OK(MPI_Type_commit(&v));
    MPI_OK(MPI_Type_get_value_index(v, MPI_INT, &t));
    CHECK(t == MPI_DATATYPE_NULL, "derived/int gave 0x%x", (unsigned)t);
    MPI_OK(MPI_Type_free(&v));
    CHECK_CLASS(MPI_Type_get_value_index(MPI_DATATYPE_NULL, MPI_INT, &t), MPI_ERR_TYPE);

    MPI_Status st;
    MPI_Count c;
    MPI_OK(MPI_Status_set_elements_c(&st, MPI_DOUBLE, (MPI_Count)5));
    MPI_OK(MPI_Get_elements_c(&st, MPI_DOUBLE, &c));
    CHECK(c == 5, "elements %lld", (long long)c);

    int sup = -1;
    for (int k = 0; k < 3; k++) {
        const int kinds[] = {MPIX_GPU_SUPPORT_CUDA, MPIX_GPU_SUPPORT_ZE, MPIX_GPU_SUPPORT_HIP};
        sup = -1;
        MPI_OK(MPIX_GPU_query_support(kinds[k], &sup));
        CHECK(sup == 0, "gpu type %d supported: %d", kinds[k], sup);
    }
    CHECK(MPIX_Query_cuda_support() == 0, "cuda");
    CHECK(MPIX_Query_hip_support() == 0, "hip");
    CHECK(MPIX_Query_ze_support() == 0, "ze");

    MPI_OK(MPI_Finalize());
    return 0;
}
