/* oxmpi-test: ranks=2 */
/* A broadcast whose receiver expects fewer bytes than the root sends: under MPI_ERRORS_RETURN the
   receiver gets MPI_ERR_TRUNCATE (not a hang), and oxmpi's message names both sizes. */
#include "oxtest.h"

int main(int argc, char **argv)
{
    int rank, buf[4] = {1, 2, 3, 4};
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int rc = MPI_Bcast(buf, rank == 0 ? 4 : 2, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 1) {
        int cls;
        MPI_OK(MPI_Error_class(rc, &cls));
        CHECK(cls == MPI_ERR_TRUNCATE, "mismatched bcast: class %d, expected MPI_ERR_TRUNCATE", cls);
        char lib[MPI_MAX_LIBRARY_VERSION_STRING], s[MPI_MAX_ERROR_STRING];
        int len;
        MPI_OK(MPI_Get_library_version(lib, &len));
        MPI_OK(MPI_Error_string(rc, s, &len));
        if (strstr(lib, "oxmpi"))
            /* The flat path knows the root's size exactly; the others know only that it is larger. */
            CHECK((strstr(s, "has 16 bytes") || strstr(s, "more than 8 bytes")) && strstr(s, "expected 8"),
                  "the message does not give both sizes: %s", s);
    }
    MPI_Finalize();
    return 0;
}
