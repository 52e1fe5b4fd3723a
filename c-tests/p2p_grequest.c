/* oxmpi-test: ranks=1,2,4,8 */
/* Generalized requests (MPI 4.1 section 13.2) and MPICH's MPIX extensions: query fills the status
   at completion, free runs exactly once when the request is freed, cancel gets the `complete`
   flag, MPI_Wait blocks until MPI_Grequest_complete (also from another thread), grequests mixed
   with point-to-point requests in Waitall/Waitany/Testsome, errors of the callbacks, and MPIX
   poll and wait functions that complete the request themselves. */
#define _POSIX_C_SOURCE 200809L
#include "oxtest.h"
#include <pthread.h>
#include <string.h>
#include <time.h>

typedef struct {
    int source, tag, count;   /* what query reports */
    int query_rc, free_rc;    /* what query / free return */
    int queries, frees, cancels, last_complete_flag;
    int cancelled;            /* cancel_fn was called with complete == 0 */
    MPI_Request req;          /* for poll/wait/thread completion */
    int polls, waits, complete_after;
} state_t;

static void init_state(state_t *s, int source, int tag, int count)
{
    memset(s, 0, sizeof *s);
    s->source = source;
    s->tag = tag;
    s->count = count;
    s->last_complete_flag = -1;
    s->req = MPI_REQUEST_NULL;
}

static int query_fn(void *extra, MPI_Status *status)
{
    state_t *s = extra;
    s->queries++;
    status->MPI_SOURCE = s->source;
    status->MPI_TAG = s->tag;
    MPI_Status_set_elements(status, MPI_INT, s->count);
    MPI_Status_set_cancelled(status, s->cancelled);
    return s->query_rc;
}

static int free_fn(void *extra)
{
    state_t *s = extra;
    s->frees++;
    return s->free_rc;
}

static int cancel_fn(void *extra, int complete)
{
    state_t *s = extra;
    s->cancels++;
    s->last_complete_flag = complete;
    if (!complete)
        s->cancelled = 1;
    return MPI_SUCCESS;
}

static int poll_fn(void *extra, MPI_Status *status)
{
    (void)status;
    state_t *s = extra;
    s->polls++;
    if (s->polls == s->complete_after)
        MPI_OK(MPI_Grequest_complete(s->req));
    return MPI_SUCCESS;
}

static int wait_fn(int count, void **states, double timeout, MPI_Status *status)
{
    (void)timeout;
    (void)status;
    for (int i = 0; i < count; i++) {
        state_t *s = states[i];
        s->waits++;
        if (s->waits == 1)
            MPI_OK(MPI_Grequest_complete(s->req));
    }
    return MPI_SUCCESS;
}

/* A wait function that only waits a little: completion comes from the poll function. */
static int idle_wait_fn(int count, void **states, double timeout, MPI_Status *status)
{
    (void)count;
    (void)states;
    (void)timeout;
    (void)status;
    return MPI_SUCCESS;
}

static void *completer(void *arg)
{
    state_t *s = arg;
    struct timespec ts = {0, 20000000};
    nanosleep(&ts, NULL);
    MPI_OK(MPI_Grequest_complete(s->req));
    return NULL;
}

