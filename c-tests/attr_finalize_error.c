/* oxmpi-test: ranks=1,2 */
/* A delete callback that fails in MPI_Finalize (an attribute on MPI_COMM_WORLD): under
   MPI_ERRORS_RETURN, MPI_Finalize returns its error (class MPI_ERR_OTHER) but MPI is finalized all
   the same, and the job ends normally (no rank is taken for one that never called MPI_Finalize). */
#include "oxtest.h"

static int del_failing(MPI_Comm comm, int keyval, void *val, void *extra)
{
    return MPI_ERR_OTHER;
}

int main(int argc, char **argv)
{
    int k, finalized = 0, class = -1;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, del_failing, &k, NULL));
    MPI_OK(MPI_Comm_set_attr(MPI_COMM_WORLD, k, NULL));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    int rc = MPI_Finalize();
    MPI_Finalized(&finalized);
    MPI_Error_class(rc, &class);
    if (rc == MPI_SUCCESS || class != MPI_ERR_OTHER || !finalized) {
        fprintf(stderr, "TEST FAILED: MPI_Finalize returned %d (class %d), finalized %d\n", rc, class, finalized);
        return 1;
    }
    return 0;
}
