/* oxmpi-test: ranks=1 mpich=skip */
/* oxmpi-specific: MPI_Get_library_version names oxmpi and the ABI the program was built for
 * (each of oxmpi's libraries says its own: MPICH's libmpi.so.12, Open MPI's libmpi.so.40, the
 * MPI-5 standard's libmpi_abi.so.1). */
#include "oxtest.h"

#if defined(MPI_ABI_VERSION)
#define EXPECTED_ABI "MPI-5 standard ABI"
#elif defined(OPEN_MPI)
#define EXPECTED_ABI "Open MPI 4.1 ABI"
#else
#define EXPECTED_ABI "MPICH ABI"
#endif

int main(int argc, char **argv)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = -1;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Get_library_version(lib, &len));
    CHECK(strstr(lib, "oxmpi") != NULL, "library version '%s' does not contain 'oxmpi'", lib);
    CHECK(strstr(lib, EXPECTED_ABI) != NULL, "library version '%s' does not name the " EXPECTED_ABI, lib);
    CHECK(len == (int)strlen(lib) && len < MPI_MAX_LIBRARY_VERSION_STRING, "resultlen %d for '%s'", len, lib);
    MPI_OK(MPI_Finalize());
    return 0;
}
