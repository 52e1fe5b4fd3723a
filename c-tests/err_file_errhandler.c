/* oxmpi-test: ranks=1,2 */
/* Error handlers of files without opening one: MPI_FILE_NULL carries the default handler of file
   operations, MPI_ERRORS_RETURN at start (MPI 4.1 section 9.3.3); a user handler made with
   MPI_File_create_errhandler and set on MPI_FILE_NULL is called by MPI_File_call_errhandler with
   the file handle and the code; MPI_Errhandler_free works on it. */
#include "oxtest.h"

static int calls, last_code;
static MPI_File last_file = (MPI_File)1;

static void on_file_error(MPI_File *fh, int *code, ...)
{
    calls++;
    last_code = *code;
    last_file = *fh;
}

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_Errhandler h, got;
    MPI_OK(MPI_File_get_errhandler(MPI_FILE_NULL, &got));
    CHECK(got == MPI_ERRORS_RETURN, "the default file error handler is MPI_ERRORS_RETURN (got 0x%x)", (unsigned)got);

    MPI_OK(MPI_File_create_errhandler(on_file_error, &h));
    MPI_OK(MPI_File_set_errhandler(MPI_FILE_NULL, h));
    MPI_OK(MPI_File_get_errhandler(MPI_FILE_NULL, &got));
    CHECK(got == h, "MPI_File_get_errhandler gives back the handler set");
    MPI_OK(MPI_File_call_errhandler(MPI_FILE_NULL, MPI_ERR_ARG));
    CHECK(calls == 1 && last_code == MPI_ERR_ARG && last_file == MPI_FILE_NULL,
          "handler called once with MPI_FILE_NULL and MPI_ERR_ARG (calls %d, code %d)", calls, last_code);

    /* An invalid error handler is reported to the file handler (the user's one here), as the
       standard says for errors of file functions; MPICH 4.0.2 makes it fatal instead, so the check
       runs on oxmpi only. */
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int liblen = 0;
    MPI_OK(MPI_Get_library_version(lib, &liblen));
    if (strncmp(lib, "MPICH", 5) != 0) {
        int rc = MPI_File_set_errhandler(MPI_FILE_NULL, (MPI_Errhandler)0x12345);
        CHECK(rc != MPI_SUCCESS && calls == 2, "invalid handler: rc %d, handler calls %d", rc, calls);
    }

    MPI_OK(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Errhandler_free(&h));
    CHECK(h == MPI_ERRHANDLER_NULL, "MPI_Errhandler_free sets MPI_ERRHANDLER_NULL");
    MPI_OK(MPI_Finalize());
    printf("err_file_errhandler: OK\n");
    return 0;
}
