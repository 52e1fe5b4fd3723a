/* oxmpi-test: ranks=1 mpich=skip */
/* User error handlers in quantity: under the MPI-5 standard ABI and Open MPI's, oxmpi's layer
   calls each through a trampoline of a fixed pool (1024 per process, never reused: a handler may
   be freed while objects use it), so the 1025th fails with MPI_ERR_NO_MEM, an MPI error and not
   a crash, and every handler made before works, each called with its own index. Under the MPICH
   ABI there is no such limit: all 1100 are made. Ranks: 1 (the pool is the process's). */
#include "oxtest.h"

#define TRIES 1100
#define POOL 1024

static int called = -1;
/* One function for all: what is checked is that each handle reaches it through its own slot. */
static void handler(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    called = *code;
}

int main(int argc, char **argv)
{
    static MPI_Errhandler eh[TRIES];
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len, made = 0, rc = MPI_SUCCESS, cls = MPI_SUCCESS, i;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Get_library_version(version, &len));
    int pooled = strstr(version, "MPI-5 standard ABI") != NULL || strstr(version, "Open MPI 4.1 ABI") != NULL;

    for (i = 0; i < TRIES; i++) {
        rc = MPI_Comm_create_errhandler(handler, &eh[i]);
        if (rc != MPI_SUCCESS)
            break;
        made++;
    }
    if (pooled) {
        CHECK(made == POOL && rc != MPI_SUCCESS, "made %d handlers (rc %d), expected %d then a failure", made, rc, POOL);
        MPI_OK(MPI_Error_class(rc, &cls));
        CHECK(cls == MPI_ERR_NO_MEM, "handler %d: class %d, expected MPI_ERR_NO_MEM", made + 1, cls);
    } else {
        CHECK(made == TRIES, "made %d of %d handlers (rc %d)", made, TRIES, rc);
    }
    /* the first, a middle one and the last made each run */
    int probe[3] = {0, made / 2, made - 1};
    for (i = 0; i < 3; i++) {
        MPI_Comm c;
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        MPI_OK(MPI_Comm_set_errhandler(c, eh[probe[i]]));
        called = -1;
        MPI_Comm_call_errhandler(c, MPI_ERR_OTHER);
        CHECK(called == MPI_ERR_OTHER, "handler %d: called with %d", probe[i], called);
        MPI_OK(MPI_Comm_free(&c));
    }
    for (i = 0; i < made; i++)
        MPI_OK(MPI_Errhandler_free(&eh[i]));
    printf("errhandler_pool: OK (%d made%s)\n", made, pooled ? ", then MPI_ERR_NO_MEM" : "");
    MPI_OK(MPI_Finalize());
    return 0;
}
