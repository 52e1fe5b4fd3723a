/* oxmpi-test: ranks=1 */
/* MPI_Error_class / MPI_Error_string for every standard error class. */
#include "oxtest.h"

#define E(x) {x, #x}
static const struct { int code; const char *name; } classes[] = {
    E(MPI_SUCCESS), E(MPI_ERR_BUFFER), E(MPI_ERR_COUNT), E(MPI_ERR_TYPE), E(MPI_ERR_TAG),
    E(MPI_ERR_COMM), E(MPI_ERR_RANK), E(MPI_ERR_REQUEST), E(MPI_ERR_ROOT), E(MPI_ERR_GROUP),
    E(MPI_ERR_OP), E(MPI_ERR_TOPOLOGY), E(MPI_ERR_DIMS), E(MPI_ERR_ARG), E(MPI_ERR_UNKNOWN),
    E(MPI_ERR_TRUNCATE), E(MPI_ERR_OTHER), E(MPI_ERR_INTERN), E(MPI_ERR_IN_STATUS),
    E(MPI_ERR_PENDING), E(MPI_ERR_KEYVAL), E(MPI_ERR_NO_MEM), E(MPI_ERR_BASE),
    E(MPI_ERR_INFO_KEY), E(MPI_ERR_INFO_VALUE), E(MPI_ERR_INFO_NOKEY), E(MPI_ERR_SPAWN),
    E(MPI_ERR_PORT), E(MPI_ERR_SERVICE), E(MPI_ERR_NAME), E(MPI_ERR_WIN), E(MPI_ERR_SIZE),
    E(MPI_ERR_DISP), E(MPI_ERR_INFO), E(MPI_ERR_LOCKTYPE), E(MPI_ERR_ASSERT),
    E(MPI_ERR_RMA_CONFLICT), E(MPI_ERR_RMA_SYNC), E(MPI_ERR_RMA_RANGE), E(MPI_ERR_RMA_ATTACH),
    E(MPI_ERR_RMA_SHARED), E(MPI_ERR_RMA_FLAVOR), E(MPI_ERR_FILE), E(MPI_ERR_NOT_SAME),
    E(MPI_ERR_AMODE), E(MPI_ERR_UNSUPPORTED_DATAREP), E(MPI_ERR_UNSUPPORTED_OPERATION),
    E(MPI_ERR_NO_SUCH_FILE), E(MPI_ERR_FILE_EXISTS), E(MPI_ERR_BAD_FILE), E(MPI_ERR_ACCESS),
    E(MPI_ERR_NO_SPACE), E(MPI_ERR_QUOTA), E(MPI_ERR_READ_ONLY), E(MPI_ERR_FILE_IN_USE),
    E(MPI_ERR_DUP_DATAREP), E(MPI_ERR_CONVERSION), E(MPI_ERR_IO),
#ifdef MPI_ERR_SESSION
    E(MPI_ERR_SESSION),
#endif
#ifdef MPI_ERR_PROC_ABORTED
    E(MPI_ERR_PROC_ABORTED),
#endif
#ifdef MPI_ERR_VALUE_TOO_LARGE
    E(MPI_ERR_VALUE_TOO_LARGE),
#endif
};
#define NCLASSES ((int)(sizeof classes / sizeof classes[0]))

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    CHECK(MPI_SUCCESS == 0, "MPI_SUCCESS is %d", MPI_SUCCESS);
    for (int i = 0; i < NCLASSES; i++) {
        int c = classes[i].code, cls = -1, len = -1;
        char s[MPI_MAX_ERROR_STRING + 1];
        CHECK(c >= 0 && c <= MPI_ERR_LASTCODE, "%s=%d outside 0..MPI_ERR_LASTCODE", classes[i].name, c);
        for (int j = 0; j < i; j++)
            CHECK(classes[j].code != c, "%s and %s share the value %d", classes[j].name, classes[i].name, c);
        MPI_OK(MPI_Error_class(c, &cls));
        CHECK(cls == c, "MPI_Error_class(%s=%d) gave %d", classes[i].name, c, cls);
        memset(s, 'x', sizeof s);
        MPI_OK(MPI_Error_string(c, s, &len));
        CHECK(len > 0 && len < MPI_MAX_ERROR_STRING, "MPI_Error_string(%s) length %d", classes[i].name, len);
        CHECK(memchr(s, 0, MPI_MAX_ERROR_STRING) != NULL, "MPI_Error_string(%s) not NUL-terminated",
              classes[i].name);
        CHECK((int)strlen(s) == len, "MPI_Error_string(%s): strlen %d but resultlen %d", classes[i].name,
              (int)strlen(s), len);
    }
    MPI_OK(MPI_Finalize());
    return 0;
}
