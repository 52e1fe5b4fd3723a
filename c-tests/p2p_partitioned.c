/* oxmpi-test: ranks=2,4,8 timeout=60 */
/* Partitioned communication (MPI 4.1 chapter 4): MPI_Psend_init / MPI_Precv_init between the
   ranks of each pair (even rank sends), with equal and different partition counts on the two
   sides, partitions made ready in reverse and random order, with MPI_Pready_range and
   MPI_Pready_list, large partitions, derived datatypes on both sides, several requests started
   with MPI_Startall, the same requests restarted several times; MPI_Parrived polled while the
   sender holds back the other partitions (a partition arrives before all are ready); the
   completed receive's status; errors under MPI_ERRORS_RETURN. */
#include "oxtest.h"

#define ITERS 4

static int rank, size, peer, sender;

static int value(int iter, int tag, long k)
{
    return iter * 1000003 + tag * 7919 + (int)k;
}

#ifndef OXT_PART_EARLY
/* One transfer of sparts x scount ints into rparts x rcount ints, readying the partitions in
   the order `order` (0: ascending, 1: reverse, 2: random, 3: ranges and lists). */
static void transfer(int tag, int sparts, int scount, int rparts, int rcount, int order)
{
    long n = (long)sparts * scount;
    int *buf = oxt_malloc((size_t)n * sizeof(int));
    MPI_Request req;
    uint64_t seed = 0x9e3779b97f4a7c15ULL ^ (uint64_t)(tag * 131 + rank);
    CHECK(n == (long)rparts * rcount, "bad case %d", tag);
    if (sender)
        MPI_OK(MPI_Psend_init(buf, sparts, scount, MPI_INT, peer, tag, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
    else
        MPI_OK(MPI_Precv_init(buf, rparts, rcount, MPI_INT, peer, tag, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
    for (int it = 0; it < ITERS; it++) {
        MPI_Status st;
        if (sender) {
            int *perm = oxt_malloc((size_t)sparts * sizeof(int));
            for (long k = 0; k < n; k++)
                buf[k] = value(it, tag, k);
            MPI_OK(MPI_Start(&req));
            for (int i = 0; i < sparts; i++)
                perm[i] = order == 1 ? sparts - 1 - i : i;
            if (order == 2)
                for (int i = sparts - 1; i > 0; i--) {
                    int j = (int)(oxt_rand(&seed) % (uint64_t)(i + 1)), t = perm[i];
                    perm[i] = perm[j];
                    perm[j] = t;
                }
            if (order == 3 && sparts >= 4) {
                /* [1, h) as a range, then the odd ones of [h, sparts) as a list, then partition 0
                   and the even ones of [h, sparts) as a list. */
                int h = sparts / 2, m = 0;
                MPI_OK(MPI_Pready_range(1, h - 1, req));
                for (int i = h; i < sparts; i++)
                    if (i % 2)
                        perm[m++] = i;
                MPI_OK(MPI_Pready_list(m, perm, req));
                m = 0;
                perm[m++] = 0;
                for (int i = h; i < sparts; i++)
                    if (i % 2 == 0)
                        perm[m++] = i;
                MPI_OK(MPI_Pready_list(m, perm, req));
            } else {
                for (int i = 0; i < sparts; i++)
                    MPI_OK(MPI_Pready(perm[i], req));
            }
            MPI_OK(MPI_Wait(&req, &st));
            CHECK(req != MPI_REQUEST_NULL, "a completed partitioned request must stay allocated");
            free(perm);
        } else {
            for (long k = 0; k < n; k++)
                buf[k] = -1;
            MPI_OK(MPI_Start(&req));
            MPI_OK(MPI_Wait(&req, &st));
            CHECK(req != MPI_REQUEST_NULL, "a completed partitioned request must stay allocated");
            CHECK_STATUS(st, peer, tag, MPI_INT, (int)n);
            for (long k = 0; k < n; k++)
                CHECK(buf[k] == value(it, tag, k), "case %d iter %d: element %ld is %d, expected %d", tag, it, k, buf[k], value(it, tag, k));
        }
    }
    MPI_OK(MPI_Request_free(&req));
    CHECK(req == MPI_REQUEST_NULL, "MPI_Request_free must null the handle");
    free(buf);
}

#endif

/* MPI_Parrived polled while the sender readies its partitions a few at a time. With `hold`, the
   sender readies only its partitions 0 and 1 (the receiver's partition 0), then waits until the
   receiver has seen that partition arrive before readying the rest: the partition must move
   before all are ready. The standard does not promise that (MPICH moves the data once all
   partitions are ready), so p2p_partitioned_early runs that form, on oxmpi only. */
static void early_arrival(int hold)
{
    enum { SP = 8, SC = 1000, RP = 4, RC = 2000, TAG = 40 };
    double *buf = oxt_malloc(SP * SC * sizeof(double));
    MPI_Request req;
    int dummy = 0;
    if (sender) {
        MPI_OK(MPI_Psend_init(buf, SP, SC, MPI_DOUBLE, peer, TAG, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
        for (int it = 0; it < ITERS; it++) {
            for (int k = 0; k < SP * SC; k++)
                buf[k] = it + k * 0.5;
            MPI_OK(MPI_Start(&req));
            MPI_OK(MPI_Pready(1, req));
            MPI_OK(MPI_Pready(0, req));
            /* The receiver tells when it saw its partition 0 (our 0 and 1) arrive. */
            if (hold)
                MPI_OK(MPI_Recv(&dummy, 0, MPI_INT, peer, TAG + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            MPI_OK(MPI_Pready_range(2, SP - 1, req));
            if (!hold)
                MPI_OK(MPI_Recv(&dummy, 0, MPI_INT, peer, TAG + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        }
    } else {
        MPI_OK(MPI_Precv_init(buf, RP, RC, MPI_DOUBLE, peer, TAG, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
        for (int it = 0; it < ITERS; it++) {
            int flag = 0;
            MPI_Request ack;
            MPI_Status st;
            for (int k = 0; k < SP * SC; k++)
                buf[k] = -1;
            MPI_OK(MPI_Start(&req));
            while (!flag)
                MPI_OK(MPI_Parrived(req, 0, &flag));
            for (int k = 0; k < RC; k++)
                CHECK(buf[k] == it + k * 0.5, "iter %d: arrived element %d is %g", it, k, buf[k]);
            for (int i = 1; i < RP && hold; i++) {
                MPI_OK(MPI_Parrived(req, i, &flag));
                CHECK(!flag, "iter %d: partition %d arrived before the sender made it ready", it, i);
            }
            MPI_OK(MPI_Isend(&dummy, 0, MPI_INT, peer, TAG + 1, MPI_COMM_WORLD, &ack));
            for (int i = RP - 1; i >= 0; i--) {
                flag = 0;
                while (!flag)
                    MPI_OK(MPI_Parrived(req, i, &flag));
            }
            MPI_OK(MPI_Wait(&req, &st));
            MPI_OK(MPI_Wait(&ack, MPI_STATUS_IGNORE));
            CHECK_STATUS(st, peer, TAG, MPI_DOUBLE, SP * SC);
            for (int k = 0; k < SP * SC; k++)
                CHECK(buf[k] == it + k * 0.5, "iter %d: element %d is %g", it, k, buf[k]);
        }
    }
    MPI_OK(MPI_Request_free(&req));
    free(buf);
}

#ifdef OXT_PART_EARLY
/* MPI_Cancel of a started partitioned receive of which nothing has arrived cancels it (oxmpi; the
   standard lets a cancel fail): the sender's partitions then go to the next activation. */
static void cancel_untouched(void)
{
    enum { TAG = 70, P = 4, C = 5 };
    int buf[P * C], dummy = 0, flag = 0;
    MPI_Request req;
    MPI_Status st;
    if (sender) {
        MPI_OK(MPI_Psend_init(buf, P, C, MPI_INT, peer, TAG, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
        for (int k = 0; k < P * C; k++)
            buf[k] = value(9, TAG, k);
        /* start only once the receiver has cancelled its first activation */
        MPI_OK(MPI_Recv(&dummy, 0, MPI_INT, peer, TAG + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Start(&req));
        MPI_OK(MPI_Pready_range(0, P - 1, req));
        MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    } else {
        MPI_OK(MPI_Precv_init(buf, P, C, MPI_INT, peer, TAG, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
        MPI_OK(MPI_Start(&req));
        MPI_OK(MPI_Cancel(&req));
        MPI_OK(MPI_Wait(&req, &st));
        MPI_OK(MPI_Test_cancelled(&st, &flag));
        CHECK(flag, "the untouched partitioned receive was not cancelled");
        MPI_OK(MPI_Send(&dummy, 0, MPI_INT, peer, TAG + 1, MPI_COMM_WORLD));
        MPI_OK(MPI_Start(&req));
        MPI_OK(MPI_Wait(&req, &st));
        MPI_OK(MPI_Test_cancelled(&st, &flag));
        CHECK(!flag, "the second activation must complete normally");
        CHECK_STATUS(st, peer, TAG, MPI_INT, P * C);
        for (int k = 0; k < P * C; k++)
            CHECK(buf[k] == value(9, TAG, k), "element %d is %d", k, buf[k]);
    }
    MPI_OK(MPI_Request_free(&req));
}
#else
/* Derived datatypes: the sender's partitions are 2 elements of a strided type (6 ints), the
   receiver's 3 elements of another (8 ints each: receive elements straddle send partitions). */
static void derived(void)
{
    enum { TAG = 50, SP = 4, SCOUNT = 2, RP = 2, RCOUNT = 3, NINT = SP * SCOUNT * 6 };
    MPI_Datatype st, rt;
    MPI_OK(MPI_Type_vector(2, 3, 5, MPI_INT, &st)); /* 6 ints over an extent of 8 */
    MPI_OK(MPI_Type_commit(&st));
    MPI_OK(MPI_Type_vector(8, 1, 2, MPI_INT, &rt)); /* 8 ints over an extent of 15 */
    MPI_OK(MPI_Type_commit(&rt));
    MPI_Aint lb, sext, rext;
    MPI_OK(MPI_Type_get_extent(st, &lb, &sext));
    MPI_OK(MPI_Type_get_extent(rt, &lb, &rext));
    size_t slen = (size_t)(SP * SCOUNT) * (size_t)sext / sizeof(int), rlen = (size_t)(RP * RCOUNT) * (size_t)rext / sizeof(int);
    int *buf = oxt_malloc((sender ? slen : rlen) * sizeof(int));
    MPI_Request req;
    if (sender)
        MPI_OK(MPI_Psend_init(buf, SP, SCOUNT, st, peer, TAG, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
    else
        MPI_OK(MPI_Precv_init(buf, RP, RCOUNT, rt, peer, TAG, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
    for (int it = 0; it < ITERS; it++) {
        if (sender) {
            /* the k-th int of the typemap gets value(it, TAG, k); the holes -5 */
            long k = 0;
            for (size_t i = 0; i < slen; i++)
                buf[i] = -5;
            for (int e = 0; e < SP * SCOUNT; e++)
                for (int b = 0; b < 2; b++)
                    for (int j = 0; j < 3; j++)
                        buf[(size_t)e * (size_t)sext / sizeof(int) + (size_t)(b * 5 + j)] = value(it, TAG, k++);
            MPI_OK(MPI_Start(&req));
            for (int i = SP - 1; i >= 0; i--)
                MPI_OK(MPI_Pready(i, req));
            MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        } else {
            MPI_Status s;
            long k = 0;
            for (size_t i = 0; i < rlen; i++)
                buf[i] = -1;
            MPI_OK(MPI_Start(&req));
            MPI_OK(MPI_Wait(&req, &s));
            CHECK_STATUS(s, peer, TAG, rt, RP * RCOUNT);
            for (int e = 0; e < RP * RCOUNT; e++)
                for (int j = 0; j < 15; j++) {
                    int got = buf[(size_t)e * (size_t)rext / sizeof(int) + (size_t)j];
                    if (j % 2 == 0) {
                        CHECK(got == value(it, TAG, k), "iter %d: typemap int %ld is %d", it, k, got);
                        k++;
                    } else {
                        CHECK(got == -1, "iter %d: hole %d of element %d written (%d)", it, j, e, got);
                    }
                }
        }
    }
    MPI_OK(MPI_Request_free(&req));
    MPI_OK(MPI_Type_free(&st));
    MPI_OK(MPI_Type_free(&rt));
    free(buf);
}

/* Three partitioned requests started together, each restarted. */
static void startall(void)
{
    enum { NR = 3 };
    static const int parts[NR] = {3, 5, 2}, count[NR] = {7, 1, 20000};
    int *buf[NR];
    MPI_Request req[NR];
    MPI_Status st[NR];
    for (int r = 0; r < NR; r++) {
        buf[r] = oxt_malloc((size_t)parts[r] * (size_t)count[r] * sizeof(int));
        if (sender)
            MPI_OK(MPI_Psend_init(buf[r], parts[r], count[r], MPI_INT, peer, 60 + r, MPI_COMM_WORLD, MPI_INFO_NULL, &req[r]));
        else
            MPI_OK(MPI_Precv_init(buf[r], parts[r], count[r], MPI_INT, peer, 60 + r, MPI_COMM_WORLD, MPI_INFO_NULL, &req[r]));
    }
    for (int it = 0; it < ITERS; it++) {
        for (int r = 0; r < NR; r++)
            for (long k = 0; k < (long)parts[r] * count[r]; k++)
                buf[r][k] = sender ? value(it, 60 + r, k) : -1;
        MPI_OK(MPI_Startall(NR, req));
        if (sender)
            for (int r = NR - 1; r >= 0; r--)
                MPI_OK(MPI_Pready_range(0, parts[r] - 1, req[r]));
        MPI_OK(MPI_Waitall(NR, req, st));
        if (!sender)
            for (int r = 0; r < NR; r++) {
                CHECK_STATUS(st[r], peer, 60 + r, MPI_INT, parts[r] * count[r]);
                for (long k = 0; k < (long)parts[r] * count[r]; k++)
                    CHECK(buf[r][k] == value(it, 60 + r, k), "request %d iter %d: element %ld is %d", r, it, k, buf[r][k]);
            }
    }
    for (int r = 0; r < NR; r++) {
        MPI_OK(MPI_Request_free(&req[r]));
        free(buf[r]);
    }
}

/* Erroneous calls on a request pair to oneself, which still completes afterwards. */
static void errors(void)
{
    int a[8], b[8], flag;
    MPI_Request s, r, bad = MPI_REQUEST_NULL;
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    CHECK_CLASS(MPI_Psend_init(a, 0, 1, MPI_INT, 0, 1, MPI_COMM_SELF, MPI_INFO_NULL, &bad), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Psend_init(a, 2, -1, MPI_INT, 0, 1, MPI_COMM_SELF, MPI_INFO_NULL, &bad), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Psend_init(a, 2, 1, MPI_DATATYPE_NULL, 0, 1, MPI_COMM_SELF, MPI_INFO_NULL, &bad), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Psend_init(a, 2, 1, MPI_INT, 1, 1, MPI_COMM_SELF, MPI_INFO_NULL, &bad), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Psend_init(a, 2, 1, MPI_INT, 0, -3, MPI_COMM_SELF, MPI_INFO_NULL, &bad), MPI_ERR_TAG);
    CHECK_CLASS(MPI_Psend_init(a, 2, 1, MPI_INT, 0, 1, MPI_COMM_NULL, MPI_INFO_NULL, &bad), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Precv_init(b, -1, 1, MPI_INT, 0, 1, MPI_COMM_SELF, MPI_INFO_NULL, &bad), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Precv_init(b, 2, 1, MPI_INT, size, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &bad), MPI_ERR_RANK);
    CHECK(bad == MPI_REQUEST_NULL, "a failed initialization must not create a request");

    MPI_OK(MPI_Psend_init(a, 4, 2, MPI_INT, 0, 5, MPI_COMM_SELF, MPI_INFO_NULL, &s));
    MPI_OK(MPI_Precv_init(b, 2, 4, MPI_INT, 0, 5, MPI_COMM_SELF, MPI_INFO_NULL, &r));
    for (int i = 0; i < 8; i++)
        a[i] = 100 + i, b[i] = -1;
    /* inactive send request */
    CHECK(MPI_Pready(0, s) != MPI_SUCCESS, "MPI_Pready on an inactive request must fail");
    MPI_OK(MPI_Start(&r));
    MPI_OK(MPI_Start(&s));
    CHECK_CLASS(MPI_Start(&s), MPI_ERR_REQUEST);
    CHECK(MPI_Pready(4, s) != MPI_SUCCESS, "MPI_Pready of partition 4 of 4 must fail");
    CHECK(MPI_Pready(-1, s) != MPI_SUCCESS, "MPI_Pready of partition -1 must fail");
    CHECK(MPI_Parrived(r, 2, &flag) != MPI_SUCCESS, "MPI_Parrived of partition 2 of 2 must fail");
    MPI_OK(MPI_Parrived(r, 0, &flag));
    CHECK(!flag, "nothing is ready yet");
    MPI_OK(MPI_Pready_list(2, (int[]){3, 1}, s));
    MPI_OK(MPI_Pready_range(0, 0, s));
    MPI_OK(MPI_Pready(2, s));
    MPI_OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    for (int i = 0; i < 8; i++)
        CHECK(b[i] == 100 + i, "element %d is %d", i, b[i]);
    MPI_OK(MPI_Request_free(&s));
    MPI_OK(MPI_Request_free(&r));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));
}

#endif

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    peer = rank ^ 1;
    sender = (rank & 1) == 0;
#ifdef OXT_PART_EARLY
    if (peer < size) {
        early_arrival(1);
        cancel_untouched();
    }
#else
    errors();
    if (peer < size) {
        transfer(1, 8, 3, 8, 3, 1);       /* equal partitions, reverse order */
        transfer(2, 6, 10, 4, 15, 2);     /* more send partitions, random order */
        transfer(3, 3, 20, 12, 5, 0);     /* fewer send partitions */
        transfer(4, 10, 4, 5, 8, 3);      /* ranges and lists */
        transfer(5, 4, 50000, 8, 25000, 2); /* large partitions */
        transfer(6, 1, 0, 3, 0, 0);       /* empty */
        early_arrival(0);
        derived();
        startall();
    }
#endif
    MPI_OK(MPI_Finalize());
    return 0;
}
