/* oxmpi-test: ranks=2,4 mpich=skip */
/* The MPI_ERROR field of a status (MPI 4.1 section 3.2.5): calls that complete one operation
   (MPI_Recv, MPI_Wait, MPI_Test, MPI_Waitany, MPI_Testany, MPI_Sendrecv(_replace), the probes,
   MPI_Mrecv, MPI_Request_get_status) never modify it; MPI_Waitall/Testall/Waitsome/Testsome
   set it only when they return MPI_ERR_IN_STATUS, and then in every status they return.
   Ranks pair up (even sends, odd receives); each status starts with a value no call writes.
   mpich=skip: MPICH 4.0 writes MPI_SUCCESS there in MPI_Probe, MPI_Iprobe and a successful
   MPI_Waitall (Open MPI 4.1 in all four array calls); its other calls pass. */
#include "oxtest.h"

#define SENTINEL 4242

static void check_kept(const MPI_Status *st, const char *what)
{
    CHECK(st->MPI_ERROR == SENTINEL, "%s changed MPI_ERROR to %d", what, st->MPI_ERROR);
}

static void fresh(MPI_Status *st, int n)
{
    for (int i = 0; i < n; i++)
        st[i].MPI_ERROR = SENTINEL;
}

/* The message of tag t: t, then t + 1000 (tag 21 sends both ints, the others one). */
static void check_value(int got, int t)
{
    CHECK(got == t, "tag %d: received %d", t, got);
}

