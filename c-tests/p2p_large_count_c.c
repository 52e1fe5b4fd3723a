/* oxmpi-test: ranks=2,4 */
/* The large-count (_c) point-to-point functions, counts as MPI_Count: MPI_Send_c / MPI_Recv_c
   (with a derived datatype on the sending side), MPI_Isend_c / MPI_Irecv_c, the modes MPI_Ssend_c,
   MPI_Bsend_c, MPI_Rsend_c and their nonblocking forms, MPI_Sendrecv_c and
   MPI_Sendrecv_replace_c, the persistent MPI_Send_init_c / MPI_Ssend_init_c / MPI_Bsend_init_c /
   MPI_Rsend_init_c / MPI_Recv_init_c, MPI_Buffer_attach_c / MPI_Buffer_detach_c, MPI_Mrecv_c and MPI_Imrecv_c, and MPI_Get_count_c on their
   statuses. Ranks work in pairs (rank ^ 1). Under MPI_ERRORS_RETURN a negative count is
   MPI_ERR_COUNT in every family. */
#include <string.h>
#include "oxtest.h"

#define N 1000

static int rank, peer;

static void fill(int *b, MPI_Count n, int seed)
{
    for (MPI_Count i = 0; i < n; i++)
        b[i] = seed * 100000 + (int)i;
}

static void verify(const int *b, MPI_Count n, int seed, int line)
{
    for (MPI_Count i = 0; i < n; i++)
        CHECK(b[i] == seed * 100000 + (int)i, "line %d: element %lld is %d, expected %d", line, (long long)i, b[i], seed * 100000 + (int)i);
}

