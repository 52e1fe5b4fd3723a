/* oxmpi-test: ranks=2,3,4,8,16 timeout=120 */
/* Many intercommunicator and neighborhood nonblocking collectives outstanding at once, on five
   communicators (two intercommunicators, a duplicate of one, a periodic ring and a distributed
   graph with repeated neighbors and self-loops), started in a different interleaving on every
   rank (the order is only fixed per communicator), with blocking collectives on the same
   communicators run while they are outstanding, all completed by one MPI_Waitall; then
   persistent neighborhood and intercommunicator collectives started repeatedly, with blocking
   ones on the same communicators between start and wait. While the collectives are outstanding,
   a rank that is alone in its process must not have more threads than before (they progress
   inside MPI calls, with no thread per communicator). */
#include "oxtest.h"
#include "oxcoll.h"
#include <dirent.h>
#include <unistd.h>

#define ITERS 3
#define NCOMM 5
#define MAXOPS 64

static int rank, size;

/* Threads of this process (entries of /proc/self/task), -1 if unknown. */
static int threads(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* Whether every rank runs in a process of its own (processes mode, or MPICH). */
static int alone_in_process(void)
{
    int pid = (int)getpid(), *all = malloc(sizeof(int) * (size_t)size), alone = 1;
    MPI_OK(MPI_Allgather(&pid, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD));
    for (int i = 0; i < size; i++)
        if (i != rank && all[i] == pid)
            alone = 0;
    free(all);
    return alone;
}

/* One started operation: which (comm, op, iteration) and its buffers. */
struct op {
    int comm, kind, it;
    MPI_Request req;
    long lin[4], lout[4];
    int iin[64], iout[64];
};

/* The communicators and what each rank knows of them. */
static MPI_Comm ia, ib, ic, ring, graph;
static int pa, lra, rsa;         /* A (even/odd): parity, local rank, remote size */
static int cb, lrb, lsb, rsb, h; /* B (low/high half): colour, local rank, sizes; h = size / 2 */
static int left, right;          /* ring neighbours */
static int gsrc[2], gdst[2];     /* graph: sources r-1, r-3; destinations r+1, r+3 */

static int a_world(int j) { return 2 * j + (1 - pa); }      /* remote rank j of A in world */
static int b_world(int j) { return cb == 0 ? h + j : j; }   /* remote rank j of B in world */
static int mod(int x) { return ((x % size) + size) % size; }

/* Operations per communicator per iteration. */
static const int nkinds[NCOMM] = {3, 3, 2, 2, 2};

static void start(struct op *o)
{
    int it = o->it;
    switch (o->comm * 10 + o->kind) {
    case 0: /* A: Iallreduce of 3 longs */
        for (int j = 0; j < 3; j++)
            o->lin[j] = rank * 10 + j + it;
        MPI_OK(MPI_Iallreduce(o->lin, o->lout, 3, MPI_LONG, MPI_SUM, ia, &o->req));
        break;
    case 1: /* A: Ibarrier */
        MPI_OK(MPI_Ibarrier(ia, &o->req));
        break;
    case 2: /* A: Ialltoall, block j to remote rank j */
        for (int j = 0; j < rsa; j++)
            o->iin[j] = rank * 1000 + j * 10 + it;
        MPI_OK(MPI_Ialltoall(o->iin, 1, MPI_INT, o->iout, 1, MPI_INT, ia, &o->req));
        break;
    case 10: { /* B: Ibcast from local rank 0 of the low half */
        int root = cb == 0 ? (lrb == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
        for (int j = 0; j < 4; j++)
            o->iin[j] = root == MPI_ROOT ? it * 100 + j : -1;
        MPI_OK(MPI_Ibcast(o->iin, 4, MPI_INT, root, ib, &o->req));
        break;
    }
    case 11: { /* B: Ireduce (max) to the last rank of the high half */
        int last = size - h - 1;
        int root = cb == 1 ? (lrb == last ? MPI_ROOT : MPI_PROC_NULL) : last;
        o->lin[0] = rank + it;
        o->lin[1] = -rank;
        o->lout[0] = o->lout[1] = -99;
        MPI_OK(MPI_Ireduce(o->lin, o->lout, 2, MPI_LONG, MPI_MAX, root, ib, &o->req));
        break;
    }
    case 12: /* B: Ireduce_scatter_block, recvcount = remote size */
        for (int i = 0; i < lsb * rsb; i++)
            o->iin[i] = rank * 7 + i + it;
        MPI_OK(MPI_Ireduce_scatter_block(o->iin, o->iout, rsb, MPI_INT, MPI_SUM, ib, &o->req));
        break;
    case 20: /* C (dup of A): Iallgather */
        o->iin[0] = rank * 3 + it;
        MPI_OK(MPI_Iallgather(o->iin, 1, MPI_INT, o->iout, 1, MPI_INT, ic, &o->req));
        break;
    case 21: { /* C: Iscatter from local rank 0 of the even group */
        int root = pa == 0 ? (lra == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
        for (int j = 0; j < rsa; j++)
            o->iin[j] = j * 5 + it;
        o->iout[0] = -1;
        MPI_OK(MPI_Iscatter(o->iin, 1, MPI_INT, o->iout, 1, MPI_INT, root, ic, &o->req));
        break;
    }
    case 30: /* ring: Ineighbor_alltoall, block 0 to the -1 neighbour, block 1 to the +1 */
        o->iin[0] = rank * 4 + it * 100;
        o->iin[1] = rank * 4 + 1 + it * 100;
        MPI_OK(MPI_Ineighbor_alltoall(o->iin, 1, MPI_INT, o->iout, 1, MPI_INT, ring, &o->req));
        break;
    case 31: /* ring: Ineighbor_allgather */
        o->lin[0] = rank + it;
        MPI_OK(MPI_Ineighbor_allgather(o->lin, 1, MPI_LONG, o->lout, 1, MPI_LONG, ring, &o->req));
        break;
    case 40: /* graph: Ineighbor_alltoall, block k to destination k */
        o->iin[0] = rank * 10 + it * 1000;
        o->iin[1] = rank * 10 + 1 + it * 1000;
        MPI_OK(MPI_Ineighbor_alltoall(o->iin, 1, MPI_INT, o->iout, 1, MPI_INT, graph, &o->req));
        break;
    case 41: /* graph: Ineighbor_allgather */
        o->iin[0] = rank + it * 7;
        MPI_OK(MPI_Ineighbor_allgather(o->iin, 1, MPI_INT, o->iout, 1, MPI_INT, graph, &o->req));
        break;
    }
}

static void verify(const struct op *o)
{
    int it = o->it;
    switch (o->comm * 10 + o->kind) {
    case 0:
        for (int j = 0; j < 3; j++) {
            long e = 0;
            for (int q = 0; q < rsa; q++)
                e += a_world(q) * 10 + j + it;
            CHECK(o->lout[j] == e, "A iallreduce it %d [%d] = %ld, expected %ld", it, j, o->lout[j], e);
        }
        break;
    case 2:
        for (int j = 0; j < rsa; j++)
            CHECK(o->iout[j] == a_world(j) * 1000 + lra * 10 + it, "A ialltoall it %d [%d] = %d", it, j, o->iout[j]);
        break;
    case 10:
        for (int j = 0; j < 4; j++) {
            int e = cb == 1 || lrb == 0 ? it * 100 + j : -1;
            CHECK(o->iin[j] == e, "B ibcast it %d [%d] = %d, expected %d", it, j, o->iin[j], e);
        }
        break;
    case 11:
        if (cb == 1 && lrb == size - h - 1)
            CHECK(o->lout[0] == h - 1 + it && o->lout[1] == 0, "B ireduce it %d = %ld %ld", it, o->lout[0], o->lout[1]);
        else
            CHECK(o->lout[0] == -99, "B ireduce wrote a non-root's buffer");
        break;
    case 12:
        for (int j = 0; j < rsb; j++) {
            int e = 0;
            for (int p = 0; p < rsb; p++)
                e += b_world(p) * 7 + lrb * rsb + j + it;
            CHECK(o->iout[j] == e, "B ireduce_scatter_block it %d [%d] = %d, expected %d", it, j, o->iout[j], e);
        }
        break;
    case 20:
        for (int j = 0; j < rsa; j++)
            CHECK(o->iout[j] == a_world(j) * 3 + it, "C iallgather it %d [%d] = %d", it, j, o->iout[j]);
        break;
    case 21:
        if (pa == 1)
            CHECK(o->iout[0] == lra * 5 + it, "C iscatter it %d got %d", it, o->iout[0]);
        else
            CHECK(o->iout[0] == -1, "C iscatter wrote the root group's buffer");
        break;
    case 30:
        CHECK(o->iout[0] == left * 4 + 1 + it * 100 && o->iout[1] == right * 4 + it * 100, "ring ineighbor_alltoall it %d got %d %d", it, o->iout[0], o->iout[1]);
        break;
    case 31:
        CHECK(o->lout[0] == left + it && o->lout[1] == right + it, "ring ineighbor_allgather it %d got %ld %ld", it, o->lout[0], o->lout[1]);
        break;
    case 40: {
        /* a repeated source's messages pair in order (the standard's reference code); MPICH 4.0.2
           pairs them from the end in alltoall (pmodels/mpich#7945) */
        int rev = oxc_is_mpich() && gsrc[0] == gsrc[1];
        CHECK(o->iout[rev] == gsrc[0] * 10 + it * 1000 && o->iout[1 - rev] == gsrc[1] * 10 + 1 + it * 1000, "graph ineighbor_alltoall it %d got %d %d", it, o->iout[0], o->iout[1]);
        break;
    }
    case 41:
        CHECK(o->iout[0] == gsrc[0] + it * 7 && o->iout[1] == gsrc[1] + it * 7, "graph ineighbor_allgather it %d got %d %d", it, o->iout[0], o->iout[1]);
        break;
    }
}

/* Persistent collectives restarted with fresh data, with blocking collectives on the same
   communicators between MPI_Startall and MPI_Waitall. */
static void persistent(void)
{
    int sr[2], rr[2], sg[3], rg[3], scnt[2] = {1, 2}, sdis[2] = {0, 1}, rcnt[2] = {1, 2}, rdis[2] = {0, 1};
    long ain[2], aout[2];
    MPI_Request q[3];
    MPI_OK(MPI_Neighbor_alltoall_init(sr, 1, MPI_INT, rr, 1, MPI_INT, ring, MPI_INFO_NULL, &q[0]));
    /* destination 0 gets one int, destination 1 two; a source sends as its destination index */
    MPI_OK(MPI_Neighbor_alltoallv_init(sg, scnt, sdis, MPI_INT, rg, rcnt, rdis, MPI_INT, graph, MPI_INFO_NULL, &q[1]));
    MPI_OK(MPI_Allreduce_init(ain, aout, 2, MPI_LONG, MPI_SUM, ia, MPI_INFO_NULL, &q[2]));
    for (int k = 0; k < 6; k++) {
        sr[0] = rank * 4 + k * 100;
        sr[1] = rank * 4 + 1 + k * 100;
        rr[0] = rr[1] = -1;
        for (int j = 0; j < 3; j++)
            sg[j] = rank * 100 + j + k * 10000;
        rg[0] = rg[1] = rg[2] = -1;
        ain[0] = rank + k;
        ain[1] = 1;
        /* different start orders on different ranks: only the order per communicator counts */
        if (rank % 2)
            MPI_OK(MPI_Startall(3, q));
        else
            for (int i = 2; i >= 0; i--)
                MPI_OK(MPI_Start(&q[i]));
        int b[2] = {rank + 1000 * k, -rank}, br[2] = {-1, -1};
        MPI_OK(MPI_Neighbor_alltoall(b, 1, MPI_INT, br, 1, MPI_INT, ring));
        CHECK(br[0] == -left && br[1] == right + 1000 * k, "blocking ring alltoall between starts got %d %d", br[0], br[1]);
        long x = 1, y = 0;
        MPI_OK(MPI_Allreduce(&x, &y, 1, MPI_LONG, MPI_SUM, ia));
        CHECK(y == rsa, "blocking intercomm allreduce between starts got %ld", y);
        MPI_OK(MPI_Barrier(graph));
        MPI_OK(MPI_Waitall(3, q, MPI_STATUSES_IGNORE));
        CHECK(rr[0] == left * 4 + 1 + k * 100 && rr[1] == right * 4 + k * 100, "persistent ring start %d got %d %d", k, rr[0], rr[1]);
        /* source 0 (r-1) reached us as its destination 0 (its element 0), source 1 (r-3) as its
           destination 1 (its elements 1 and 2) */
        CHECK(rg[0] == gsrc[0] * 100 + k * 10000 && rg[1] == gsrc[1] * 100 + 1 + k * 10000 && rg[2] == gsrc[1] * 100 + 2 + k * 10000,
              "persistent graph start %d got %d %d %d", k, rg[0], rg[1], rg[2]);
        long e = 0;
        for (int j = 0; j < rsa; j++)
            e += a_world(j) + k;
        CHECK(aout[0] == e && aout[1] == rsa, "persistent intercomm allreduce start %d got %ld %ld", k, aout[0], aout[1]);
    }
    for (int i = 0; i < 3; i++)
        MPI_OK(MPI_Request_free(&q[i]));
}

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    h = size / 2;
    MPI_Comm half;
    pa = rank % 2;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, pa, rank, &half));
    MPI_OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - pa, 11, &ia));
    MPI_OK(MPI_Comm_free(&half));
    MPI_OK(MPI_Comm_rank(ia, &lra));
    MPI_OK(MPI_Comm_remote_size(ia, &rsa));
    cb = rank < h ? 0 : 1;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, cb, rank, &half));
    MPI_OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, cb == 0 ? h : 0, 12, &ib));
    MPI_OK(MPI_Comm_free(&half));
    MPI_OK(MPI_Comm_rank(ib, &lrb));
    MPI_OK(MPI_Comm_size(ib, &lsb));
    MPI_OK(MPI_Comm_remote_size(ib, &rsb));
    MPI_OK(MPI_Comm_dup(ia, &ic));
    int dims[1] = {size}, periods[1] = {1};
    MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring));
    MPI_OK(MPI_Cart_shift(ring, 0, 1, &left, &right));
    gsrc[0] = mod(rank - 1);
    gsrc[1] = mod(rank - 3);
    gdst[0] = mod(rank + 1);
    gdst[1] = mod(rank + 3);
    MPI_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, gsrc, MPI_UNWEIGHTED, 2, gdst, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &graph));

    int alone = alone_in_process(), before = threads();
    static struct op ops[MAXOPS];
    int n = 0, next[NCOMM] = {0}, total[NCOMM];
    for (int c = 0; c < NCOMM; c++)
        total[c] = nkinds[c] * ITERS;
    /* a rank's own interleaving of the five sequences */
    uint64_t seed = 0x9e3779b97f4a7c15ull * (uint64_t)(rank + 1);
    for (;;) {
        int left_ops = 0;
        for (int c = 0; c < NCOMM; c++)
            left_ops += total[c] - next[c];
        if (!left_ops)
            break;
        int c = (int)(oxt_rand(&seed) % NCOMM);
        while (next[c] == total[c])
            c = (c + 1) % NCOMM;
        struct op *o = &ops[n++];
        o->comm = c;
        o->kind = next[c] % nkinds[c];
        o->it = next[c] / nkinds[c];
        next[c]++;
        start(o);
    }
    if (alone && before > 0) {
        int during = threads();
        CHECK(during <= before, "%d threads with nonblocking collectives outstanding, %d before: a thread per communicator?", during, before);
    }
    /* blocking collectives on the same communicators while those are outstanding */
    long one = 1, got = 0;
    MPI_OK(MPI_Allreduce(&one, &got, 1, MPI_LONG, MPI_SUM, ib));
    CHECK(got == rsb, "blocking allreduce on B got %ld", got);
    int nb[2] = {-1, -1};
    MPI_OK(MPI_Neighbor_allgather(&rank, 1, MPI_INT, nb, 1, MPI_INT, graph));
    CHECK(nb[0] == gsrc[0] && nb[1] == gsrc[1], "blocking graph allgather got %d %d", nb[0], nb[1]);
    MPI_OK(MPI_Barrier(ic));
    MPI_Request reqs[MAXOPS];
    for (int i = 0; i < n; i++)
        reqs[i] = ops[i].req;
    MPI_OK(MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE));
    for (int i = 0; i < n; i++)
        verify(&ops[i]);

    persistent();
    MPI_OK(MPI_Comm_free(&graph));
    MPI_OK(MPI_Comm_free(&ring));
    MPI_OK(MPI_Comm_free(&ic));
    MPI_OK(MPI_Comm_free(&ib));
    MPI_OK(MPI_Comm_free(&ia));
    MPI_Finalize();
    return 0;
}
