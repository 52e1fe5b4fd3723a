/* oxmpi-test: ranks=2,4 timeout=60 */
/* Non-contiguous derived datatypes in nonblocking, persistent and matched-probe point-to-point:
   Isend/Irecv of vector and struct types (eager and rendezvous sizes) with several requests
   outstanding, completed by MPI_Waitall, MPI_Waitany and MPI_Testsome; MPI_Request_get_status;
   persistent Send_init/Recv_init of a vector restarted 3 times with the send buffer changed in
   between; MPI_Improbe + MPI_Imrecv and MPI_Mprobe + MPI_Mrecv into a vector; MPI_Sendrecv_replace
   with a vector; a truncated non-contiguous receive (MPI_ERR_TRUNCATE, nothing written outside
   the typemap); MPI_Cancel of a posted non-contiguous
   receive; MPI_Request_free of an active non-contiguous send. Gaps of receive buffers must stay
   untouched. Ranks work in pairs (rank ^ 1). */
#include "oxtest.h"
#include <stddef.h>

#define VB 4      /* vector: blocks */
#define VL 2      /* ints per block */
#define VS 5      /* stride in ints */
#define VEXT 17   /* extent of one vector element in ints: (VB-1)*VS+VL */
#define SENT (-7) /* gap sentinel */

typedef struct {
    int a;
    double b;
    char c[3];
} rec_t;

static MPI_Datatype vec, srec;
static int rank, peer;

static int vval(int who, int salt, int i) { return who * 100000 + salt * 1000 + i; }

/* Fills the data positions of `n` vector elements with values for (who, salt); gaps get SENT. */
static void vfill(int *b, int n, int who, int salt)
{
    for (int e = 0; e < n; e++)
        for (int j = 0; j < VEXT; j++) {
            int pos = e * VEXT + j;
            b[pos] = (j % VS) < VL ? vval(who, salt, pos) : SENT;
        }
}

/* Checks the first `ndata` vector elements hold (who, salt) data and every gap is SENT; elements
   from ndata to n must be all SENT. */
static void vcheck(const int *b, int n, int ndata, int who, int salt, const char *what)
{
    for (int e = 0; e < n; e++)
        for (int j = 0; j < VEXT; j++) {
            int pos = e * VEXT + j;
            int want = (e < ndata && (j % VS) < VL) ? vval(who, salt, pos) : SENT;
            CHECK(b[pos] == want, "%s: element %d int %d is %d, expected %d", what, e, j, b[pos], want);
        }
}

static void sfill(rec_t *r, int n, int who, int salt)
{
    memset(r, 0x5a, sizeof(rec_t) * (size_t)n);
    for (int i = 0; i < n; i++) {
        r[i].a = vval(who, salt, i);
        r[i].b = 0.5 * vval(who, salt, i);
        r[i].c[0] = (char)('a' + i % 26);
        r[i].c[1] = (char)who;
        r[i].c[2] = (char)salt;
    }
}

static void sclear(rec_t *r, int n) { memset(r, 0x5a, sizeof(rec_t) * (size_t)n); }

static void scheck(const rec_t *r, int n, int who, int salt, const char *what)
{
    rec_t ref[64];
    sfill(ref, n, who, salt);
    for (int i = 0; i < n; i++)
        CHECK(r[i].a == ref[i].a && r[i].b == ref[i].b && memcmp(r[i].c, ref[i].c, 3) == 0, "%s: record %d differs", what, i);
}

enum { NSMALL = 3, NBIG = 2500, NREC = 40 };