int main(int argc, char **argv)
{
    int provided, rank, size;
    MPI_OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    state_t s, t;
    MPI_Status st;
    MPI_Request r;
    int flag, count;

    /* Complete before the wait; query fills source, tag and count; free runs once, at the wait. */
    init_state(&s, 3, 7, 5);
    MPI_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &s, &r));
    CHECK(r != MPI_REQUEST_NULL, "no request");
    MPI_OK(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag && r != MPI_REQUEST_NULL, "an incomplete grequest tested complete");
    MPI_OK(MPI_Grequest_complete(r));
    CHECK(s.frees == 0, "free ran before the wait");
    MPI_OK(MPI_Wait(&r, &st));
    CHECK(r == MPI_REQUEST_NULL, "wait did not free the request");
    CHECK(s.queries == 1 && s.frees == 1, "query ran %d times, free %d times", s.queries, s.frees);
    MPI_OK(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(st.MPI_SOURCE == 3 && st.MPI_TAG == 7 && count == 5, "status %d/%d/%d", st.MPI_SOURCE, st.MPI_TAG, count);

    /* MPI_Test completes it once complete. */
    init_state(&s, 1, 2, 3);
    MPI_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &s, &r));
    MPI_OK(MPI_Grequest_complete(r));
    MPI_OK(MPI_Test(&r, &flag, &st));
    CHECK(flag && r == MPI_REQUEST_NULL && s.frees == 1, "test: flag %d, frees %d", flag, s.frees);
    CHECK(st.MPI_SOURCE == 1 && st.MPI_TAG == 2, "test status %d/%d", st.MPI_SOURCE, st.MPI_TAG);

    /* MPI_Request_get_status does not free; the query fills its status. */
    init_state(&s, 4, 9, 1);
    MPI_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &s, &r));
    MPI_OK(MPI_Request_get_status(r, &flag, &st));
    CHECK(!flag, "get_status of an incomplete grequest: flag %d", flag);
    MPI_OK(MPI_Grequest_complete(r));
    MPI_OK(MPI_Request_get_status(r, &flag, &st));
    CHECK(flag && st.MPI_SOURCE == 4 && st.MPI_TAG == 9 && s.frees == 0, "get_status: flag %d source %d frees %d", flag, st.MPI_SOURCE, s.frees);
    MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(s.frees == 1, "free ran %d times", s.frees);

    /* Cancel before and after completion: the flag tells; the query reports the cancellation. */
    init_state(&s, 0, 0, 0);
    MPI_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &s, &r));
    MPI_OK(MPI_Cancel(&r));
    CHECK(s.cancels == 1 && s.last_complete_flag == 0, "cancel: %d calls, complete %d", s.cancels, s.last_complete_flag);
    MPI_OK(MPI_Grequest_complete(r));
    MPI_OK(MPI_Cancel(&r));
    CHECK(s.cancels == 2 && s.last_complete_flag == 1, "cancel after complete: %d calls, complete %d", s.cancels, s.last_complete_flag);
    MPI_OK(MPI_Wait(&r, &st));
    MPI_OK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag, "the query's cancellation was lost");

    /* MPI_Request_free before completion: free runs once. MPI 4.1 section 13.2 says after
       MPI_Grequest_complete (so the user's copy of the handle stays valid for that call); MPICH
       4.0 runs it at MPI_Request_free already, hence frees <= 1 here. */
    init_state(&s, 0, 0, 0);
    MPI_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &s, &r));
    MPI_Request keep = r;
    MPI_OK(MPI_Request_free(&r));
    CHECK(r == MPI_REQUEST_NULL && s.frees <= 1, "request_free: handle 0x%x, frees %d", (unsigned)r, s.frees);
    MPI_OK(MPI_Grequest_complete(keep));
    CHECK(s.frees == 1, "free ran %d times after complete of a freed request", s.frees);

    /* Completed from another thread while this one waits. */
    if (provided == MPI_THREAD_MULTIPLE) {
        init_state(&s, 5, 6, 2);
        MPI_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &s, &s.req));
        r = s.req;
        pthread_t th;
        CHECK(pthread_create(&th, NULL, completer, &s) == 0, "pthread_create");
        MPI_OK(MPI_Wait(&r, &st));
        pthread_join(th, NULL);
        CHECK(st.MPI_SOURCE == 5 && st.MPI_TAG == 6 && s.frees == 1, "threaded: %d/%d frees %d", st.MPI_SOURCE, st.MPI_TAG, s.frees);

        /* Waitall over a grequest completed by a thread and a self receive. */
        init_state(&s, 8, 8, 1);
        MPI_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &s, &s.req));
        int in = -1, outv = 100 + rank;
        MPI_Request reqs[3];
        reqs[0] = s.req;
        MPI_OK(MPI_Irecv(&in, 1, MPI_INT, rank, 11, MPI_COMM_WORLD, &reqs[1]));
        MPI_OK(MPI_Isend(&outv, 1, MPI_INT, rank, 11, MPI_COMM_WORLD, &reqs[2]));
        CHECK(pthread_create(&th, NULL, completer, &s) == 0, "pthread_create");
        MPI_Status sts[3];
        MPI_OK(MPI_Waitall(3, reqs, sts));
        pthread_join(th, NULL);
        CHECK(in == 100 + rank, "self receive got %d", in);
        CHECK(sts[0].MPI_SOURCE == 8 && sts[1].MPI_SOURCE == rank && sts[1].MPI_TAG == 11, "waitall statuses %d %d", sts[0].MPI_SOURCE, sts[1].MPI_SOURCE);
        CHECK(s.frees == 1 && reqs[0] == MPI_REQUEST_NULL, "waitall: frees %d", s.frees);
    }

    /* Waitany and Testsome mixing grequests with a receive. */
    {
        init_state(&s, 1, 1, 0);
        init_state(&t, 2, 2, 0);
        int in = -1, outv = 7;
        MPI_Request reqs[3], sreq;
        MPI_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &s, &reqs[0]));
        MPI_OK(MPI_Irecv(&in, 1, MPI_INT, rank, 12, MPI_COMM_WORLD, &reqs[1]));
        MPI_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &t, &reqs[2]));
        MPI_OK(MPI_Grequest_complete(reqs[2]));
        int idx = -1;
        MPI_OK(MPI_Waitany(3, reqs, &idx, &st));
        CHECK(idx == 2 && st.MPI_SOURCE == 2 && t.frees == 1, "waitany: index %d source %d frees %d", idx, st.MPI_SOURCE, t.frees);
        MPI_OK(MPI_Isend(&outv, 1, MPI_INT, rank, 12, MPI_COMM_WORLD, &sreq));
        MPI_OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Grequest_complete(reqs[0]));
        int done = 0, outcount, indices[3];
        MPI_Status sts[3];
        while (done < 2) {
            MPI_OK(MPI_Testsome(3, reqs, &outcount, indices, sts));
            CHECK(outcount != MPI_UNDEFINED, "testsome: nothing active with %d done", done);
            for (int k = 0; k < outcount; k++) {
                if (indices[k] == 0)
                    CHECK(sts[k].MPI_SOURCE == 1, "testsome grequest source %d", sts[k].MPI_SOURCE);
                else
                    CHECK(indices[k] == 1 && sts[k].MPI_SOURCE == rank && in == 7, "testsome index %d source %d", indices[k], sts[k].MPI_SOURCE);
            }
            done += outcount;
        }
        CHECK(s.frees == 1, "testsome: frees %d", s.frees);
    }

    /* An error of the query is the wait's error, MPI_ERR_IN_STATUS in an array. */
    init_state(&s, 0, 0, 0);
    s.query_rc = MPI_ERR_BUFFER;
    MPI_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &s, &r));
    MPI_OK(MPI_Grequest_complete(r));
    int rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK_CLASS(rc, MPI_ERR_BUFFER);
    CHECK(s.frees == 1, "free after a failed query: %d", s.frees);
    init_state(&s, 0, 0, 0);
    init_state(&t, 0, 0, 0);
    t.query_rc = MPI_ERR_BUFFER;
    {
        MPI_Request reqs[2];
        MPI_Status sts[2];
        MPI_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &s, &reqs[0]));
        MPI_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &t, &reqs[1]));
        MPI_OK(MPI_Grequest_complete(reqs[0]));
        MPI_OK(MPI_Grequest_complete(reqs[1]));
        rc = MPI_Waitall(2, reqs, sts);
        CHECK_CLASS(rc, MPI_ERR_IN_STATUS);
        int cls;
        MPI_OK(MPI_Error_class(sts[1].MPI_ERROR, &cls));
        /* oxmpi passes the query's class through; MPICH 4.0 reports it as MPI_ERR_OTHER. */
        CHECK(sts[0].MPI_ERROR == MPI_SUCCESS && (cls == MPI_ERR_BUFFER || cls == MPI_ERR_OTHER), "waitall errors %d %d", sts[0].MPI_ERROR, sts[1].MPI_ERROR);
        CHECK(s.frees == 1 && t.frees == 1, "waitall frees %d %d", s.frees, t.frees);
    }

    /* MPIX: a class with a poll function that completes the request on its third call and a
       wait function that completes it at once (MPI_Wait may use either). */
    MPIX_Grequest_class cls;
    MPI_OK(MPIX_Grequest_class_create(query_fn, free_fn, cancel_fn, poll_fn, wait_fn, &cls));
    init_state(&s, 6, 1, 4);
    s.complete_after = 3;
    MPI_OK(MPIX_Grequest_class_allocate(cls, &s, &s.req));
    r = s.req;
    MPI_OK(MPI_Wait(&r, &st));
    CHECK((s.polls >= 3 || s.waits == 1) && s.frees == 1 && st.MPI_SOURCE == 6, "class: %d polls, %d waits, %d frees, source %d", s.polls, s.waits, s.frees, st.MPI_SOURCE);
    /* ... MPI_Test in a loop polls. */
    init_state(&s, 6, 2, 4);
    s.complete_after = 2;
    MPI_OK(MPIX_Grequest_class_allocate(cls, &s, &s.req));
    r = s.req;
    flag = 0;
    for (int i = 0; i < 1000 && !flag; i++)
        MPI_OK(MPI_Test(&r, &flag, &st));
    CHECK(flag && st.MPI_TAG == 2 && s.frees == 1, "poll by test: flag %d after %d polls", flag, s.polls);

    /* MPIX_Grequest_start with a poll function and a wait function that does not complete the
       request (MPICH refuses NULL): MPI_Wait polls until it completes. */
    init_state(&s, 7, 3, 0);
    s.complete_after = 3;
    MPI_OK(MPIX_Grequest_start(query_fn, free_fn, cancel_fn, poll_fn, idle_wait_fn, &s, &s.req));
    r = s.req;
    MPI_OK(MPI_Wait(&r, &st));
    CHECK(s.polls >= 3 && s.frees == 1 && st.MPI_SOURCE == 7, "poll: %d polls, %d frees", s.polls, s.frees);

    /* MPIX_Grequest_start with a wait function that completes the request (oxmpi calls it in
       MPI_Wait; MPICH 4.0 polls instead). */
    init_state(&s, 2, 3, 0);
    s.complete_after = 50;
    MPI_OK(MPIX_Grequest_start(query_fn, free_fn, cancel_fn, poll_fn, wait_fn, &s, &s.req));
    r = s.req;
    MPI_OK(MPI_Wait(&r, &st));
    CHECK((s.waits >= 1 || s.polls >= 50) && s.frees == 1 && st.MPI_SOURCE == 2, "wait_fn: %d waits, %d frees", s.waits, s.frees);

    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Finalize());
    return 0;
}
