/* oxmpi-test: ranks=1,2 */
/* MPI_Get_processor_name returns a non-empty NUL-terminated name with the right length. */
#include "oxtest.h"

int main(int argc, char **argv)
{
    char name[MPI_MAX_PROCESSOR_NAME + 1];
    int len = -1;
    MPI_OK(MPI_Init(&argc, &argv));
    memset(name, 'x', sizeof name);
    MPI_OK(MPI_Get_processor_name(name, &len));
    CHECK(len > 0 && len < MPI_MAX_PROCESSOR_NAME, "resultlen %d", len);
    CHECK(memchr(name, 0, MPI_MAX_PROCESSOR_NAME) != NULL, "name is not NUL-terminated");
    CHECK((int)strlen(name) == len, "strlen(name)=%d but resultlen=%d", (int)strlen(name), len);
    MPI_OK(MPI_Finalize());
    return 0;
}