static void check_count(const MPI_Status *st, MPI_Datatype t, MPI_Count want, int line)
{
    MPI_Count c = -1;
    MPI_OK(MPI_Get_count_c(st, t, &c));
    CHECK(c == want, "line %d: MPI_Get_count_c gives %lld, expected %lld", line, (long long)c, (long long)want);
    CHECK(st->MPI_SOURCE == peer, "line %d: status source %d, expected %d", line, st->MPI_SOURCE, peer);
}

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    peer = rank ^ 1;
    const int lower = rank < peer;
    const MPI_Count n = N;
    int *sb = oxt_malloc(4 * N * sizeof(int)), *rb = oxt_malloc(4 * N * sizeof(int));
    MPI_Status st;
    MPI_Request rq[2];

    /* Blocking, both directions in turn. */
    fill(sb, n, rank + 1);
    memset(rb, 0, N * sizeof(int));
    if (lower) {
        MPI_OK(MPI_Send_c(sb, n, MPI_INT, peer, 1, MPI_COMM_WORLD));
        MPI_OK(MPI_Recv_c(rb, n, MPI_INT, peer, 2, MPI_COMM_WORLD, &st));
    } else {
        MPI_OK(MPI_Recv_c(rb, n, MPI_INT, peer, 1, MPI_COMM_WORLD, &st));
        MPI_OK(MPI_Send_c(sb, n, MPI_INT, peer, 2, MPI_COMM_WORLD));
    }
    check_count(&st, MPI_INT, n, __LINE__);
    verify(rb, n, peer + 1, __LINE__);

    /* A derived datatype: 250 vectors of 2 blocks of 2 ints at a stride of 4 go as 1000 ints. */
    MPI_Datatype vec;
    MPI_OK(MPI_Type_vector(2, 2, 4, MPI_INT, &vec));
    MPI_Datatype vecr;
    MPI_OK(MPI_Type_create_resized(vec, 0, 8 * sizeof(int), &vecr));
    MPI_OK(MPI_Type_commit(&vecr));
    fill(sb, 4 * n, rank + 7);
    memset(rb, 0, N * sizeof(int));
    MPI_OK(MPI_Irecv_c(rb, n, MPI_INT, peer, 3, MPI_COMM_WORLD, &rq[0]));
    MPI_OK(MPI_Isend_c(sb, n / 4, vecr, peer, 3, MPI_COMM_WORLD, &rq[1]));
    MPI_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    for (int i = 0; i < N; i++) {
        int j = (i / 4) * 8 + (i % 4 < 2 ? i % 4 : i % 4 + 2);
        CHECK(rb[i] == (peer + 7) * 100000 + j, "vector element %d is %d, expected %d", i, rb[i], (peer + 7) * 100000 + j);
    }
    /* And back into the derived type: the gaps stay untouched. */
    for (int i = 0; i < 4 * N; i++)
        rb[i] = -1;
    fill(sb, n, rank + 9);
    MPI_OK(MPI_Irecv_c(rb, n / 4, vecr, peer, 4, MPI_COMM_WORLD, &rq[0]));
    MPI_OK(MPI_Isend_c(sb, n, MPI_INT, peer, 4, MPI_COMM_WORLD, &rq[1]));
    MPI_OK(MPI_Wait(&rq[0], &st));
    MPI_OK(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
    check_count(&st, vecr, n / 4, __LINE__);
    for (int i = 0, k = 0; i < 2 * N; i++) {
        if (i % 8 == 2 || i % 8 == 3 || i % 8 >= 6) {
            CHECK(rb[i] == -1, "gap %d was written (%d)", i, rb[i]);
        } else {
            CHECK(rb[i] == (peer + 9) * 100000 + k, "typed element %d is %d, expected %d", i, rb[i], (peer + 9) * 100000 + k);
            k++;
        }
    }

    /* The modes, blocking and nonblocking: the receive is posted before the ready send. */
    MPI_Count bufsize = 4 * (N * (MPI_Count)sizeof(int) + MPI_BSEND_OVERHEAD);
    void *bbuf = oxt_malloc((size_t)bufsize);
    MPI_OK(MPI_Buffer_attach_c(bbuf, bufsize));
    for (int mode = 0; mode < 6; mode++) {
        fill(sb, n, rank + 20 + mode);
        memset(rb, 0, N * sizeof(int));
        MPI_OK(MPI_Irecv_c(rb, n, MPI_INT, peer, 10 + mode, MPI_COMM_WORLD, &rq[0]));
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        switch (mode) {
        case 0: MPI_OK(MPI_Ssend_c(sb, n, MPI_INT, peer, 10, MPI_COMM_WORLD)); rq[1] = MPI_REQUEST_NULL; break;
        case 1: MPI_OK(MPI_Bsend_c(sb, n, MPI_INT, peer, 11, MPI_COMM_WORLD)); rq[1] = MPI_REQUEST_NULL; break;
        case 2: MPI_OK(MPI_Rsend_c(sb, n, MPI_INT, peer, 12, MPI_COMM_WORLD)); rq[1] = MPI_REQUEST_NULL; break;
        case 3: MPI_OK(MPI_Issend_c(sb, n, MPI_INT, peer, 13, MPI_COMM_WORLD, &rq[1])); break;
        case 4: MPI_OK(MPI_Ibsend_c(sb, n, MPI_INT, peer, 14, MPI_COMM_WORLD, &rq[1])); break;
        default: MPI_OK(MPI_Irsend_c(sb, n, MPI_INT, peer, 15, MPI_COMM_WORLD, &rq[1])); break;
        }
        MPI_OK(MPI_Wait(&rq[0], &st));
        MPI_OK(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
        check_count(&st, MPI_INT, n, __LINE__);
        verify(rb, n, peer + 20 + mode, __LINE__);
    }

    /* Sendrecv and Sendrecv_replace. */
    fill(sb, n, rank + 30);
    memset(rb, 0, N * sizeof(int));
    MPI_OK(MPI_Sendrecv_c(sb, n, MPI_INT, peer, 30, rb, n, MPI_INT, peer, 30, MPI_COMM_WORLD, &st));
    check_count(&st, MPI_INT, n, __LINE__);
    verify(rb, n, peer + 30, __LINE__);
    fill(rb, n, rank + 31);
    MPI_OK(MPI_Sendrecv_replace_c(rb, n, MPI_INT, peer, 31, peer, 31, MPI_COMM_WORLD, &st));
    check_count(&st, MPI_INT, n, __LINE__);
    verify(rb, n, peer + 31, __LINE__);

    /* Persistent requests in every mode, each started twice. */
    for (int mode = 0; mode < 4; mode++) {
        MPI_Request ps, pr;
        MPI_OK(MPI_Recv_init_c(rb, n, MPI_INT, peer, 40 + mode, MPI_COMM_WORLD, &pr));
        switch (mode) {
        case 0: MPI_OK(MPI_Send_init_c(sb, n, MPI_INT, peer, 40, MPI_COMM_WORLD, &ps)); break;
        case 1: MPI_OK(MPI_Ssend_init_c(sb, n, MPI_INT, peer, 41, MPI_COMM_WORLD, &ps)); break;
        case 2: MPI_OK(MPI_Bsend_init_c(sb, n, MPI_INT, peer, 42, MPI_COMM_WORLD, &ps)); break;
        default: MPI_OK(MPI_Rsend_init_c(sb, n, MPI_INT, peer, 43, MPI_COMM_WORLD, &ps)); break;
        }
        for (int round = 0; round < 2; round++) {
            fill(sb, n, rank + 50 + 2 * mode + round);
            memset(rb, 0, N * sizeof(int));
            MPI_OK(MPI_Start(&pr));
            MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
            MPI_OK(MPI_Start(&ps));
            MPI_OK(MPI_Wait(&pr, &st));
            MPI_OK(MPI_Wait(&ps, MPI_STATUS_IGNORE));
            check_count(&st, MPI_INT, n, __LINE__);
            verify(rb, n, peer + 50 + 2 * mode + round, __LINE__);
        }
        MPI_OK(MPI_Request_free(&pr));
        MPI_OK(MPI_Request_free(&ps));
    }
    void *detached;
    MPI_Count detached_size;
    MPI_OK(MPI_Buffer_detach_c(&detached, &detached_size));
    CHECK(detached == bbuf && detached_size == bufsize, "MPI_Buffer_detach_c gives %p and %lld", detached, (long long)detached_size);
    free(bbuf);

    /* Matched probes: MPI_Mrecv_c, then MPI_Imrecv_c. */
    for (int k = 0; k < 2; k++) {
        fill(sb, n, rank + 60 + k);
        memset(rb, 0, N * sizeof(int));
        MPI_OK(MPI_Isend_c(sb, n, MPI_INT, peer, 60 + k, MPI_COMM_WORLD, &rq[1]));
        MPI_Message msg;
        MPI_OK(MPI_Mprobe(peer, 60 + k, MPI_COMM_WORLD, &msg, &st));
        check_count(&st, MPI_INT, n, __LINE__);
        if (k == 0) {
            MPI_OK(MPI_Mrecv_c(rb, n, MPI_INT, &msg, &st));
        } else {
            MPI_OK(MPI_Imrecv_c(rb, n, MPI_INT, &msg, &rq[0]));
            MPI_OK(MPI_Wait(&rq[0], &st));
        }
        CHECK(msg == MPI_MESSAGE_NULL, "the message handle is not MPI_MESSAGE_NULL after the receive");
        check_count(&st, MPI_INT, n, __LINE__);
        verify(rb, n, peer + 60 + k, __LINE__);
        MPI_OK(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
    }

    /* Negative counts are MPI_ERR_COUNT in every family. */
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_Request r = MPI_REQUEST_NULL;
    CHECK_CLASS(MPI_Send_c(sb, -1, MPI_INT, peer, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Ssend_c(sb, -2, MPI_INT, peer, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Recv_c(rb, -1, MPI_INT, peer, 0, MPI_COMM_WORLD, &st), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Isend_c(sb, -1, MPI_INT, peer, 0, MPI_COMM_WORLD, &r), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Irecv_c(rb, -5, MPI_INT, peer, 0, MPI_COMM_WORLD, &r), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Send_init_c(sb, -1, MPI_INT, peer, 0, MPI_COMM_WORLD, &r), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Recv_init_c(rb, -1, MPI_INT, peer, 0, MPI_COMM_WORLD, &r), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Sendrecv_c(sb, n, MPI_INT, peer, 0, rb, -1, MPI_INT, peer, 0, MPI_COMM_WORLD, &st), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Sendrecv_replace_c(rb, -1, MPI_INT, peer, 0, peer, 0, MPI_COMM_WORLD, &st), MPI_ERR_COUNT);
    CHECK(r == MPI_REQUEST_NULL, "a failed call wrote a request");

    MPI_OK(MPI_Type_free(&vec));
    MPI_OK(MPI_Type_free(&vecr));
    free(sb);
    free(rb);
    MPI_OK(MPI_Finalize());
    return 0;
}