static void round_trip(int how)
{
    int *vs_small = oxt_malloc(sizeof(int) * NSMALL * VEXT), *vr_small = oxt_malloc(sizeof(int) * NSMALL * VEXT);
    int *vs_big = oxt_malloc(sizeof(int) * NBIG * VEXT), *vr_big = oxt_malloc(sizeof(int) * NBIG * VEXT);
    rec_t ss[NREC], sr[NREC];
    MPI_Request req[6];
    vfill(vs_small, NSMALL, rank, how);
    vfill(vs_big, NBIG, rank, 10 + how);
    sfill(ss, NREC, rank, 20 + how);
    for (int i = 0; i < NSMALL * VEXT; i++)
        vr_small[i] = SENT;
    for (int i = 0; i < NBIG * VEXT; i++)
        vr_big[i] = SENT;
    sclear(sr, NREC);
    MPI_OK(MPI_Irecv(vr_small, NSMALL, vec, peer, 1, MPI_COMM_WORLD, &req[0]));
    MPI_OK(MPI_Irecv(vr_big, NBIG, vec, peer, 2, MPI_COMM_WORLD, &req[1]));
    MPI_OK(MPI_Irecv(sr, NREC, srec, peer, 3, MPI_COMM_WORLD, &req[2]));
    MPI_OK(MPI_Isend(vs_small, NSMALL, vec, peer, 1, MPI_COMM_WORLD, &req[3]));
    MPI_OK(MPI_Isend(vs_big, NBIG, vec, peer, 2, MPI_COMM_WORLD, &req[4]));
    MPI_OK(MPI_Isend(ss, NREC, srec, peer, 3, MPI_COMM_WORLD, &req[5]));
    /* The send buffers may be reused once the sends complete; scribble on them right away then. */
    if (how == 0) {
        MPI_Status st[6];
        MPI_OK(MPI_Waitall(6, req, st));
        int c;
        MPI_OK(MPI_Get_count(&st[1], vec, &c));
        CHECK(c == NBIG, "Get_count of the big vector receive is %d", c);
        MPI_OK(MPI_Get_count(&st[2], srec, &c));
        CHECK(c == NREC, "Get_count of the struct receive is %d", c);
    } else if (how == 1) {
        for (int k = 0; k < 6; k++) {
            int idx;
            MPI_Status st;
            MPI_OK(MPI_Waitany(6, req, &idx, &st));
            CHECK(idx >= 0 && idx < 6 && req[idx] == MPI_REQUEST_NULL, "Waitany index %d", idx);
            if (idx >= 3)
                vfill(idx == 3 ? vs_small : vs_big, idx == 3 ? NSMALL : (idx == 4 ? NBIG : 0), -1, 0);
        }
    } else {
        int left = 6;
        while (left > 0) {
            int out, idx[6];
            MPI_Status st[6];
            MPI_OK(MPI_Testsome(6, req, &out, idx, st));
            CHECK(out != MPI_UNDEFINED, "Testsome with active requests returned MPI_UNDEFINED");
            left -= out;
        }
    }
    vcheck(vr_small, NSMALL, NSMALL, peer, how, "small vector");
    vcheck(vr_big, NBIG, NBIG, peer, 10 + how, "big vector");
    scheck(sr, NREC, peer, 20 + how, "struct");
    free(vs_small);
    free(vr_small);
    free(vs_big);
    free(vr_big);
}

