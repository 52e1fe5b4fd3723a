/* oxmpi-test: ranks=1,2,3,4,5,8 timeout=90 */
/* MPI_Alltoallv and MPI_Alltoallw in their six forms: per-pair counts (zero, odd, and blocks
   large enough for single-copy transfers), displacements that reorder the blocks and leave gaps
   (which must stay untouched), per-peer datatypes for alltoallw (strided vectors against
   contiguous ints), MPI_IN_PLACE, an intercommunicator between the even and odd ranks, and
   argument errors under MPI_ERRORS_RETURN. */
#include "oxcoll.h"

static int rank, size;
static int starts = 2;
/* MPICH 4.0.2 garbles in-place MPI_Alltoallw with derived receive types (truncation errors,
   wrong blocks); there the in-place cases use MPI_INT only. */
static int mpich;

static int val(int from, int to, int i) { return from * 1000003 + to * 7919 + i; }

/* Elements rank a sends to rank b (symmetric when in place: both directions must agree). */
static int cnt(int a, int b, int inplace)
{
    int c = ((a + b) * 5 + a * b) % 7 + ((a + b) % 3 == 0 ? 2500 : 0);
    return inplace ? c : c + (a * 7 + b) % 3;
}

static void wait_or_start(int form, MPI_Request *req)
{
    if (form >= 4) {
        for (int k = 0; k < starts; k++) {
            MPI_OK(MPI_Start(req));
            MPI_OK(MPI_Wait(req, MPI_STATUS_IGNORE));
        }
        MPI_OK(MPI_Request_free(req));
    } else if (form >= 2) {
        MPI_OK(MPI_Wait(req, MPI_STATUS_IGNORE));
    }
}

/* form: 0 blocking, 1 _c, 2 I, 3 I_c, 4 _init, 5 _init_c. w: alltoallw (displs in bytes). */
static void call(int w, int form, const void *s, const int *sc, const int *sd, const MPI_Datatype *st, void *r,
                 const int *rc, const int *rd, const MPI_Datatype *rt, int m, MPI_Comm comm)
{
    MPI_Count csc[16], crc[16];
    MPI_Aint csd[16], crd[16];
    for (int j = 0; j < m; j++) {
        crc[j] = rc[j]; crd[j] = rd[j];
        if (sc) { /* NULL in place: the send arguments are ignored */
            csc[j] = sc[j]; csd[j] = sd[j];
        }
    }
    MPI_Count *pcsc = sc ? csc : NULL;
    MPI_Aint *pcsd = sc ? csd : NULL;
    MPI_Datatype st0 = st ? st[0] : MPI_DATATYPE_NULL;
    MPI_Request req;
    if (!w) {
        switch (form) {
        case 0: MPI_OK(MPI_Alltoallv(s, sc, sd, st0, r, rc, rd, rt[0], comm)); break;
        case 1: MPI_OK(MPI_Alltoallv_c(s, pcsc, pcsd, st0, r, crc, crd, rt[0], comm)); break;
        case 2: MPI_OK(MPI_Ialltoallv(s, sc, sd, st0, r, rc, rd, rt[0], comm, &req)); break;
        case 3: MPI_OK(MPI_Ialltoallv_c(s, pcsc, pcsd, st0, r, crc, crd, rt[0], comm, &req)); break;
        case 4: MPI_OK(MPI_Alltoallv_init(s, sc, sd, st0, r, rc, rd, rt[0], comm, MPI_INFO_NULL, &req)); break;
        default: MPI_OK(MPI_Alltoallv_init_c(s, pcsc, pcsd, st0, r, crc, crd, rt[0], comm, MPI_INFO_NULL, &req)); break;
        }
    } else {
        switch (form) {
        case 0: MPI_OK(MPI_Alltoallw(s, sc, sd, st, r, rc, rd, rt, comm)); break;
        case 1: MPI_OK(MPI_Alltoallw_c(s, pcsc, pcsd, st, r, crc, crd, rt, comm)); break;
        case 2: MPI_OK(MPI_Ialltoallw(s, sc, sd, st, r, rc, rd, rt, comm, &req)); break;
        case 3: MPI_OK(MPI_Ialltoallw_c(s, pcsc, pcsd, st, r, crc, crd, rt, comm, &req)); break;
        case 4: MPI_OK(MPI_Alltoallw_init(s, sc, sd, st, r, rc, rd, rt, comm, MPI_INFO_NULL, &req)); break;
        default: MPI_OK(MPI_Alltoallw_init_c(s, pcsc, pcsd, st, r, crc, crd, rt, comm, MPI_INFO_NULL, &req)); break;
        }
    }
    wait_or_start(form, &req);
}

