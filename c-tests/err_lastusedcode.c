/* oxmpi-test: ranks=1,2 mpich=skip */
/* MPI_LASTUSEDCODE (MPI 4.1 section 9.5): at least MPI_ERR_LASTCODE and every error class or
   code that exists (each small value MPI_Error_class accepts, and a code a failing call
   returns), and raised by MPI_Add_error_class and MPI_Add_error_code to cover their values.
   Built for every ABI (the MPICH ABI, Open MPI's, the MPI-5 standard ABI). Open MPI 4.1 passes
   it; MPICH 4.0.2 does not raise the attribute for codes (the standard speaks of classes only;
   oxmpi counts codes too, as Open MPI does). */
#include "oxtest.h"

static int lastused(void)
{
    int *v, flag;
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &v, &flag));
    CHECK(flag, "MPI_LASTUSEDCODE not set");
    return *v;
}

int main(int argc, char **argv)
{
    int rank, size, cls, code, c, x = 0;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));

    int last0 = lastused();
    CHECK(last0 >= MPI_ERR_LASTCODE, "MPI_LASTUSEDCODE %d < MPI_ERR_LASTCODE %d", last0, (int)MPI_ERR_LASTCODE);
    /* every predefined class (and code) with a small value */
    int classes = 0;
    for (c = 1; c < 4096; c++) {
        int k;
        if (MPI_Error_class(c, &k) == MPI_SUCCESS) {
            classes++;
            CHECK(c <= last0, "error class/code %d (class %d) exists, MPI_LASTUSEDCODE is %d", c, k, last0);
        }
    }
    CHECK(classes >= 50, "only %d error classes below 4096", classes);
    /* a code a failing call returns */
    int rc = MPI_Send(&x, 1, MPI_INT, size, 0, MPI_COMM_WORLD);
    CHECK(rc != MPI_SUCCESS, "MPI_Send to rank %d succeeded", size);
    MPI_OK(MPI_Error_class(rc, &cls));
    CHECK(cls == MPI_ERR_RANK, "MPI_Send to rank %d: class %d, expected MPI_ERR_RANK", size, cls);
    CHECK(rc <= last0, "error code %d returned, MPI_LASTUSEDCODE is %d", rc, last0);

    /* user classes and codes raise it */
    MPI_OK(MPI_Add_error_class(&cls));
    int last1 = lastused();
    CHECK(cls > MPI_ERR_LASTCODE && last1 >= cls && last1 >= last0, "class %d: MPI_LASTUSEDCODE %d (was %d)", cls, last1,
          last0);
    MPI_OK(MPI_Add_error_code(cls, &code));
    int last2 = lastused();
    CHECK(code > MPI_ERR_LASTCODE && last2 >= code && last2 >= last1, "code %d: MPI_LASTUSEDCODE %d (was %d)", code, last2,
          last1);
    MPI_OK(MPI_Add_error_code(MPI_ERR_OTHER, &c));
    CHECK(lastused() >= c && lastused() >= last2, "code %d of MPI_ERR_OTHER: MPI_LASTUSEDCODE %d", c, lastused());
    /* a second class lies above what it was */
    int cls2;
    MPI_OK(MPI_Add_error_class(&cls2));
    CHECK(cls2 != cls && lastused() >= cls2, "class %d: MPI_LASTUSEDCODE %d", cls2, lastused());

    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("err_lastusedcode: OK (%d classes and codes below 4096)\n", classes);
    MPI_OK(MPI_Finalize());
    return 0;
}
