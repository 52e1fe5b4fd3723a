/* oxmpi-test: ranks=1,2 mpich=skip */
/* oxmpi-specific: an unimplemented function (MPI_Comm_spawn) under MPI_ERRORS_RETURN
   returns an error of class MPI_ERR_UNSUPPORTED_OPERATION whose MPI_Error_string names
   the function. (MPICH implements spawn, hence mpich=skip.) */
#include "oxtest.h"

int main(int argc, char **argv)
{
    MPI_Comm inter = MPI_COMM_NULL;
    int errcodes[1] = {-1}, cls = -1, len = 0;
    char s[MPI_MAX_ERROR_STRING];
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    char *args[] = {NULL};
    int rc = MPI_Comm_spawn("true", args, 1, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter, errcodes);
    CHECK(rc != MPI_SUCCESS, "MPI_Comm_spawn returned MPI_SUCCESS");
    MPI_OK(MPI_Error_class(rc, &cls));
    CHECK(cls == MPI_ERR_UNSUPPORTED_OPERATION, "MPI_Comm_spawn: class %d, expected MPI_ERR_UNSUPPORTED_OPERATION (%d)",
          cls, MPI_ERR_UNSUPPORTED_OPERATION);
    MPI_OK(MPI_Error_string(rc, s, &len));
    CHECK(strstr(s, "MPI_Comm_spawn") != NULL, "error string '%s' does not name MPI_Comm_spawn", s);
    /* the library is still usable */
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Finalize());
    return 0;
}
