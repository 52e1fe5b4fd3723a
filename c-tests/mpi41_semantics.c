/* oxmpi-test: ranks=1,2,3 */
/* MPI 4.1 semantics that clients test once MPI_VERSION.MPI_SUBVERSION says 4.1 (mpi4py does):
   - MPI_Comm/Type/Win_get_name on the null handles give "MPI_COMM_NULL", "MPI_DATATYPE_NULL",
     "MPI_WIN_NULL" (section 7.8);
   - MPI_Win_shared_query on windows of every flavour but dynamic (section 12.2.3): a segment the
     caller can load from and store to comes back with its size, unit and address (the caller's
     own, always); one it cannot comes back as size 0 and NULL; MPI_PROC_NULL means the lowest rank
     with a non-empty segment; a dynamic window is MPI_ERR_RMA_FLAVOR.
   Every segment returned is checked by reading the owner's values through it. */
#include "oxtest.h"
#include <stdlib.h>
#include <string.h>

static int rank, size;

static void null_names(void)
{
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    MPI_OK(MPI_Comm_get_name(MPI_COMM_NULL, name, &len));
    CHECK(strcmp(name, "MPI_COMM_NULL") == 0 && len == (int)strlen(name), "MPI_COMM_NULL's name is \"%s\" (%d)", name, len);
    MPI_OK(MPI_Type_get_name(MPI_DATATYPE_NULL, name, &len));
    CHECK(strcmp(name, "MPI_DATATYPE_NULL") == 0 && len == (int)strlen(name), "MPI_DATATYPE_NULL's name is \"%s\" (%d)", name, len);
    MPI_OK(MPI_Win_get_name(MPI_WIN_NULL, name, &len));
    CHECK(strcmp(name, "MPI_WIN_NULL") == 0 && len == (int)strlen(name), "MPI_WIN_NULL's name is \"%s\" (%d)", name, len);
}

/* Rank r's segment holds r+1 ints (rank 0: none when `empty0`), each 1000*r + i, unit sizeof(int)
   on even ranks and 1 on odd ones. Queries every rank and MPI_PROC_NULL. */
static void query_all(MPI_Win win, const char *what, int *mine, int empty0)
{
    MPI_Barrier(MPI_COMM_WORLD);
    for (int t = -1; t < size; t++) {
        int target = t < 0 ? MPI_PROC_NULL : t;
        /* MPI_PROC_NULL names the lowest rank with a non-empty segment. */
        int owner = t < 0 ? (empty0 && size > 1 ? 1 : (empty0 ? -1 : 0)) : t;
        MPI_Aint qsize = -1;
        int unit = -1;
        int *base = (int *)&qsize;
        MPI_OK(MPI_Win_shared_query(win, target, &qsize, &unit, &base));
        if (owner < 0 || (owner == 0 && empty0)) {
            CHECK(qsize == 0 && base == NULL, "%s: query %d: empty segment gave size %ld, base %p", what, target, (long)qsize, (void *)base);
            continue;
        }
        if (owner == rank)
            CHECK(qsize != 0 && base == mine, "%s: query %d: own segment gave size %ld, base %p (mine %p)", what, target, (long)qsize, (void *)base, (void *)mine);
        if (qsize == 0) {
            CHECK(base == NULL, "%s: query %d: size 0 with base %p", what, target, (void *)base);
            continue;
        }
        CHECK(qsize == (MPI_Aint)((owner + 1) * sizeof(int)), "%s: query %d: size %ld, want %ld", what, target, (long)qsize, (long)((owner + 1) * sizeof(int)));
        CHECK(unit == (owner % 2 ? 1 : (int)sizeof(int)), "%s: query %d: unit %d", what, target, unit);
        for (int i = 0; i <= owner; i++)
            CHECK(base[i] == 1000 * owner + i, "%s: query %d: element %d is %d, want %d", what, target, i, base[i], 1000 * owner + i);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void fill(int *p, int empty0)
{
    if (!(empty0 && rank == 0))
        for (int i = 0; i <= rank; i++)
            p[i] = 1000 * rank + i;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int v, sv;
    MPI_Get_version(&v, &sv);
    CHECK(v > 4 || (v == 4 && sv >= 1), "this library says MPI %d.%d: these are MPI 4.1 semantics", v, sv);

    null_names();

    int unit = rank % 2 ? 1 : (int)sizeof(int);
    for (int empty0 = 0; empty0 <= 1; empty0++) {
        MPI_Aint bytes = (empty0 && rank == 0) ? 0 : (MPI_Aint)((rank + 1) * sizeof(int));
        /* MPI_Win_create: the application's memory. */
        int *mem = calloc((size_t)rank + 1, sizeof(int));
        fill(mem, empty0);
        MPI_Win win;
        MPI_OK(MPI_Win_create(mem, bytes, unit, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        query_all(win, empty0 ? "Win_create, rank 0 empty" : "Win_create", mem, empty0);
        MPI_OK(MPI_Win_free(&win));
        free(mem);

        /* MPI_Win_allocate and MPI_Win_allocate_shared: the library's memory. */
        for (int shared = 0; shared <= 1; shared++) {
            int *base = NULL;
            if (shared)
                MPI_OK(MPI_Win_allocate_shared(bytes, unit, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
            else
                MPI_OK(MPI_Win_allocate(bytes, unit, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
            fill(base, empty0);
            query_all(win, shared ? "Win_allocate_shared" : "Win_allocate", base, empty0);
            MPI_OK(MPI_Win_free(&win));
        }
    }

    /* A dynamic window has no segments to query. */
    MPI_Win win;
    MPI_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    MPI_Aint qsize = -1;
    int qunit = -1;
    void *qbase = &qsize;
    CHECK_CLASS(MPI_Win_shared_query(win, 0, &qsize, &qunit, &qbase), MPI_ERR_RMA_FLAVOR);
    CHECK_CLASS(MPI_Win_shared_query(win, MPI_PROC_NULL, &qsize, &qunit, &qbase), MPI_ERR_RMA_FLAVOR);
    MPI_OK(MPI_Win_free(&win));

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi41_semantics: OK\n");
    MPI_Finalize();
    return 0;
}
