/* oxmpi-test: ranks=1,2 mpich=skip */
/* MPI 4.1 MPI_Remove_error_class / code / string (MPICH 4.0 lacks them; its 4.1 names,
   MPIX_Delete_error_*, are checked too): a string must go before its code or class, codes before
   their class; a removed value is no longer a class or code; removing twice or removing a
   predefined class fails with an error (under MPI_ERRORS_RETURN). */
#include "oxtest.h"

int main(int argc, char **argv)
{
    int cls, c1, c2, out;
    char s[MPI_MAX_ERROR_STRING];
    int len;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));

    MPI_OK(MPI_Add_error_class(&cls));
    MPI_OK(MPI_Add_error_code(cls, &c1));
    MPI_OK(MPI_Add_error_code(cls, &c2));
    MPI_OK(MPI_Add_error_string(cls, "class"));
    MPI_OK(MPI_Add_error_string(c1, "code 1"));

    CHECK(MPI_Remove_error_class(cls) != MPI_SUCCESS, "removed a class that has codes and a string");
    CHECK(MPI_Remove_error_code(c1) != MPI_SUCCESS, "removed a code that has a string");
    MPI_OK(MPI_Remove_error_string(c1));
    MPI_OK(MPI_Error_string(c1, s, &len));
    CHECK(len == 0 && s[0] == 0, "string of code %d after removal: '%s'", c1, s);
    CHECK(MPI_Remove_error_string(c1) != MPI_SUCCESS, "removed a string twice");
    MPI_OK(MPI_Remove_error_code(c1));
    CHECK(MPI_Remove_error_code(c1) != MPI_SUCCESS, "removed a code twice");
    CHECK(MPI_Error_class(c1, &out) != MPI_SUCCESS, "a removed code still has a class (%d)", out);

    MPI_OK(MPIX_Delete_error_code(c2));
    CHECK(MPI_Remove_error_class(cls) != MPI_SUCCESS, "removed a class that still has its string");
    MPI_OK(MPIX_Delete_error_string(cls));
    MPI_OK(MPI_Remove_error_class(cls));
    CHECK(MPI_Add_error_code(cls, &out) != MPI_SUCCESS, "added a code to a removed class");
    CHECK(MPIX_Delete_error_class(cls) != MPI_SUCCESS, "removed a class twice");

    int rc = MPI_Remove_error_class(MPI_ERR_RANK);
    CHECK(rc != MPI_SUCCESS, "removed the predefined class MPI_ERR_RANK");
    MPI_OK(MPI_Error_class(rc, &out));
    CHECK(out == MPI_ERR_ARG, "removing a predefined class: class %d, expected MPI_ERR_ARG", out);
    CHECK(MPI_Remove_error_string(MPI_ERR_RANK) != MPI_SUCCESS, "removed a predefined string");

    MPI_OK(MPI_Finalize());
    return 0;
}
