/* oxmpi-test: ranks=1,2 mpich=skip */
/* oxmpi-specific: an unimplemented function (MPI_Open_port) under MPI_ERRORS_RETURN
   returns an error of class MPI_ERR_UNSUPPORTED_OPERATION whose MPI_Error_string names
   the function. (MPICH implements ports, hence mpich=skip.) */
#include "oxtest.h"

int main(int argc, char **argv)
{
    char port[MPI_MAX_PORT_NAME];
    int cls = -1, len = 0;
    char s[MPI_MAX_ERROR_STRING];
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    int rc = MPI_Open_port(MPI_INFO_NULL, port);
    CHECK(rc != MPI_SUCCESS, "MPI_Open_port returned MPI_SUCCESS");
    MPI_OK(MPI_Error_class(rc, &cls));
    CHECK(cls == MPI_ERR_UNSUPPORTED_OPERATION, "MPI_Open_port: class %d, expected MPI_ERR_UNSUPPORTED_OPERATION (%d)",
          cls, MPI_ERR_UNSUPPORTED_OPERATION);
    MPI_OK(MPI_Error_string(rc, s, &len));
    CHECK(strstr(s, "MPI_Open_port") != NULL, "error string '%s' does not name MPI_Open_port", s);
    /* the library is still usable */
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Finalize());
    return 0;
}
