/* oxmpi-test: ranks=1,2 timeout=60 */
/* MPI_Grequest_start / MPI_Grequest_complete with MPI-2 functions only, so that the same source
   runs under every ABI (the foreign ABI layers give the query function a status of their own
   layout and take back their error codes): the query function's status (source, tag, count
   through MPI_Status_set_elements, cancelled) reaches MPI_Wait's and MPI_Test's status; MPI_Test
   is false before MPI_Grequest_complete; MPI_Cancel calls the cancel function with complete
   false before and true after completion; the free function runs once, at the end; an error
   returned by the query function is the error of the wait (MPI_ERRORS_RETURN). */
#include "oxtest.h"

struct state {
    int queries, frees, cancels, last_complete, fail;
};

static int query_fn(void *extra, MPI_Status *st)
{
    struct state *s = extra;
    s->queries++;
    MPI_Status_set_elements(st, MPI_INT, 7);
    MPI_Status_set_cancelled(st, s->cancels > 0);
    st->MPI_SOURCE = 3;
    st->MPI_TAG = 42;
    return s->fail ? MPI_ERR_OTHER : MPI_SUCCESS;
}

static int free_fn(void *extra)
{
    ((struct state *)extra)->frees++;
    return MPI_SUCCESS;
}

static int cancel_fn(void *extra, int complete)
{
    struct state *s = extra;
    s->cancels++;
    s->last_complete = complete;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    /* Plain: not done before completion, the query's status after. */
    struct state s = {0};
    MPI_Request r;
    MPI_Status st;
    int flag = 1, count = -1, cancelled = -1;
    MPI_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &s, &r));
    MPI_OK(MPI_Test(&r, &flag, &st));
    CHECK(!flag, "MPI_Test is true before MPI_Grequest_complete");
    CHECK(r != MPI_REQUEST_NULL, "an incomplete request was freed");
    MPI_OK(MPI_Grequest_complete(r));
    MPI_OK(MPI_Wait(&r, &st));
    CHECK(r == MPI_REQUEST_NULL, "MPI_Wait did not free the request");
    CHECK(st.MPI_SOURCE == 3 && st.MPI_TAG == 42, "status source %d tag %d, expected 3 and 42", st.MPI_SOURCE, st.MPI_TAG);
    MPI_OK(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == 7, "count %d, expected 7", count);
    MPI_OK(MPI_Test_cancelled(&st, &cancelled));
    CHECK(!cancelled, "cancelled without MPI_Cancel");
    CHECK(s.queries >= 1 && s.frees == 1 && s.cancels == 0, "queries %d frees %d cancels %d", s.queries, s.frees, s.cancels);

    /* Cancel before and after completion; the query reports the cancellation. */
    struct state c = {0};
    MPI_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &c, &r));
    MPI_OK(MPI_Cancel(&r));
    CHECK(c.cancels == 1 && c.last_complete == 0, "cancel before completion: %d calls, complete %d", c.cancels, c.last_complete);
    MPI_OK(MPI_Grequest_complete(r));
    MPI_OK(MPI_Cancel(&r));
    CHECK(c.cancels == 2 && c.last_complete != 0, "cancel after completion: %d calls, complete %d", c.cancels, c.last_complete);
    flag = 0;
    while (!flag)
        MPI_OK(MPI_Test(&r, &flag, &st));
    MPI_OK(MPI_Test_cancelled(&st, &cancelled));
    CHECK(cancelled, "the query's cancelled flag did not reach the status");
    CHECK(c.frees == 1, "free ran %d times", c.frees);

    /* MPI_STATUS_IGNORE: the query still runs (its error would matter) and gets a status. */
    struct state i = {0};
    MPI_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &i, &r));
    MPI_OK(MPI_Grequest_complete(r));
    MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(i.frees == 1, "free ran %d times", i.frees);

    /* A failing query: its code is the wait's. */
    struct state f = {0, 0, 0, 0, 1};
    MPI_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &f, &r));
    MPI_OK(MPI_Grequest_complete(r));
    int rc = MPI_Wait(&r, &st), cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_OTHER, "MPI_Wait returned class %d for a failing query, expected MPI_ERR_OTHER (%d)", cls, MPI_ERR_OTHER);

    /* Bad input: a NULL request pointer is refused, not a crash. */
    struct state b = {0};
    rc = MPI_Grequest_start(query_fn, free_fn, cancel_fn, &b, NULL);
    CHECK(rc != MPI_SUCCESS, "MPI_Grequest_start with request NULL succeeded");
    CHECK(b.frees == 0, "a refused request ran its free function");

    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Finalize();
    if (rank == 0)
        printf("p2p_grequest_std: ok\n");
    return 0;
}
