/* oxmpi-test: ranks=1 */
/* MPI_Type_get_name on every predefined datatype gives MPICH 4.0.2's name (a table taken from
   its output). The aliases get one name for both handles: MPI_LONG_LONG and MPI_LONG_LONG_INT
   are "MPI_LONG_LONG_INT", MPI_C_COMPLEX and MPI_C_FLOAT_COMPLEX are "MPI_C_COMPLEX".
   MPIX_C_FLOAT16 is the exception: MPICH 4.0.2 gives it an empty name, oxmpi "MPIX_C_FLOAT16";
   either is accepted. The result length is the name's, and a name can be set on a copy only. */
#include "oxtest.h"

static const struct {
    MPI_Datatype type;
    const char *name;
} names[] = {
    {MPI_CHAR, "MPI_CHAR"},
    {MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR"},
    {MPI_SHORT, "MPI_SHORT"},
    {MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT"},
    {MPI_INT, "MPI_INT"},
    {MPI_UNSIGNED, "MPI_UNSIGNED"},
    {MPI_LONG, "MPI_LONG"},
    {MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG"},
    {MPI_LONG_LONG_INT, "MPI_LONG_LONG_INT"},
    {MPI_LONG_LONG, "MPI_LONG_LONG_INT"},
    {MPI_FLOAT, "MPI_FLOAT"},
    {MPI_DOUBLE, "MPI_DOUBLE"},
    {MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE"},
    {MPI_BYTE, "MPI_BYTE"},
    {MPI_WCHAR, "MPI_WCHAR"},
    {MPI_PACKED, "MPI_PACKED"},
    {MPI_LB, "MPI_LB"},
    {MPI_UB, "MPI_UB"},
    {MPI_2INT, "MPI_2INT"},
    {MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR"},
    {MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG"},
    {MPI_CHARACTER, "MPI_CHARACTER"},
    {MPI_INTEGER, "MPI_INTEGER"},
    {MPI_REAL, "MPI_REAL"},
    {MPI_LOGICAL, "MPI_LOGICAL"},
    {MPI_COMPLEX, "MPI_COMPLEX"},
    {MPI_DOUBLE_PRECISION, "MPI_DOUBLE_PRECISION"},
    {MPI_2INTEGER, "MPI_2INTEGER"},
    {MPI_2REAL, "MPI_2REAL"},
    {MPI_DOUBLE_COMPLEX, "MPI_DOUBLE_COMPLEX"},
    {MPI_2DOUBLE_PRECISION, "MPI_2DOUBLE_PRECISION"},
    {MPI_REAL4, "MPI_REAL4"},
    {MPI_COMPLEX8, "MPI_COMPLEX8"},
    {MPI_REAL8, "MPI_REAL8"},
    {MPI_COMPLEX16, "MPI_COMPLEX16"},
    {MPI_REAL16, "MPI_REAL16"},
    {MPI_COMPLEX32, "MPI_COMPLEX32"},
    {MPI_INTEGER1, "MPI_INTEGER1"},
    {MPI_INTEGER2, "MPI_INTEGER2"},
    {MPI_INTEGER4, "MPI_INTEGER4"},
    {MPI_INTEGER8, "MPI_INTEGER8"},
    {MPI_CXX_BOOL, "MPI_CXX_BOOL"},
    {MPI_CXX_FLOAT_COMPLEX, "MPI_CXX_FLOAT_COMPLEX"},
    {MPI_CXX_DOUBLE_COMPLEX, "MPI_CXX_DOUBLE_COMPLEX"},
    {MPI_CXX_LONG_DOUBLE_COMPLEX, "MPI_CXX_LONG_DOUBLE_COMPLEX"},
    {MPI_INT8_T, "MPI_INT8_T"},
    {MPI_INT16_T, "MPI_INT16_T"},
    {MPI_INT32_T, "MPI_INT32_T"},
    {MPI_INT64_T, "MPI_INT64_T"},
    {MPI_UINT8_T, "MPI_UINT8_T"},
    {MPI_UINT16_T, "MPI_UINT16_T"},
    {MPI_UINT32_T, "MPI_UINT32_T"},
    {MPI_UINT64_T, "MPI_UINT64_T"},
    {MPI_C_BOOL, "MPI_C_BOOL"},
    {MPI_C_COMPLEX, "MPI_C_COMPLEX"},
    {MPI_C_FLOAT_COMPLEX, "MPI_C_COMPLEX"},
    {MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX"},
    {MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX"},
    {MPI_AINT, "MPI_AINT"},
    {MPI_OFFSET, "MPI_OFFSET"},
    {MPI_COUNT, "MPI_COUNT"},
    {MPIX_C_FLOAT16, "MPIX_C_FLOAT16"},
    {MPI_FLOAT_INT, "MPI_FLOAT_INT"},
    {MPI_DOUBLE_INT, "MPI_DOUBLE_INT"},
    {MPI_LONG_INT, "MPI_LONG_INT"},
    {MPI_SHORT_INT, "MPI_SHORT_INT"},
    {MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT"},
};

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char got[MPI_MAX_OBJECT_NAME];
        int len = -1;
        MPI_OK(MPI_Type_get_name(names[i].type, got, &len));
        if (strcmp(names[i].name, "MPIX_C_FLOAT16") == 0 && len == 0 && got[0] == 0)
            continue; /* MPICH 4.0.2 */
        CHECK(strcmp(got, names[i].name) == 0, "MPI_Type_get_name gives \"%s\", MPICH \"%s\"", got, names[i].name);
        CHECK(len == (int)strlen(names[i].name), "%s: resultlen %d", names[i].name, len);
    }
    MPI_Datatype dup;
    char got[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_OK(MPI_Type_dup(MPI_C_FLOAT_COMPLEX, &dup));
    MPI_OK(MPI_Type_set_name(dup, "my complex"));
    MPI_OK(MPI_Type_get_name(dup, got, &len));
    CHECK(strcmp(got, "my complex") == 0 && len == 10, "dup name \"%s\"", got);
    MPI_OK(MPI_Type_get_name(MPI_C_COMPLEX, got, &len));
    CHECK(strcmp(got, "MPI_C_COMPLEX") == 0, "the predefined name changed with its dup's: \"%s\"", got);
    MPI_OK(MPI_Type_free(&dup));
    MPI_OK(MPI_Finalize());
    return 0;
}