int main(int argc, char **argv)
{
    int size;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    peer = rank ^ 1;
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));

    MPI_OK(MPI_Type_vector(VB, VL, VS, MPI_INT, &vec));
    MPI_OK(MPI_Type_commit(&vec));
    {
        int bl[3] = {1, 1, 3};
        MPI_Aint d[3] = {offsetof(rec_t, a), offsetof(rec_t, b), offsetof(rec_t, c)};
        MPI_Datatype ty[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR}, tmp;
        MPI_OK(MPI_Type_create_struct(3, bl, d, ty, &tmp));
        MPI_OK(MPI_Type_create_resized(tmp, 0, sizeof(rec_t), &srec));
        MPI_OK(MPI_Type_free(&tmp));
        MPI_OK(MPI_Type_commit(&srec));
    }

    for (int how = 0; how < 3; how++)
        round_trip(how);

    /* MPI_Request_get_status on a non-contiguous receive: the data is there once flag is set. */
    {
        int s[NSMALL * VEXT], r[NSMALL * VEXT], flag = 0;
        MPI_Request rq, sq;
        vfill(s, NSMALL, rank, 30);
        for (int i = 0; i < NSMALL * VEXT; i++)
            r[i] = SENT;
        MPI_OK(MPI_Irecv(r, NSMALL, vec, peer, 4, MPI_COMM_WORLD, &rq));
        MPI_OK(MPI_Isend(s, NSMALL, vec, peer, 4, MPI_COMM_WORLD, &sq));
        while (!flag)
            MPI_OK(MPI_Request_get_status(rq, &flag, MPI_STATUS_IGNORE));
        vcheck(r, NSMALL, NSMALL, peer, 30, "vector after Request_get_status");
        MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Wait(&sq, MPI_STATUS_IGNORE));
        vcheck(r, NSMALL, NSMALL, peer, 30, "vector after Request_get_status and Wait");
    }

    /* Persistent: restarted 3 times, the send buffer changed before each start. Small and big. */
    {
        int *s = oxt_malloc(sizeof(int) * NBIG * VEXT), *r = oxt_malloc(sizeof(int) * NBIG * VEXT);
        int s2[NSMALL * VEXT], r2[NSMALL * VEXT];
        MPI_Request rq[4];
        MPI_OK(MPI_Recv_init(r, NBIG, vec, peer, 5, MPI_COMM_WORLD, &rq[0]));
        MPI_OK(MPI_Recv_init(r2, NSMALL, vec, peer, 6, MPI_COMM_WORLD, &rq[1]));
        MPI_OK(MPI_Send_init(s, NBIG, vec, peer, 5, MPI_COMM_WORLD, &rq[2]));
        MPI_OK(MPI_Send_init(s2, NSMALL, vec, peer, 6, MPI_COMM_WORLD, &rq[3]));
        for (int it = 0; it < 3; it++) {
            vfill(s, NBIG, rank, 40 + it);
            vfill(s2, NSMALL, rank, 50 + it);
            for (int i = 0; i < NBIG * VEXT; i++)
                r[i] = SENT;
            for (int i = 0; i < NSMALL * VEXT; i++)
                r2[i] = SENT;
            if (it == 1) {
                MPI_OK(MPI_Startall(4, rq));
            } else {
                for (int k = 0; k < 4; k++)
                    MPI_OK(MPI_Start(&rq[k]));
            }
            MPI_OK(MPI_Waitall(4, rq, MPI_STATUSES_IGNORE));
            vcheck(r, NBIG, NBIG, peer, 40 + it, "persistent big vector");
            vcheck(r2, NSMALL, NSMALL, peer, 50 + it, "persistent small vector");
        }
        for (int k = 0; k < 4; k++)
            MPI_OK(MPI_Request_free(&rq[k]));
        free(s);
        free(r);
    }

    /* Matched probe: Improbe + Imrecv, Mprobe + Mrecv. */
    {
        int s[NSMALL * VEXT], r[NSMALL * VEXT], flag = 0;
        int *sb = oxt_malloc(sizeof(int) * NBIG * VEXT), *rb = oxt_malloc(sizeof(int) * NBIG * VEXT);
        MPI_Request sq[2], rq;
        MPI_Message msg;
        MPI_Status st;
        vfill(s, NSMALL, rank, 60);
        vfill(sb, NBIG, rank, 61);
        for (int i = 0; i < NSMALL * VEXT; i++)
            r[i] = SENT;
        for (int i = 0; i < NBIG * VEXT; i++)
            rb[i] = SENT;
        MPI_OK(MPI_Isend(s, NSMALL, vec, peer, 7, MPI_COMM_WORLD, &sq[0]));
        MPI_OK(MPI_Isend(sb, NBIG, vec, peer, 8, MPI_COMM_WORLD, &sq[1]));
        while (!flag)
            MPI_OK(MPI_Improbe(peer, 7, MPI_COMM_WORLD, &flag, &msg, &st));
        MPI_OK(MPI_Imrecv(r, NSMALL, vec, &msg, &rq));
        CHECK(msg == MPI_MESSAGE_NULL, "Imrecv did not reset the message handle");
        MPI_OK(MPI_Wait(&rq, &st));
        vcheck(r, NSMALL, NSMALL, peer, 60, "Imrecv vector");
        MPI_OK(MPI_Mprobe(peer, 8, MPI_COMM_WORLD, &msg, &st));
        MPI_OK(MPI_Mrecv(rb, NBIG, vec, &msg, &st));
        vcheck(rb, NBIG, NBIG, peer, 61, "Mrecv vector");
        MPI_OK(MPI_Waitall(2, sq, MPI_STATUSES_IGNORE));
        free(sb);
        free(rb);
    }

    /* Sendrecv_replace with a vector (gaps must survive). */
    {
        int b[NSMALL * VEXT];
        MPI_Status st;
        vfill(b, NSMALL, rank, 70);
        MPI_OK(MPI_Sendrecv_replace(b, NSMALL, vec, peer, 9, peer, 9, MPI_COMM_WORLD, &st));
        vcheck(b, NSMALL, NSMALL, peer, 70, "Sendrecv_replace vector");
        int *bb = oxt_malloc(sizeof(int) * NBIG * VEXT);
        vfill(bb, NBIG, rank, 71);
        MPI_OK(MPI_Sendrecv_replace(bb, NBIG, vec, peer, 10, peer, 10, MPI_COMM_WORLD, &st));
        vcheck(bb, NBIG, NBIG, peer, 71, "Sendrecv_replace big vector");
        free(bb);
    }

    /* Truncation: 3 vector elements into room for 2; the 2 that fit are unpacked. */
    {
        int s[NSMALL * VEXT], r[NSMALL * VEXT];
        MPI_Request sq, rq;
        MPI_Status st;
        vfill(s, NSMALL, rank, 80);
        for (int i = 0; i < NSMALL * VEXT; i++)
            r[i] = SENT;
        MPI_OK(MPI_Irecv(r, NSMALL - 1, vec, peer, 11, MPI_COMM_WORLD, &rq));
        MPI_OK(MPI_Isend(s, NSMALL, vec, peer, 11, MPI_COMM_WORLD, &sq));
        int rc = MPI_Wait(&rq, &st);
        CHECK_CLASS(rc, MPI_ERR_TRUNCATE);
        MPI_OK(MPI_Wait(&sq, MPI_STATUS_IGNORE));
        /* The content of a truncated receive is undefined (MPICH unpacks nothing); the element
           past the receive count and the gaps must stay untouched. */
        for (int pos = 0; pos < NSMALL * VEXT; pos++)
            if (pos >= (NSMALL - 1) * VEXT || (pos % VEXT) % VS >= VL)
                CHECK(r[pos] == SENT, "truncated receive wrote int %d outside its typemap", pos);
    }

    /* Cancel of a posted non-contiguous receive: the buffer stays untouched. */
    {
        int r[NSMALL * VEXT], flag = 0;
        MPI_Request rq;
        MPI_Status st;
        for (int i = 0; i < NSMALL * VEXT; i++)
            r[i] = SENT;
        MPI_OK(MPI_Irecv(r, NSMALL, vec, peer, 12, MPI_COMM_WORLD, &rq));
        MPI_OK(MPI_Cancel(&rq));
        MPI_OK(MPI_Wait(&rq, &st));
        MPI_OK(MPI_Test_cancelled(&st, &flag));
        CHECK(flag, "the posted receive was not cancelled");
        vcheck(r, NSMALL, 0, peer, 0, "cancelled receive");
    }

    /* Request_free of an active non-contiguous send (big: rendezvous); the peer still gets it. */
    {
        int *s = oxt_malloc(sizeof(int) * NBIG * VEXT), *r = oxt_malloc(sizeof(int) * NBIG * VEXT);
        MPI_Request sq, rq;
        vfill(s, NBIG, rank, 90);
        for (int i = 0; i < NBIG * VEXT; i++)
            r[i] = SENT;
        MPI_OK(MPI_Irecv(r, NBIG, vec, peer, 13, MPI_COMM_WORLD, &rq));
        MPI_OK(MPI_Isend(s, NBIG, vec, peer, 13, MPI_COMM_WORLD, &sq));
        MPI_OK(MPI_Request_free(&sq));
        CHECK(sq == MPI_REQUEST_NULL, "Request_free did not reset the handle");
        MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        vcheck(r, NBIG, NBIG, peer, 90, "vector from a freed send");
        /* The peer has received our message too once it passes this barrier. */
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        free(s);
        free(r);
    }

    MPI_OK(MPI_Type_free(&vec));
    MPI_OK(MPI_Type_free(&srec));
    MPI_OK(MPI_Finalize());
    return 0;
}
