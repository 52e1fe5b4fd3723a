/* oxmpi-test: ranks=2,3,4 modes=processes,threads mpich=skip */
/* Ports between two groups of one job: MPI_COMM_WORLD split in two halves (and rank 0 alone
   against the others, as mpi4py's test_dynproc does), accept on one side and connect on the
   other, with the port passed by a message and then through MPI_Publish_name/MPI_Lookup_name.
   The intercommunicator carries point-to-point, MPI_Bcast and MPI_Allreduce and merges;
   MPI_Comm_disconnect frees it. Then MPI_Comm_join over a TCP socket between ranks 0 and 1;
   then 40 cycles of open, accept/connect, disconnect and close between the first and the last
   rank.
   (Debian's MPICH, over UCX, has no ports: mpich=skip.) */
#define _DEFAULT_SOURCE
#include "oxtest.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Exercises `inter` from a group of `lsize` ranks facing one of `rsize`; `low` is the
   accepting group. */
static void use_inter(MPI_Comm inter, int lsize, int rsize, int low)
{
    int rank, n, flag, v, x, mrank, msize;
    MPI_Comm merged;
    MPI_OK(MPI_Comm_test_inter(inter, &flag));
    CHECK(flag, "an intercommunicator");
    MPI_OK(MPI_Comm_size(inter, &n));
    CHECK(n == lsize, "local size %d, want %d", n, lsize);
    MPI_OK(MPI_Comm_remote_size(inter, &n));
    CHECK(n == rsize, "remote size %d, want %d", n, rsize);
    MPI_OK(MPI_Comm_rank(inter, &rank));
    /* point-to-point between the two rank 0s, both ways */
    if (rank == 0) {
        v = low ? 11 : 22;
        MPI_OK(MPI_Sendrecv(&v, 1, MPI_INT, 0, 5, &x, 1, MPI_INT, 0, 5, inter, MPI_STATUS_IGNORE));
        CHECK(x == (low ? 22 : 11), "got %d from the other group", x);
    }
    /* broadcast from the accepting group's rank 0 */
    v = -1;
    if (low)
        v = 4242;
    MPI_OK(MPI_Bcast(&v, 1, MPI_INT, low ? (rank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0, inter));
    if (!low)
        CHECK(v == 4242, "bcast gave %d", v);
    /* each group gets the other's sum */
    x = low ? 1 : 100;
    MPI_OK(MPI_Allreduce(&x, &v, 1, MPI_INT, MPI_SUM, inter));
    CHECK(v == (low ? 100 * rsize : rsize), "allreduce gave %d", v);
    /* the accepting group first */
    MPI_OK(MPI_Intercomm_merge(inter, !low, &merged));
    MPI_OK(MPI_Comm_size(merged, &msize));
    MPI_OK(MPI_Comm_rank(merged, &mrank));
    CHECK(msize == lsize + rsize, "merged size %d", msize);
    CHECK(mrank == (low ? rank : rsize + rank), "merged rank %d", mrank);
    MPI_OK(MPI_Allreduce(&mrank, &v, 1, MPI_INT, MPI_SUM, merged));
    CHECK(v == msize * (msize - 1) / 2, "merged allreduce %d", v);
    MPI_OK(MPI_Comm_free(&merged));
    MPI_OK(MPI_Comm_disconnect(&inter));
    CHECK(inter == MPI_COMM_NULL, "disconnect sets MPI_COMM_NULL");
}

/* `world` split by `accepting`; the acceptors' rank 0 opens the port. `by_name`: the port
   travels through the name service under `service`, else by a message to world rank `peer`
   (the connecting group's rank 0). */
static void halves(int accepting, int peer, int by_name, const char *service)
{
    char port[MPI_MAX_PORT_NAME] = "";
    int wrank, lsize, rsize, lrank;
    MPI_Comm half, inter;
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &wrank));
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, accepting, wrank, &half));
    MPI_OK(MPI_Comm_size(half, &lsize));
    MPI_OK(MPI_Comm_rank(half, &lrank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &rsize));
    rsize -= lsize;
    if (accepting) {
        if (lrank == 0) {
            MPI_OK(MPI_Open_port(MPI_INFO_NULL, port));
            CHECK(strlen(port) > 0 && strlen(port) < MPI_MAX_PORT_NAME, "port name '%s'", port);
            if (by_name)
                MPI_OK(MPI_Publish_name(service, MPI_INFO_NULL, port));
            else
                MPI_OK(MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, peer, 1, MPI_COMM_WORLD));
        }
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        MPI_OK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, half, &inter));
        if (lrank == 0) {
            if (by_name)
                MPI_OK(MPI_Unpublish_name(service, MPI_INFO_NULL, port));
            MPI_OK(MPI_Close_port(port));
        }
    } else {
        if (lrank == 0) {
            if (!by_name)
                MPI_OK(MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        }
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        if (lrank == 0 && by_name) {
            char found[MPI_MAX_PORT_NAME];
            MPI_OK(MPI_Lookup_name(service, MPI_INFO_NULL, found));
            strcpy(port, found);
        }
        MPI_OK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, half, &inter));
    }
    use_inter(inter, lsize, rsize, accepting);
    MPI_OK(MPI_Comm_free(&half));
}