/* One exchange on comm (an intercommunicator if `ic`), peers' world ranks pw[j]. With w, the
   send block to peer j is a strided vector when (j + rank) is odd, and the receive block from
   peer j a strided vector when j % 3 == 1, else contiguous (a contiguous type or MPI_INT). */
static void vw(int w, int form, MPI_Comm comm, int ic, int inplace)
{
    int m, pw[16];
    if (ic) {
        MPI_OK(MPI_Comm_remote_size(comm, &m));
        for (int j = 0; j < m; j++)
            pw[j] = 2 * j + 1 - rank % 2;
    } else {
        m = size;
        for (int j = 0; j < m; j++)
            pw[j] = j;
    }
    int sc[16], sd[16], rc[16], rd[16], sstride[16], rstride[16];
    MPI_Datatype st[16], rt[16];
    int stotal = 0, rtotal = 0, typed = w && !(inplace && mpich);
    for (int j = 0; j < m; j++) {
        int c = cnt(rank, pw[j], inplace);
        sstride[j] = w && (j + rank) % 2 ? 2 : 1;
        sd[j] = stotal + 1; /* one-int gap before each block */
        stotal = sd[j] + sstride[j] * c;
        if (w && sstride[j] == 2) {
            MPI_OK(MPI_Type_vector(c, 1, 2, MPI_INT, &st[j]));
            MPI_OK(MPI_Type_commit(&st[j]));
            sc[j] = 1;
        } else {
            st[j] = MPI_INT;
            sc[j] = c;
        }
    }
    for (int j = m - 1; j >= 0; j--) { /* blocks in reverse peer order, gaps of 3 */
        int c = cnt(pw[j], rank, inplace);
        rstride[j] = typed && j % 3 == 1 ? 2 : 1;
        rd[j] = rtotal + 3;
        rtotal = rd[j] + rstride[j] * c;
        if (w && rstride[j] == 2) {
            MPI_OK(MPI_Type_vector(c, 1, 2, MPI_INT, &rt[j]));
            MPI_OK(MPI_Type_commit(&rt[j]));
            rc[j] = 1;
        } else if (typed && j % 3 == 2) {
            MPI_OK(MPI_Type_contiguous(c, MPI_INT, &rt[j]));
            MPI_OK(MPI_Type_commit(&rt[j]));
            rc[j] = 1;
        } else {
            rt[j] = MPI_INT;
            rc[j] = c;
        }
    }
    int *s = oxt_malloc(sizeof(int) * (size_t)(stotal + 1)), *r = oxt_malloc(sizeof(int) * (size_t)(rtotal + 1));
    for (int k = 0; k <= stotal; k++)
        s[k] = -2;
    for (int k = 0; k <= rtotal; k++)
        r[k] = -1;
    for (int j = 0; j < m; j++)
        for (int i = 0; i < cnt(rank, pw[j], inplace); i++)
            s[sd[j] + sstride[j] * i] = val(rank, pw[j], i);
    if (inplace) /* the data to send sits in the receive layout */
        for (int j = 0; j < m; j++)
            for (int i = 0; i < cnt(rank, pw[j], 1); i++)
                r[rd[j] + rstride[j] * i] = val(rank, pw[j], i);
    int bsd[16], brd[16];
    for (int j = 0; j < m; j++) {
        bsd[j] = w ? sd[j] * (int)sizeof(int) : sd[j];
        brd[j] = w ? rd[j] * (int)sizeof(int) : rd[j];
    }
    if (inplace) {
        starts = 1;
        call(w, form, MPI_IN_PLACE, NULL, NULL, NULL, r, rc, brd, rt, m, comm);
        starts = 2;
    } else {
        call(w, form, s, sc, bsd, st, r, rc, brd, rt, m, comm);
    }
    /* expected: every block at its place, gaps and holes untouched */
    int *e = oxt_malloc(sizeof(int) * (size_t)(rtotal + 1));
    for (int k = 0; k <= rtotal; k++)
        e[k] = -1;
    for (int j = 0; j < m; j++)
        for (int i = 0; i < cnt(pw[j], rank, inplace); i++)
            e[rd[j] + rstride[j] * i] = val(pw[j], rank, i);
    for (int k = 0; k <= rtotal; k++)
        CHECK(r[k] == e[k], "w=%d form=%d inplace=%d ic=%d: recvbuf[%d] = %d, expected %d", w, form, inplace, ic, k, r[k], e[k]);
    free(e);
    for (int j = 0; j < m; j++) {
        if (st[j] != MPI_INT)
            MPI_OK(MPI_Type_free(&st[j]));
        if (rt[j] != MPI_INT)
            MPI_OK(MPI_Type_free(&rt[j]));
    }
    free(s);
    free(r);
}

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    mpich = oxc_is_mpich();
    MPI_Comm half, ic = MPI_COMM_NULL;
    if (size >= 2) {
        MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half));
        MPI_OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - rank % 2, 7, &ic));
        MPI_OK(MPI_Comm_free(&half));
    }
    for (int w = 0; w < 2; w++)
        for (int form = 0; form < 6; form++) {
            vw(w, form, MPI_COMM_WORLD, 0, 0);
            vw(w, form, MPI_COMM_WORLD, 0, 1);
            if (ic != MPI_COMM_NULL)
                vw(w, form, ic, 1, 0);
        }
    if (ic != MPI_COMM_NULL)
        MPI_OK(MPI_Comm_free(&ic));

    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int a[16], b[16], c1[16], c0[16], neg[16], d[16];
    MPI_Datatype t[16], tn[16];
    for (int j = 0; j < 16; j++) {
        c1[j] = 1; c0[j] = 0; neg[j] = j == size - 1 ? -1 : 1; d[j] = j; t[j] = MPI_INT; tn[j] = MPI_DATATYPE_NULL;
    }
    CHECK_CLASS(MPI_Alltoallv(a, neg, d, MPI_INT, b, c1, d, MPI_INT, MPI_COMM_WORLD), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Alltoallv(a, c1, d, MPI_INT, b, neg, d, MPI_INT, MPI_COMM_WORLD), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Alltoallv(a, c1, d, MPI_DATATYPE_NULL, b, c1, d, MPI_INT, MPI_COMM_WORLD), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Alltoallv(a, c1, d, MPI_INT, b, c1, d, MPI_INT, MPI_COMM_NULL), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Alltoallw(a, neg, d, t, b, c1, d, t, MPI_COMM_WORLD), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Alltoallw(a, c1, d, tn, b, c1, d, t, MPI_COMM_WORLD), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Alltoallw(a, c1, d, t, b, c1, d, t, MPI_COMM_NULL), MPI_ERR_COMM);
    /* all-zero counts still make a (trivial) collective */
    MPI_OK(MPI_Alltoallv(a, c0, d, MPI_INT, b, c0, d, MPI_INT, MPI_COMM_WORLD));
    MPI_OK(MPI_Alltoallw(a, c0, d, t, b, c0, d, t, MPI_COMM_WORLD));
    MPI_OK(MPI_Finalize());
    return 0;
}