static void receiver(int peer)
{
    MPI_Status st, sts[2];
    MPI_Request req[2];
    MPI_Message msg;
    int v = -1, w[2] = {-1, -1}, flag = 0, idx = -1, outcount = 0, indices[2];

    fresh(&st, 1);
    MPI_OK(MPI_Recv(&v, 1, MPI_INT, peer, 1, MPI_COMM_WORLD, &st));
    check_value(v, 1);
    check_kept(&st, "MPI_Recv");

    fresh(&st, 1);
    MPI_OK(MPI_Irecv(&v, 1, MPI_INT, peer, 2, MPI_COMM_WORLD, &req[0]));
    MPI_OK(MPI_Wait(&req[0], &st));
    check_value(v, 2);
    check_kept(&st, "MPI_Wait");

    fresh(&st, 1);
    MPI_OK(MPI_Irecv(&v, 1, MPI_INT, peer, 3, MPI_COMM_WORLD, &req[0]));
    do
        MPI_OK(MPI_Test(&req[0], &flag, &st));
    while (!flag);
    check_value(v, 3);
    check_kept(&st, "MPI_Test");

    fresh(&st, 1);
    MPI_OK(MPI_Irecv(&v, 1, MPI_INT, peer, 4, MPI_COMM_WORLD, &req[1]));
    req[0] = MPI_REQUEST_NULL;
    MPI_OK(MPI_Waitany(2, req, &idx, &st));
    CHECK(idx == 1, "MPI_Waitany index %d", idx);
    check_value(v, 4);
    check_kept(&st, "MPI_Waitany");

    fresh(&st, 1);
    MPI_OK(MPI_Irecv(&v, 1, MPI_INT, peer, 5, MPI_COMM_WORLD, &req[0]));
    do
        MPI_OK(MPI_Testany(2, req, &idx, &flag, &st));
    while (!flag);
    CHECK(idx == 0, "MPI_Testany index %d", idx);
    check_value(v, 5);
    check_kept(&st, "MPI_Testany");

    fresh(&st, 1);
    MPI_OK(MPI_Probe(peer, 6, MPI_COMM_WORLD, &st));
    check_kept(&st, "MPI_Probe");
    CHECK(st.MPI_TAG == 6 && st.MPI_SOURCE == peer, "MPI_Probe status %d/%d", st.MPI_SOURCE, st.MPI_TAG);
    MPI_OK(MPI_Recv(&v, 1, MPI_INT, peer, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    check_value(v, 6);

    fresh(&st, 1);
    do
        MPI_OK(MPI_Iprobe(peer, 7, MPI_COMM_WORLD, &flag, &st));
    while (!flag);
    check_kept(&st, "MPI_Iprobe");
    MPI_OK(MPI_Recv(&v, 1, MPI_INT, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    check_value(v, 7);

    fresh(&st, 1);
    MPI_OK(MPI_Mprobe(peer, 8, MPI_COMM_WORLD, &msg, &st));
    check_kept(&st, "MPI_Mprobe");
    fresh(&st, 1);
    MPI_OK(MPI_Mrecv(&v, 1, MPI_INT, &msg, &st));
    CHECK(msg == MPI_MESSAGE_NULL, "MPI_Mrecv left the message handle");
    check_value(v, 8);
    check_kept(&st, "MPI_Mrecv");

    fresh(&st, 1);
    do
        MPI_OK(MPI_Improbe(peer, 9, MPI_COMM_WORLD, &flag, &msg, &st));
    while (!flag);
    check_kept(&st, "MPI_Improbe");
    MPI_OK(MPI_Mrecv(&v, 1, MPI_INT, &msg, MPI_STATUS_IGNORE));
    check_value(v, 9);

    fresh(&st, 1);
    MPI_OK(MPI_Irecv(&v, 1, MPI_INT, peer, 10, MPI_COMM_WORLD, &req[0]));
    do
        MPI_OK(MPI_Request_get_status(req[0], &flag, &st));
    while (!flag);
    check_kept(&st, "MPI_Request_get_status");
    fresh(&st, 1);
    MPI_OK(MPI_Wait(&req[0], &st));
    check_value(v, 10);
    check_kept(&st, "MPI_Wait after MPI_Request_get_status");

    /* Arrays: untouched when the call succeeds. */
    fresh(sts, 2);
    MPI_OK(MPI_Irecv(&w[0], 1, MPI_INT, peer, 13, MPI_COMM_WORLD, &req[0]));
    MPI_OK(MPI_Irecv(&w[1], 1, MPI_INT, peer, 14, MPI_COMM_WORLD, &req[1]));
    MPI_OK(MPI_Waitall(2, req, sts));
    check_value(w[0], 13);
    check_value(w[1], 14);
    check_kept(&sts[0], "MPI_Waitall (status 0)");
    check_kept(&sts[1], "MPI_Waitall (status 1)");

    fresh(sts, 2);
    MPI_OK(MPI_Irecv(&w[0], 1, MPI_INT, peer, 15, MPI_COMM_WORLD, &req[0]));
    MPI_OK(MPI_Irecv(&w[1], 1, MPI_INT, peer, 16, MPI_COMM_WORLD, &req[1]));
    do
        MPI_OK(MPI_Testall(2, req, &flag, sts));
    while (!flag);
    check_value(w[0], 15);
    check_value(w[1], 16);
    check_kept(&sts[0], "MPI_Testall (status 0)");
    check_kept(&sts[1], "MPI_Testall (status 1)");

    MPI_OK(MPI_Irecv(&w[0], 1, MPI_INT, peer, 17, MPI_COMM_WORLD, &req[0]));
    MPI_OK(MPI_Irecv(&w[1], 1, MPI_INT, peer, 18, MPI_COMM_WORLD, &req[1]));
    for (int done = 0; done < 2; done += outcount) {
        fresh(sts, 2);
        MPI_OK(MPI_Waitsome(2, req, &outcount, indices, sts));
        CHECK(outcount >= 1 && outcount <= 2 - done, "MPI_Waitsome outcount %d", outcount);
        for (int k = 0; k < outcount; k++)
            check_kept(&sts[k], "MPI_Waitsome");
    }
    check_value(w[0], 17);
    check_value(w[1], 18);

    MPI_OK(MPI_Irecv(&w[0], 1, MPI_INT, peer, 19, MPI_COMM_WORLD, &req[0]));
    MPI_OK(MPI_Irecv(&w[1], 1, MPI_INT, peer, 20, MPI_COMM_WORLD, &req[1]));
    for (int done = 0; done < 2; done += outcount) {
        fresh(sts, 2);
        MPI_OK(MPI_Testsome(2, req, &outcount, indices, sts));
        CHECK(outcount >= 0 && outcount <= 2 - done, "MPI_Testsome outcount %d", outcount);
        for (int k = 0; k < outcount; k++)
            check_kept(&sts[k], "MPI_Testsome");
    }
    check_value(w[0], 19);
    check_value(w[1], 20);

    /* An array call that fails: MPI_ERR_IN_STATUS, and MPI_ERROR set in each status. */
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    fresh(sts, 2);
    MPI_OK(MPI_Irecv(&w[0], 1, MPI_INT, peer, 21, MPI_COMM_WORLD, &req[0]));
    MPI_OK(MPI_Irecv(&w[1], 1, MPI_INT, peer, 22, MPI_COMM_WORLD, &req[1]));
    int rc = MPI_Waitall(2, req, sts), cls = -1;
    CHECK(rc == MPI_ERR_IN_STATUS, "MPI_Waitall with a truncated receive returned %d", rc);
    MPI_OK(MPI_Error_class(sts[0].MPI_ERROR, &cls));
    CHECK(cls == MPI_ERR_TRUNCATE, "truncated receive: MPI_ERROR class %d", cls);
    /* The other receive completed (MPI_SUCCESS) or was left pending (MPI_ERR_PENDING, active). */
    CHECK(sts[1].MPI_ERROR == MPI_SUCCESS || sts[1].MPI_ERROR == MPI_ERR_PENDING, "the other receive: MPI_ERROR %d after MPI_ERR_IN_STATUS", sts[1].MPI_ERROR);
    if (sts[1].MPI_ERROR == MPI_ERR_PENDING)
        MPI_OK(MPI_Wait(&req[1], MPI_STATUS_IGNORE));
    check_value(w[1], 22);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

static void sender(int peer)
{
    static const int tags[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22};
    enum { N = sizeof tags / sizeof tags[0] };
    int vals[N][2];
    MPI_Request req[N];
    MPI_Status sts[N];
    for (int i = 0; i < N; i++) {
        vals[i][0] = tags[i];
        vals[i][1] = tags[i] + 1000;
        MPI_OK(MPI_Isend(vals[i], tags[i] == 21 ? 2 : 1, MPI_INT, peer, tags[i], MPI_COMM_WORLD, &req[i]));
    }
    fresh(sts, N);
    MPI_OK(MPI_Waitall(N, req, sts));
    for (int i = 0; i < N; i++)
        check_kept(&sts[i], "MPI_Waitall of sends");
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int peer = rank ^ 1;
    if (rank % 2)
        receiver(peer);
    else
        sender(peer);

    /* Both sides: MPI_Sendrecv and MPI_Sendrecv_replace. */
    MPI_Status st;
    int s = 100 + rank, r = -1;
    fresh(&st, 1);
    MPI_OK(MPI_Sendrecv(&s, 1, MPI_INT, peer, 11, &r, 1, MPI_INT, peer, 11, MPI_COMM_WORLD, &st));
    CHECK(r == 100 + peer, "MPI_Sendrecv received %d", r);
    check_kept(&st, "MPI_Sendrecv");
    r = 200 + rank;
    fresh(&st, 1);
    MPI_OK(MPI_Sendrecv_replace(&r, 1, MPI_INT, peer, 12, peer, 12, MPI_COMM_WORLD, &st));
    CHECK(r == 200 + peer, "MPI_Sendrecv_replace received %d", r);
    check_kept(&st, "MPI_Sendrecv_replace");

    MPI_OK(MPI_Finalize());
    return 0;
}
