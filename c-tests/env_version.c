/* oxmpi-test: ranks=1,2 */
/* MPI_Get_version (>= 4.0, also before MPI_Init) and MPI_Get_library_version. */
#include "oxtest.h"

int main(int argc, char **argv)
{
    int v = -1, sv = -1;
    /* MPI_Get_version may be called before MPI_Init */
    MPI_OK(MPI_Get_version(&v, &sv));
    CHECK(v >= 4, "MPI_Get_version before init: %d.%d", v, sv);
    MPI_OK(MPI_Init(&argc, &argv));
    v = sv = -1;
    MPI_OK(MPI_Get_version(&v, &sv));
    CHECK(v >= 4 && sv >= 0, "MPI_Get_version: %d.%d, expected 4.0 or later", v, sv);
    CHECK(v == MPI_VERSION && sv == MPI_SUBVERSION, "MPI_Get_version %d.%d but mpi.h says %d.%d", v, sv,
          MPI_VERSION, MPI_SUBVERSION);

    char lib[MPI_MAX_LIBRARY_VERSION_STRING + 1];
    int len = -1;
    memset(lib, 'x', sizeof lib);
    MPI_OK(MPI_Get_library_version(lib, &len));
    CHECK(len > 0 && len < MPI_MAX_LIBRARY_VERSION_STRING, "library version length %d", len);
    CHECK(memchr(lib, 0, MPI_MAX_LIBRARY_VERSION_STRING) != NULL, "library version not NUL-terminated");
    CHECK((int)strlen(lib) == len, "strlen=%d but resultlen=%d", (int)strlen(lib), len);
    MPI_OK(MPI_Finalize());
    return 0;
}
