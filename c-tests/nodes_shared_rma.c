/* oxmpi-test: ranks=1,2,4 */
/* A job over several nodes (mpiexec --nodes K; one node without it): MPI_COMM_TYPE_SHARED gives
   exactly the ranks of this rank's node (from OXMPI_NODE_MAP, which mpiexec --nodes sets; under a
   foreign launcher, as many as it says share this node: hydra's MPI_LOCALNRANKS, Open MPI's
   OMPI_COMM_WORLD_LOCAL_SIZE, e.g. across network namespaces, scripts/netns.sh); RMA on
   that communicator works (MPI_Win_allocate_shared: loads of the neighbour's memory; MPI_Win_create:
   put, accumulate, get under fence); a window over MPI_COMM_WORLD works across nodes too (fence
   and lock), except MPI_Win_allocate_shared, which fails there with MPI_ERR_RMA_SHARED, leaving the
   job usable. */
#include "oxtest.h"
#include <stdlib.h>
#include <string.h>

/* The node of every world rank, or NULL when the job is on one node. */
static int *node_map(int size)
{
    const char *m = getenv("OXMPI_NODE_MAP");
    if (m == NULL)
        return NULL;
    int *nodes = oxt_malloc(sizeof(int) * (size_t)size);
    for (int r = 0; r < size; r++) {
        char *end;
        nodes[r] = (int)strtol(m, &end, 10);
        CHECK(end != m, "OXMPI_NODE_MAP=%s has no node for rank %d", getenv("OXMPI_NODE_MAP"), r);
        m = *end == ',' ? end + 1 : end;
    }
    return nodes;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int *nodes = node_map(size);
    int want = size, spans = 0;
    const char *local = getenv("MPI_LOCALNRANKS");
    if (local == NULL)
        local = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    if (nodes == NULL && local != NULL) {
        want = atoi(local);
        CHECK(want >= 1 && want <= size, "the launcher says %s ranks share this node, of %d", local, size);
        spans = want < size;
    } else if (nodes != NULL) {
        want = 0;
        for (int r = 0; r < size; r++) {
            want += nodes[r] == nodes[rank];
            spans |= nodes[r] != nodes[0];
        }
    }

    MPI_Comm shm;
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shm));
    int srank, ssize;
    MPI_OK(MPI_Comm_rank(shm, &srank));
    MPI_OK(MPI_Comm_size(shm, &ssize));
    CHECK(ssize == want, "MPI_COMM_TYPE_SHARED gave %d ranks, this node has %d", ssize, want);
    /* Members are this node's ranks (blocks of consecutive ranks, in order). */
    int *members = oxt_malloc(sizeof(int) * (size_t)ssize);
    MPI_OK(MPI_Allgather(&rank, 1, MPI_INT, members, 1, MPI_INT, shm));
    for (int i = 0; i < ssize; i++)
        CHECK(nodes == NULL || nodes[members[i]] == nodes[rank], "shared-memory rank %d is world rank %d, of another node", i, members[i]);

    /* A shared window on the node: each rank reads its neighbour's memory directly. */
    int *mine, *theirs;
    MPI_Win sw;
    MPI_OK(MPI_Win_allocate_shared(sizeof(int), sizeof(int), MPI_INFO_NULL, shm, &mine, &sw));
    MPI_OK(MPI_Win_fence(0, sw));
    *mine = 1000 + rank;
    MPI_OK(MPI_Win_fence(0, sw));
    MPI_Aint sz;
    int du, next = (srank + 1) % ssize;
    MPI_OK(MPI_Win_shared_query(sw, next, &sz, &du, &theirs));
    CHECK(*theirs == 1000 + members[next], "shared neighbour %d holds %d, not %d", next, *theirs, 1000 + members[next]);
    MPI_OK(MPI_Win_fence(0, sw));
    MPI_OK(MPI_Win_free(&sw));

    /* Put, accumulate and get on user memory, inside the node. */
    long buf[4] = {0, 0, 0, 0};
    MPI_Win w;
    MPI_OK(MPI_Win_create(buf, sizeof buf, sizeof(long), MPI_INFO_NULL, shm, &w));
    MPI_OK(MPI_Win_fence(0, w));
    long v = rank + 1, got = -1;
    MPI_OK(MPI_Put(&v, 1, MPI_LONG, next, 0, 1, MPI_LONG, w));
    MPI_OK(MPI_Accumulate(&v, 1, MPI_LONG, 0, 1, 1, MPI_LONG, MPI_SUM, w));
    MPI_OK(MPI_Win_fence(0, w));
    MPI_OK(MPI_Get(&got, 1, MPI_LONG, 0, 1, 1, MPI_LONG, w));
    MPI_OK(MPI_Win_fence(0, w));
    long sum = 0;
    for (int i = 0; i < ssize; i++)
        sum += members[i] + 1;
    CHECK(got == sum, "accumulated %ld on the node's first rank, want %ld", got, sum);
    int prev = (srank + ssize - 1) % ssize;
    CHECK(buf[0] == members[prev] + 1, "put from the node's previous rank left %ld, want %d", buf[0], members[prev] + 1);
    MPI_OK(MPI_Win_free(&w));

    /* Over the whole job, across nodes: MPI_Win_create works (put to the next rank and accumulate
       to rank 0 under fence, fetch_and_op to the last rank under an exclusive lock, served by its
       progress while it waits in MPI_Barrier); MPI_Win_allocate_shared needs ranks of one node. */
    MPI_Win ww;
    long wb[2] = {0, 0}, myval = rank + 1, one_l = 1, old = -1;
    MPI_OK(MPI_Win_create(wb, sizeof wb, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &ww));
    MPI_OK(MPI_Win_fence(0, ww));
    MPI_OK(MPI_Put(&myval, 1, MPI_LONG, (rank + 1) % size, 0, 1, MPI_LONG, ww));
    MPI_OK(MPI_Accumulate(&myval, 1, MPI_LONG, 0, 1, 1, MPI_LONG, MPI_SUM, ww));
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, ww));
    CHECK(wb[0] == (rank + size - 1) % size + 1, "put across the job left %ld", wb[0]);
    long acc0 = rank == 0 ? (long)size * (size + 1) / 2 : 0;
    CHECK(wb[1] == acc0, "accumulate across the job left %ld, want %ld", wb[1], acc0);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD)); /* checked before the fetch_and_ops below change wb[1] */
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, size - 1, 0, ww));
    MPI_OK(MPI_Fetch_and_op(&one_l, &old, MPI_LONG, size - 1, 1, MPI_SUM, ww));
    MPI_OK(MPI_Win_unlock(size - 1, ww));
    CHECK(old >= (size == 1 ? 1 : 0) && old < (size == 1 ? 1 : 0) + size, "fetch_and_op fetched %ld", old);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == size - 1) {
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, ww));
        CHECK(wb[1] == acc0 + size, "%d fetch_and_op left %ld, want %ld", size, wb[1], acc0 + size);
        MPI_OK(MPI_Win_unlock(rank, ww));
    }
    MPI_OK(MPI_Win_free(&ww));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    long *sh;
    int rc = MPI_Win_allocate_shared(sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &sh, &ww);
    if (spans) {
        CHECK_CLASS(rc, MPI_ERR_RMA_SHARED);
    } else {
        MPI_OK(rc);
        MPI_OK(MPI_Win_free(&ww));
    }
    int total = 0, one = 1;
    MPI_OK(MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(total == size, "allreduce after the window gave %d, want %d", total, size);

    MPI_OK(MPI_Comm_free(&shm));
    free(members);
    free(nodes);
    MPI_OK(MPI_Finalize());
    return 0;
}
