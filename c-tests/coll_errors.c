/* oxmpi-test: ranks=1,2,3,4 */
/* Erroneous collective calls under MPI_ERRORS_RETURN, made identically by every rank so that no
   rank waits for another: bad root, bad op, op/datatype mismatches, bad count/datatype,
   MPI_IN_PLACE where it is not allowed, aliased buffers. Afterwards collectives still work. */
#include "oxtest.h"

int main(int argc, char **argv)
{
    int rank, size;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    int a[4] = {1, 2, 3, 4}, b[4];
    double d[2] = {1, 2}, e[2];

    CHECK_CLASS(MPI_Bcast(a, 4, MPI_INT, size, MPI_COMM_WORLD), MPI_ERR_ROOT);
    CHECK_CLASS(MPI_Bcast(a, 4, MPI_INT, -1, MPI_COMM_WORLD), MPI_ERR_ROOT);
    CHECK_CLASS(MPI_Bcast(a, -1, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Bcast(a, 4, MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Bcast(a, 4, MPI_INT, 0, MPI_COMM_NULL), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Reduce(a, b, 4, MPI_INT, MPI_SUM, size, MPI_COMM_WORLD), MPI_ERR_ROOT);
    CHECK_CLASS(MPI_Reduce(a, b, 4, MPI_INT, MPI_OP_NULL, 0, MPI_COMM_WORLD), MPI_ERR_OP);
    CHECK_CLASS(MPI_Reduce(d, e, 2, MPI_DOUBLE, MPI_BAND, 0, MPI_COMM_WORLD), MPI_ERR_OP);
    CHECK_CLASS(MPI_Reduce(a, b, 4, MPI_INT, MPI_SUM, 0, MPI_COMM_NULL), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Allreduce(a, b, 4, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD), MPI_ERR_OP);
    CHECK_CLASS(MPI_Allreduce(d, e, 2, MPI_DOUBLE, MPI_BAND, MPI_COMM_WORLD), MPI_ERR_OP);
    CHECK_CLASS(MPI_Allreduce(a, b, 2, MPI_2INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_OP);
    CHECK_CLASS(MPI_Allreduce(a, b, 4, MPI_INT, MPI_MINLOC, MPI_COMM_WORLD), MPI_ERR_OP);
    /* (no negative count for MPI_Allreduce: MPICH 4.0.2 does not check it and crashes) */
    int rc = MPI_Allreduce(a, b, 4, MPI_DATATYPE_NULL, MPI_SUM, MPI_COMM_WORLD), cls = -1;
    MPI_Error_class(rc, &cls);
    /* oxmpi says MPI_ERR_TYPE; MPICH checks the op against the type first (MPI_ERR_OP) */
    CHECK(rc != MPI_SUCCESS && (cls == MPI_ERR_TYPE || cls == MPI_ERR_OP), "Allreduce on MPI_DATATYPE_NULL: class %d", cls);
    CHECK_CLASS(MPI_Allreduce(a, a, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Allreduce(a, MPI_IN_PLACE, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Reduce_local(d, e, 2, MPI_DOUBLE, MPI_BOR), MPI_ERR_OP);
    CHECK_CLASS(MPI_Reduce_local(a, b, 4, MPI_INT, MPI_OP_NULL), MPI_ERR_OP);
    int commute;
    CHECK_CLASS(MPI_Op_commutative(MPI_OP_NULL, &commute), MPI_ERR_OP);

    /* still usable afterwards */
    MPI_OK(MPI_Allreduce(a, b, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < 4; i++)
        CHECK(b[i] == a[i] * size, "allreduce after errors: [%d] = %d", i, b[i]);
    MPI_OK(MPI_Finalize());
    return 0;
}
