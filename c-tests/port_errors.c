/* oxmpi-test: ranks=1,2 modes=processes,threads mpich=skip */
/* Bad input to ports and names, under MPI_ERRORS_RETURN, at every rank of the calls and without
   a hang: MPI_ERR_PORT for a connect to a malformed, closed or never opened port (at every rank
   of the connecting group, though only the root reads the name), for closing a port twice, and
   for accepting on a port another rank opened; MPI_ERR_NAME for a lookup of an unknown name;
   MPI_ERR_SERVICE for an unpublish of an unknown name, of a name with another port, and for
   publishing a name twice. The job goes on afterwards. (Debian's MPICH, over UCX, has no
   ports: mpich=skip.) */
#define _DEFAULT_SOURCE
#include "oxtest.h"
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    char port[MPI_MAX_PORT_NAME], other[MPI_MAX_PORT_NAME], found[MPI_MAX_PORT_NAME], service[80];
    int rank, size, rc;
    long id;
    MPI_Comm inter;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    id = (long)getpid();
    MPI_OK(MPI_Bcast(&id, 1, MPI_LONG, 0, MPI_COMM_WORLD));
    snprintf(service, sizeof service, "oxmpi-test-port-errors-%ld-%d", id, rank);

    /* connect to no port at all: every rank fails, the non-roots too */
    rc = MPI_Comm_connect(rank == 0 ? "no such port" : NULL, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter);
    CHECK_CLASS(rc, MPI_ERR_PORT);
    rc = MPI_Comm_accept(rank == 0 ? "oxmpi-port:1:2" : NULL, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter);
    CHECK_CLASS(rc, MPI_ERR_PORT);
    /* a closed port */
    MPI_OK(MPI_Open_port(MPI_INFO_NULL, port));
    MPI_OK(MPI_Close_port(port));
    rc = MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter);
    CHECK_CLASS(rc, MPI_ERR_PORT);
    rc = MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter);
    CHECK_CLASS(rc, MPI_ERR_PORT);
    rc = MPI_Close_port(port);
    CHECK_CLASS(rc, MPI_ERR_PORT);
    rc = MPI_Close_port("garbage");
    CHECK_CLASS(rc, MPI_ERR_PORT);
    /* a port of another rank cannot be accepted on */
    if (size > 1) {
        MPI_OK(MPI_Open_port(MPI_INFO_NULL, port));
        MPI_OK(MPI_Sendrecv(port, MPI_MAX_PORT_NAME, MPI_CHAR, 1 - rank, 0, other, MPI_MAX_PORT_NAME, MPI_CHAR, 1 - rank, 0,
                            MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(strcmp(port, other) != 0, "two ranks got the same port '%s'", port);
        rc = MPI_Comm_accept(other, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter);
        CHECK_CLASS(rc, MPI_ERR_PORT);
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        MPI_OK(MPI_Close_port(port));
    }

    /* names */
    rc = MPI_Lookup_name(service, MPI_INFO_NULL, found);
    CHECK_CLASS(rc, MPI_ERR_NAME);
    rc = MPI_Unpublish_name(service, MPI_INFO_NULL, "oxmpi-port:1:2:3");
    CHECK_CLASS(rc, MPI_ERR_SERVICE);
    MPI_OK(MPI_Open_port(MPI_INFO_NULL, port));
    MPI_OK(MPI_Publish_name(service, MPI_INFO_NULL, port));
    rc = MPI_Publish_name(service, MPI_INFO_NULL, port);
    CHECK_CLASS(rc, MPI_ERR_SERVICE);
    MPI_OK(MPI_Lookup_name(service, MPI_INFO_NULL, found));
    CHECK(strcmp(found, port) == 0, "lookup gave '%s', want '%s'", found, port);
    rc = MPI_Unpublish_name(service, MPI_INFO_NULL, "oxmpi-port:1:2:3");
    CHECK_CLASS(rc, MPI_ERR_SERVICE);
    MPI_OK(MPI_Unpublish_name(service, MPI_INFO_NULL, port));
    rc = MPI_Lookup_name(service, MPI_INFO_NULL, found);
    CHECK_CLASS(rc, MPI_ERR_NAME);
    rc = MPI_Unpublish_name(service, MPI_INFO_NULL, port);
    CHECK_CLASS(rc, MPI_ERR_SERVICE);
    MPI_OK(MPI_Close_port(port));

    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Finalize());
    if (rank == 0)
        printf("port_errors OK\n");
    return 0;
}