static void join(int rank)
{
    int fd = -1, lfd, one = 1, v;
    struct sockaddr_in a;
    socklen_t len = sizeof a;
    unsigned short tcp_port = 0;
    MPI_Comm inter;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (rank == 0) {
        lfd = socket(AF_INET, SOCK_STREAM, 0);
        CHECK(lfd >= 0, "socket");
        setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        CHECK(bind(lfd, (struct sockaddr *)&a, sizeof a) == 0, "bind");
        CHECK(listen(lfd, 1) == 0, "listen");
        CHECK(getsockname(lfd, (struct sockaddr *)&a, &len) == 0, "getsockname");
        tcp_port = ntohs(a.sin_port);
        MPI_OK(MPI_Send(&tcp_port, 1, MPI_UNSIGNED_SHORT, 1, 2, MPI_COMM_WORLD));
        fd = accept(lfd, NULL, NULL);
        CHECK(fd >= 0, "accept");
        close(lfd);
    } else if (rank == 1) {
        MPI_OK(MPI_Recv(&tcp_port, 1, MPI_UNSIGNED_SHORT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        fd = socket(AF_INET, SOCK_STREAM, 0);
        a.sin_port = htons(tcp_port);
        CHECK(connect(fd, (struct sockaddr *)&a, sizeof a) == 0, "connect");
    }
    if (rank <= 1) {
        MPI_OK(MPI_Comm_join(fd, &inter));
        close(fd);
        v = rank == 0 ? 77 : -1;
        MPI_OK(MPI_Bcast(&v, 1, MPI_INT, rank == 0 ? MPI_ROOT : 0, inter));
        if (rank == 1)
            CHECK(v == 77, "bcast over the joined communicator gave %d", v);
        MPI_OK(MPI_Comm_disconnect(&inter));
    }
}

int main(int argc, char **argv)
{
    int rank, size;
    long id;
    char service[64];
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    id = (long)getpid();
    MPI_OK(MPI_Bcast(&id, 1, MPI_LONG, 0, MPI_COMM_WORLD));
    snprintf(service, sizeof service, "oxmpi-test-port-connect-%ld", id);
    /* low half accepts, high half connects */
    halves(rank < size / 2, size / 2, 0, service);
    /* rank 0 alone connects to the others, which accept (mpi4py's testConnectAccept) */
    halves(rank != 0, 0, 0, service);
    /* through the name service, twice (the name is free again after unpublishing) */
    halves(rank >= size / 2, 0, 1, service);
    halves(rank < size / 2, 0, 1, service);
    join(rank);
    /* repeatedly: every cycle opens, connects, disconnects and closes (ports and contexts are
       given back) */
    for (int i = 0; i < 40; i++) {
        char port[MPI_MAX_PORT_NAME];
        MPI_Comm inter;
        int v = i;
        if (rank == 0)
            MPI_OK(MPI_Open_port(MPI_INFO_NULL, port));
        MPI_OK(MPI_Bcast(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, MPI_COMM_WORLD));
        if (rank == 0)
            MPI_OK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter));
        else if (rank == size - 1)
            MPI_OK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter));
        if (rank == 0 || rank == size - 1) {
            MPI_OK(MPI_Bcast(&v, 1, MPI_INT, rank == 0 ? MPI_ROOT : 0, inter));
            CHECK(v == i, "cycle %d: bcast gave %d", i, v);
            MPI_OK(MPI_Comm_disconnect(&inter));
        }
        if (rank == 0)
            MPI_OK(MPI_Close_port(port));
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Finalize());
    if (rank == 0)
        printf("port_connect OK\n");
    return 0;
}
