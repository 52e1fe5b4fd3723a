/* oxmpi-test: ranks=1,2,3,4,8 */
/* User communicators: MPI_Comm_dup isolates traffic from its parent, MPI_Comm_split orders ranks by
   (key, parent rank) and gives MPI_COMM_NULL for MPI_UNDEFINED, split_type SHARED holds every
   rank of the node, names, compare, collectives and status sources on the new communicators, and thousands of
   create/free cycles (context ids are recycled). */
#include "oxtest.h"
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, size, r, n, res;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));

    /* dup: same ranks, separate traffic */
    MPI_Comm dup;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_OK(MPI_Comm_rank(dup, &r));
    MPI_OK(MPI_Comm_size(dup, &n));
    CHECK(r == rank && n == size, "dup: rank %d size %d", r, n);
    MPI_OK(MPI_Comm_compare(MPI_COMM_WORLD, dup, &res));
    CHECK(res == MPI_CONGRUENT, "compare(world, dup) = %d", res);
    MPI_OK(MPI_Comm_compare(dup, dup, &res));
    CHECK(res == MPI_IDENT, "compare(dup, dup) = %d", res);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int a = 100 + rank, b = 200 + rank, ga = -1, gb = -1;
    MPI_Request rq[2];
    /* the dup message is sent first; a receive on world must still get the world message */
    MPI_OK(MPI_Irecv(&ga, 1, MPI_INT, left, 7, MPI_COMM_WORLD, &rq[0]));
    MPI_OK(MPI_Irecv(&gb, 1, MPI_INT, left, 7, dup, &rq[1]));
    MPI_OK(MPI_Send(&b, 1, MPI_INT, right, 7, dup));
    MPI_OK(MPI_Send(&a, 1, MPI_INT, right, 7, MPI_COMM_WORLD));
    MPI_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    CHECK(ga == 100 + left && gb == 200 + left, "dup traffic mixed with world: %d %d", ga, gb);

    /* names */
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_OK(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
    CHECK(strcmp(name, "MPI_COMM_WORLD") == 0, "world name '%s'", name);
    MPI_OK(MPI_Comm_set_name(dup, "my dup"));
    MPI_OK(MPI_Comm_get_name(dup, name, &len));
    CHECK(strcmp(name, "my dup") == 0 && len == 6, "dup name '%s' (%d)", name, len);

    /* split by parity, keys reversing the order */
    MPI_Comm half;
    MPI_OK(MPI_Comm_split(dup, rank % 2, size - rank, &half));
    MPI_OK(MPI_Comm_rank(half, &r));
    MPI_OK(MPI_Comm_size(half, &n));
    int members = (size - rank % 2 + 1) / 2;
    CHECK(n == members, "split size %d, expected %d", n, members);
    /* highest parent rank of my parity gets rank 0 */
    int expect = 0;
    for (int q = rank + 2; q < size; q += 2)
        expect++;
    CHECK(r == expect, "split rank %d, expected %d", r, expect);
    int sum = 0, one = rank;
    MPI_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, half));
    int want = 0;
    for (int q = rank % 2; q < size; q += 2)
        want += q;
    CHECK(sum == want, "allreduce on split: %d, expected %d", sum, want);
    /* status source is the rank in the split communicator */
    if (n > 1) {
        int to = (r + 1) % n, from = (r + n - 1) % n, v = r, got;
        MPI_Status st;
        MPI_OK(MPI_Sendrecv(&v, 1, MPI_INT, to, 3, &got, 1, MPI_INT, MPI_ANY_SOURCE, 3, half, &st));
        CHECK(st.MPI_SOURCE == from && got == from, "split status source %d (value %d), expected %d", st.MPI_SOURCE, got, from);
    }
    MPI_OK(MPI_Comm_free(&half));
    CHECK(half == MPI_COMM_NULL, "free did not set MPI_COMM_NULL");

    /* MPI_UNDEFINED */
    MPI_Comm none;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? MPI_UNDEFINED : 1, 0, &none));
    CHECK((rank == 0) == (none == MPI_COMM_NULL), "MPI_UNDEFINED split gave %s", none == MPI_COMM_NULL ? "NULL" : "a comm");
    if (none != MPI_COMM_NULL) {
        MPI_OK(MPI_Comm_size(none, &n));
        CHECK(n == size - 1, "split without rank 0 has %d ranks", n);
        MPI_OK(MPI_Barrier(none));
        MPI_OK(MPI_Comm_free(&none));
    }

    /* split_type SHARED: everybody on one node (over several nodes, mpiexec --nodes or a foreign
       launcher's hosts, the node's ranks: nodes_shared_rma checks which) */
    MPI_Comm node;
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node));
    MPI_OK(MPI_Comm_size(node, &n));
    const char *local = getenv("MPI_LOCALNRANKS"); /* hydra's, Open MPI's: ranks on this node */
    if (local == NULL)
        local = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    if (getenv("OXMPI_NODE_MAP") == NULL && local != NULL)
        CHECK(n == atoi(local), "split_type SHARED has %d ranks, the launcher put %s on this node", n, local);
    else if (getenv("OXMPI_NODE_MAP") == NULL)
        CHECK(n == size, "split_type SHARED has %d ranks", n);
    else
        CHECK(n >= 1 && n <= size, "split_type SHARED has %d ranks", n);
    MPI_OK(MPI_Comm_free(&node));

    /* started by mpiexec, not spawned: no parent (MPI 4.1 section 11.8.2) */
    MPI_Comm parent = MPI_COMM_WORLD;
    MPI_OK(MPI_Comm_get_parent(&parent));
    CHECK(parent == MPI_COMM_NULL, "MPI_Comm_get_parent of a process mpiexec started is not MPI_COMM_NULL");

    /* MPI_Comm_disconnect: collective free after the communication on it completed */
    {
        MPI_Comm d;
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
        int out = rank, in = -1;
        MPI_Request rq[2];
        MPI_OK(MPI_Irecv(&in, 1, MPI_INT, (rank + size - 1) % size, 3, d, &rq[0]));
        MPI_OK(MPI_Isend(&out, 1, MPI_INT, (rank + 1) % size, 3, d, &rq[1]));
        MPI_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
        CHECK(in == (rank + size - 1) % size, "ring value %d before disconnect", in);
        MPI_OK(MPI_Comm_disconnect(&d));
        CHECK(d == MPI_COMM_NULL, "MPI_Comm_disconnect did not set MPI_COMM_NULL");
        MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        int rc = MPI_Comm_disconnect(&d), cls;
        MPI_OK(MPI_Error_class(rc, &cls));
        CHECK(cls == MPI_ERR_COMM, "MPI_Comm_disconnect(MPI_COMM_NULL): class %d, expected MPI_ERR_COMM", cls);
        MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    }

    /* create and free more than oxmpi has context ids (4096 pairs): they must be given back.
       (MPICH busy-polls, which makes this slow when oversubscribed: fewer cycles there.) */
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    MPI_OK(MPI_Get_library_version(lib, &len));
    int cycles = strstr(lib, "oxmpi") ? 5000 : 200;
    for (int i = 0; i < cycles; i++) {
        MPI_Comm c;
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        if (i % 500 == 0)
            MPI_OK(MPI_Barrier(c));
        MPI_OK(MPI_Comm_free(&c));
    }
    /* errors */
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_Comm w = MPI_COMM_WORLD;
    int rc = MPI_Comm_free(&w), cls;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_COMM, "freeing MPI_COMM_WORLD: class %d", cls);
    MPI_OK(MPI_Comm_free(&dup));
    MPI_Finalize();
    return 0;
}
