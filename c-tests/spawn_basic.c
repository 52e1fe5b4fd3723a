/* oxmpi-test: ranks=1,2 modes=processes,threads env=OXMPI_UNIVERSE_SIZE=10 */
/* MPI_Comm_spawn of 1, then 3 copies of this program: MPI_UNIVERSE_SIZE, array_of_errcodes,
   MPI_Comm_get_parent (MPI_COMM_NULL in the first job, the parent intercommunicator in the
   children, MPI_COMM_NULL again after MPI_Comm_disconnect), the children's own MPI_COMM_WORLD,
   point-to-point both ways and collectives over the intercommunicator, MPI_Intercomm_merge. */
#define _DEFAULT_SOURCE
#include "oxtest.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void child(int nparents)
{
    int rank, size, rsize, flag, *appnum, v, x;
    MPI_Comm parent, merged;
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_OK(MPI_Comm_get_parent(&parent));
    CHECK(parent != MPI_COMM_NULL, "a spawned rank has a parent");
    MPI_OK(MPI_Comm_test_inter(parent, &flag));
    CHECK(flag, "the parent communicator is an intercommunicator");
    MPI_OK(MPI_Comm_remote_size(parent, &rsize));
    CHECK(rsize == nparents, "remote size %d, want %d", rsize, nparents);
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag));
    CHECK(flag && *appnum == 0, "appnum");
    /* the children's world works on its own */
    x = rank + 1;
    MPI_OK(MPI_Allreduce(&x, &v, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(v == size * (size + 1) / 2, "children's allreduce %d", v);
    /* point-to-point with the parents' rank 0 */
    MPI_OK(MPI_Recv(&v, 1, MPI_INT, 0, 7, parent, MPI_STATUS_IGNORE));
    CHECK(v == 100 + rank, "got %d from the parent", v);
    v = 1000 + rank;
    MPI_OK(MPI_Send(&v, 1, MPI_INT, 0, 8, parent));
    /* broadcast from the parents' rank 0 */
    MPI_OK(MPI_Bcast(&v, 1, MPI_INT, 0, parent));
    CHECK(v == 4242, "bcast over the intercommunicator gave %d", v);
    /* allreduce: each group gets the other's sum */
    x = 1;
    MPI_OK(MPI_Allreduce(&x, &v, 1, MPI_INT, MPI_SUM, parent));
    CHECK(v == nparents * 10, "inter allreduce gave %d", v);
    MPI_OK(MPI_Intercomm_merge(parent, 1, &merged));
    MPI_OK(MPI_Comm_rank(merged, &v));
    CHECK(v == nparents + rank, "merged rank %d", v);
    MPI_OK(MPI_Allreduce(&x, &v, 1, MPI_INT, MPI_SUM, merged));
    CHECK(v == nparents + size, "merged allreduce %d", v);
    MPI_OK(MPI_Comm_free(&merged));
    MPI_OK(MPI_Comm_disconnect(&parent));
    CHECK(parent == MPI_COMM_NULL, "disconnect sets the handle to MPI_COMM_NULL");
    MPI_OK(MPI_Comm_get_parent(&parent));
    CHECK(parent == MPI_COMM_NULL, "no parent after disconnect");
}

int main(int argc, char **argv)
{
    int rank, size, flag, *usize;
    MPI_Comm parent;
    MPI_OK(MPI_Init(&argc, &argv));
    if (argc > 2 && strcmp(argv[1], "child") == 0) {
        child(atoi(argv[2]));
        MPI_OK(MPI_Finalize());
        return 0;
    }
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_OK(MPI_Comm_get_parent(&parent));
    CHECK(parent == MPI_COMM_NULL, "a job started by mpiexec has no parent");
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &usize, &flag));
    CHECK(flag && *usize == 10, "MPI_UNIVERSE_SIZE %d, want 10 (OXMPI_UNIVERSE_SIZE)", flag ? *usize : -1);
    char exe[4096], nparents[16];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    CHECK(n > 0, "readlink");
    exe[n] = 0;
    snprintf(nparents, sizeof nparents, "%d", size);
    char *args[] = {"child", nparents, NULL};
    int counts[] = {1, 3};
    for (int k = 0; k < 2; k++) {
        int nk = counts[k], errcodes[3] = {-1, -1, -1}, rsize, v, x;
        MPI_Comm inter, merged;
        MPI_OK(MPI_Comm_spawn(exe, args, nk, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, errcodes));
        for (int i = 0; i < nk; i++)
            CHECK(errcodes[i] == MPI_SUCCESS, "errcodes[%d] = %d", i, errcodes[i]);
        MPI_OK(MPI_Comm_remote_size(inter, &rsize));
        CHECK(rsize == nk, "remote size %d, want %d", rsize, nk);
        if (rank == 0) {
            for (int i = 0; i < nk; i++) {
                v = 100 + i;
                MPI_OK(MPI_Send(&v, 1, MPI_INT, i, 7, inter));
            }
            for (int i = 0; i < nk; i++) {
                MPI_OK(MPI_Recv(&v, 1, MPI_INT, i, 8, inter, MPI_STATUS_IGNORE));
                CHECK(v == 1000 + i, "got %d from child %d", v, i);
            }
        }
        v = 4242;
        MPI_OK(MPI_Bcast(&v, 1, MPI_INT, rank == 0 ? MPI_ROOT : MPI_PROC_NULL, inter));
        x = 10;
        MPI_OK(MPI_Allreduce(&x, &v, 1, MPI_INT, MPI_SUM, inter));
        CHECK(v == nk, "inter allreduce gave %d, want %d", v, nk);
        MPI_OK(MPI_Intercomm_merge(inter, 0, &merged));
        MPI_OK(MPI_Comm_rank(merged, &v));
        CHECK(v == rank, "merged rank %d, want %d", v, rank);
        x = 1;
        MPI_OK(MPI_Allreduce(&x, &v, 1, MPI_INT, MPI_SUM, merged));
        CHECK(v == size + nk, "merged allreduce %d", v);
        MPI_OK(MPI_Comm_free(&merged));
        MPI_OK(MPI_Comm_disconnect(&inter));
    }
    MPI_OK(MPI_Finalize());
    if (rank == 0)
        printf("spawn_basic OK\n");
    return 0;
}
