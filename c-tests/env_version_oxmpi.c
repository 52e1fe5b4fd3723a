/* oxmpi-test: ranks=1 mpich=skip */
/* oxmpi-specific: MPI_Get_library_version names oxmpi. */
#include "oxtest.h"

int main(int argc, char **argv)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = -1;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Get_library_version(lib, &len));
    CHECK(strstr(lib, "oxmpi") != NULL, "library version '%s' does not contain 'oxmpi'", lib);
    MPI_OK(MPI_Finalize());
    return 0;
}
