/* oxmpi-test: ranks=1,2 */
/* Bad input to the large-count (_c) datatype, status and window calls (generated from their
   families, src/ffi/families.rs) under MPI_ERRORS_RETURN: negative counts are MPI_ERR_COUNT,
   NULL required arguments MPI_ERR_ARG, and nothing is written on failure; the int forms of the
   same calls agree; MPI_Win_shared_query_c on a dynamic window fails (MPI 4.1 allows every other
   flavour), and on an MPI_Win_allocate_shared_c window reports the unit as an MPI_Aint. */
#include <stdint.h>
#include "oxtest.h"

/* Require that rc is an error of class a or b (implementations differ in the class of some
   bad window arguments: oxmpi's MPI_ERR_DISP / MPI_ERR_SIZE, MPICH's MPI_ERR_ARG). */
static void class_either(int rc, int a, int b, int line)
{
    int c = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &c);
    CHECK(c == a || c == b, "line %d: rc %d has class %d, expected %d or %d", line, rc, c, a, b);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* Negative counts: MPI_ERR_COUNT, and newtype untouched. */
    MPI_Datatype t = MPI_DATATYPE_NULL;
    MPI_Count bl[2] = {1, 1}, disp[2] = {0, 8};
    MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
    CHECK_CLASS(MPI_Type_vector_c(-1, 1, 2, MPI_INT, &t), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Type_create_hvector_c(-2, 1, 16, MPI_INT, &t), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Type_indexed_c(-1, bl, disp, MPI_INT, &t), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Type_create_hindexed_c(-1, bl, disp, MPI_INT, &t), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Type_create_indexed_block_c(-3, 1, disp, MPI_INT, &t), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Type_create_hindexed_block_c(-3, 1, disp, MPI_INT, &t), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Type_create_struct_c(-1, bl, disp, types, &t), MPI_ERR_COUNT);
    CHECK(t == MPI_DATATYPE_NULL, "a failed constructor wrote newtype");
    /* The int forms agree. */
    int ibl[2] = {1, 1}, idisp[2] = {0, 2};
    CHECK_CLASS(MPI_Type_indexed(-1, ibl, idisp, MPI_INT, &t), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Type_vector(-1, 1, 2, MPI_INT, &t), MPI_ERR_COUNT);

    /* NULL arrays with entries, NULL outputs: MPI_ERR_ARG. */
    CHECK_CLASS(MPI_Type_indexed_c(2, NULL, disp, MPI_INT, &t), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Type_create_struct_c(2, bl, disp, NULL, &t), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Type_contiguous_c(4, MPI_INT, NULL), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Type_size_c(MPI_INT, NULL), MPI_ERR_ARG);
    MPI_Count lb = -7;
    CHECK_CLASS(MPI_Type_get_extent_c(MPI_INT, &lb, NULL), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Type_get_true_extent_c(MPI_INT, NULL, &lb), MPI_ERR_ARG);
    /* An invalid datatype. */
    MPI_Count n = -7;
    CHECK_CLASS(MPI_Type_size_c(MPI_DATATYPE_NULL, &n), MPI_ERR_TYPE);
    CHECK(n == -7, "a failed MPI_Type_size_c wrote %lld", (long long)n);

    /* The good path of the same calls, for contrast: a struct of an int and a double. */
    MPI_OK(MPI_Type_create_struct_c(2, bl, disp, types, &t));
    MPI_OK(MPI_Type_commit(&t));
    MPI_OK(MPI_Type_size_c(t, &n));
    CHECK(n == (MPI_Count)(sizeof(int) + sizeof(double)), "struct size %lld", (long long)n);
    MPI_Count ext;
    MPI_OK(MPI_Type_get_extent_c(t, &lb, &ext));
    CHECK(lb == 0 && ext == 16, "struct lb %lld extent %lld", (long long)lb, (long long)ext);

    /* MPI_Get_count_c / MPI_Get_elements_c: NULL outputs, then values from a self message. */
    MPI_Status st;
    int buf[6] = {1, 2, 3, 4, 5, 6}, rbuf[6];
    MPI_OK(MPI_Sendrecv(buf, 5, MPI_INT, rank, 5, rbuf, 6, MPI_INT, rank, 5, MPI_COMM_WORLD, &st));
    CHECK_CLASS(MPI_Get_count_c(&st, MPI_INT, NULL), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Get_elements_c(&st, MPI_INT, NULL), MPI_ERR_ARG);
    MPI_OK(MPI_Get_count_c(&st, MPI_INT, &n));
    CHECK(n == 5, "Get_count_c %lld", (long long)n);
    MPI_OK(MPI_Get_count_c(&st, MPI_DOUBLE, &n));
    CHECK(n == MPI_UNDEFINED, "Get_count_c(MPI_DOUBLE) on 20 bytes %lld, expected MPI_UNDEFINED", (long long)n);
    MPI_OK(MPI_Get_elements_c(&st, MPI_INT, &n));
    CHECK(n == 5, "Get_elements_c %lld", (long long)n);
    MPI_OK(MPI_Type_free(&t));

    /* MPI_Pack_size_c: negative count. */
    CHECK_CLASS(MPI_Pack_size_c(-1, MPI_INT, MPI_COMM_WORLD, &n), MPI_ERR_COUNT);
    MPI_OK(MPI_Pack_size_c(3, MPI_INT, MPI_COMM_WORLD, &n));
    CHECK(n >= 3 * (MPI_Count)sizeof(int), "Pack_size_c %lld", (long long)n);

    /* Windows: a bad unit or size fails, a NULL win is MPI_ERR_ARG. */
    int mem[4];
    MPI_Win win = MPI_WIN_NULL;
    class_either(MPI_Win_create_c(mem, sizeof mem, 0, MPI_INFO_NULL, MPI_COMM_WORLD, &win), MPI_ERR_DISP, MPI_ERR_ARG, __LINE__);
    CHECK(win == MPI_WIN_NULL, "a failed MPI_Win_create_c wrote win");
    void *base = NULL;
    class_either(MPI_Win_allocate_c(-8, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win), MPI_ERR_SIZE, MPI_ERR_ARG, __LINE__);
    CHECK(win == MPI_WIN_NULL, "a failed MPI_Win_allocate_c wrote win");

    /* Shared query on a dynamic window fails; the int form agrees. */
    MPI_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    MPI_Aint qsize = -1, qunit = -1;
    int iunit = -1;
    CHECK_CLASS(MPI_Win_shared_query_c(win, 0, &qsize, &qunit, &base), MPI_ERR_RMA_FLAVOR);
    CHECK_CLASS(MPI_Win_shared_query(win, 0, &qsize, &iunit, &base), MPI_ERR_RMA_FLAVOR);
    CHECK(qsize == -1 && qunit == -1 && iunit == -1, "a failed shared query wrote its outputs");
    MPI_OK(MPI_Win_free(&win));

    /* MPI_Win_allocate_shared_c: every rank's segment, unit as an MPI_Aint. */
    MPI_Comm node;
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    int nrank;
    MPI_Comm_rank(node, &nrank);
    MPI_OK(MPI_Win_allocate_shared_c(8 * (MPI_Aint)sizeof(double), (MPI_Aint)sizeof(double), MPI_INFO_NULL, node, &base, &win));
    MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Win_shared_query_c(win, nrank, &qsize, &qunit, &base));
    CHECK(qsize == 8 * (MPI_Aint)sizeof(double) && qunit == (MPI_Aint)sizeof(double), "shared query: size %ld unit %ld", (long)qsize, (long)qunit);
    CHECK_CLASS(MPI_Win_shared_query_c(win, nrank, &qsize, NULL, &base), MPI_ERR_ARG);
    MPI_OK(MPI_Win_free(&win));
    MPI_OK(MPI_Comm_free(&node));

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("type_rma_c_errors: OK\n");
    MPI_Finalize();
    return 0;
}
