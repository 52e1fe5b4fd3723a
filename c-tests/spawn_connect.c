/* oxmpi-test: ranks=1,2 modes=processes,threads env=OXMPI_UNIVERSE_SIZE=8 mpich=skip */
/* Ports between spawned jobs and their parent: the parent spawns job A (2 ranks), which opens a
   port and publishes it; then job B (1 rank), which looks the name up and connects to A. Then A
   connects to a port the parent opened and sent it over the parent intercommunicator. Every
   intercommunicator carries a broadcast and an allreduce, then is disconnected.
   (Debian's MPICH, over UCX, has no ports: mpich=skip.) */
#define _DEFAULT_SOURCE
#include "oxtest.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* bcast from the accepting side's rank 0, then allreduce of 1 (local) vs 10 (remote) */
static void check_inter(MPI_Comm inter, int accepting, int rsize)
{
    int rank, v = accepting ? 99 : -1, x;
    MPI_OK(MPI_Comm_rank(inter, &rank));
    MPI_OK(MPI_Bcast(&v, 1, MPI_INT, accepting ? (rank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0, inter));
    if (!accepting)
        CHECK(v == 99, "bcast gave %d", v);
    x = accepting ? 1 : 10;
    MPI_OK(MPI_Allreduce(&x, &v, 1, MPI_INT, MPI_SUM, inter));
    CHECK(v == (accepting ? 10 : 1) * rsize, "allreduce gave %d with %d remote ranks", v, rsize);
    MPI_OK(MPI_Comm_disconnect(&inter));
}

int main(int argc, char **argv)
{
    int rank, size, nparents, v;
    char port[MPI_MAX_PORT_NAME], service[80];
    MPI_Comm parent, a, b, inter;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_OK(MPI_Comm_get_parent(&parent));
    if (parent == MPI_COMM_NULL) {
        long id = 0;
        char idarg[32], *args[3] = {NULL, idarg, NULL};
        if (rank == 0)
            id = (long)getpid();
        MPI_OK(MPI_Bcast(&id, 1, MPI_LONG, 0, MPI_COMM_WORLD));
        snprintf(idarg, sizeof idarg, "%ld", id);
        args[0] = "a";
        MPI_OK(MPI_Comm_spawn(argv[0], args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &a, MPI_ERRCODES_IGNORE));
        /* A published its port: start B */
        if (rank == 0)
            MPI_OK(MPI_Recv(&v, 1, MPI_INT, 0, 1, a, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        args[0] = "b";
        MPI_OK(MPI_Comm_spawn(argv[0], args, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &b, MPI_ERRCODES_IGNORE));
        /* the parent accepts A */
        if (rank == 0) {
            MPI_OK(MPI_Open_port(MPI_INFO_NULL, port));
            MPI_OK(MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 2, a));
        }
        MPI_OK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter));
        check_inter(inter, 1, 2);
        if (rank == 0)
            MPI_OK(MPI_Close_port(port));
        MPI_OK(MPI_Comm_disconnect(&a));
        MPI_OK(MPI_Comm_disconnect(&b));
        MPI_OK(MPI_Finalize());
        if (rank == 0)
            printf("spawn_connect OK\n");
        return 0;
    }
    CHECK(argc == 3, "a child gets 2 arguments, not %d", argc - 1);
    MPI_OK(MPI_Comm_remote_size(parent, &nparents));
    snprintf(service, sizeof service, "oxmpi-test-spawn-connect-%s", argv[2]);
    if (strcmp(argv[1], "a") == 0) {
        CHECK(size == 2, "job A has %d ranks", size);
        if (rank == 0) {
            MPI_OK(MPI_Open_port(MPI_INFO_NULL, port));
            MPI_OK(MPI_Publish_name(service, MPI_INFO_NULL, port));
            v = 1;
            MPI_OK(MPI_Send(&v, 1, MPI_INT, 0, 1, parent));
        }
        MPI_OK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter));
        check_inter(inter, 1, 1);
        if (rank == 0) {
            MPI_OK(MPI_Unpublish_name(service, MPI_INFO_NULL, port));
            MPI_OK(MPI_Close_port(port));
            MPI_OK(MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 2, parent, MPI_STATUS_IGNORE));
        }
        MPI_OK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter));
        check_inter(inter, 0, nparents);
    } else {
        CHECK(size == 1, "job B has %d ranks", size);
        MPI_OK(MPI_Lookup_name(service, MPI_INFO_NULL, port));
        MPI_OK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter));
        check_inter(inter, 0, 2);
    }
    MPI_OK(MPI_Comm_disconnect(&parent));
    MPI_OK(MPI_Finalize());
    return 0;
}
