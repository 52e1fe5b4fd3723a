/* oxmpi-test: ranks=1,2,4 mpich=skip */
/* mpich=skip: MPICH 4.0.2 has none of these MPI 4.1 functions. */
/* The MPI 4.1 status accessors (MPI_Status_get/set_source, _tag, _error,
   MPI_Status_set_elements_c) and MPI_Request_get_status_all / _any / _some, which report
   completion without freeing the requests (point-to-point requests and a generalized request). */
#include "oxtest.h"

static int query_fn(void *extra, MPI_Status *status)
{
    (void)extra;
    MPI_Status_set_source(status, 42);
    MPI_Status_set_tag(status, 43);
    MPI_Status_set_elements(status, MPI_BYTE, 0);
    MPI_Status_set_cancelled(status, 0);
    return MPI_SUCCESS;
}

static int free_fn(void *extra)
{
    ++*(int *)extra;
    return MPI_SUCCESS;
}

static int cancel_fn(void *extra, int complete)
{
    (void)extra;
    (void)complete;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));

    /* Accessors. */
    MPI_Status st;
    int v;
    MPI_OK(MPI_Status_set_source(&st, 5));
    MPI_OK(MPI_Status_set_tag(&st, 6));
    MPI_OK(MPI_Status_set_error(&st, MPI_ERR_TAG));
    MPI_OK(MPI_Status_set_elements_c(&st, MPI_DOUBLE, (MPI_Count)3000000000LL));
    MPI_OK(MPI_Status_get_source(&st, &v));
    CHECK(v == 5 && st.MPI_SOURCE == 5, "source %d", v);
    MPI_OK(MPI_Status_get_tag(&st, &v));
    CHECK(v == 6 && st.MPI_TAG == 6, "tag %d", v);
    MPI_OK(MPI_Status_get_error(&st, &v));
    CHECK(v == MPI_ERR_TAG && st.MPI_ERROR == MPI_ERR_TAG, "error %d", v);
    MPI_Count n;
    MPI_OK(MPI_Get_count_c(&st, MPI_DOUBLE, &n));
    CHECK(n == 3000000000LL, "count %lld", (long long)n);
    MPI_OK(MPI_Get_elements_c(&st, MPI_DOUBLE, &n));
    CHECK(n == 3000000000LL, "elements %lld", (long long)n);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    CHECK(MPI_Status_set_elements_c(&st, MPI_DOUBLE, (MPI_Count)-1) != MPI_SUCCESS, "a negative count was accepted");

    /* Only null requests: flag true, MPI_UNDEFINED, empty status. */
    MPI_Request reqs[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Status sts[3];
    int flag = 0, index = 7, outcount = 7, indices[3];
    MPI_OK(MPI_Request_get_status_all(3, reqs, &flag, sts));
    CHECK(flag && sts[2].MPI_SOURCE == MPI_ANY_SOURCE && sts[2].MPI_TAG == MPI_ANY_TAG, "all-null get_status_all: flag %d", flag);
    MPI_OK(MPI_Request_get_status_any(3, reqs, &index, &flag, &st));
    CHECK(flag && index == MPI_UNDEFINED, "all-null get_status_any: flag %d index %d", flag, index);
    MPI_OK(MPI_Request_get_status_some(3, reqs, &outcount, indices, sts));
    CHECK(outcount == MPI_UNDEFINED, "all-null get_status_some: outcount %d", outcount);

    /* Two self receives and a generalized request; nothing is complete yet. */
    int a = -1, b = -1, frees = 0, x = 10 + rank, y = 20 + rank;
    MPI_OK(MPI_Irecv(&a, 1, MPI_INT, rank, 1, MPI_COMM_WORLD, &reqs[0]));
    MPI_OK(MPI_Irecv(&b, 1, MPI_INT, rank, 2, MPI_COMM_WORLD, &reqs[1]));
    MPI_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &frees, &reqs[2]));
    MPI_OK(MPI_Request_get_status_all(3, reqs, &flag, sts));
    CHECK(!flag, "get_status_all: complete before any send");
    MPI_OK(MPI_Request_get_status_any(3, reqs, &index, &flag, &st));
    CHECK(!flag && index == MPI_UNDEFINED, "get_status_any: flag %d index %d before any send", flag, index);
    MPI_OK(MPI_Request_get_status_some(3, reqs, &outcount, indices, sts));
    CHECK(outcount == 0, "get_status_some: outcount %d before any send", outcount);

    /* Complete the second receive: _any and _some see it, and keep it. */
    MPI_Request sreq;
    MPI_OK(MPI_Isend(&y, 1, MPI_INT, rank, 2, MPI_COMM_WORLD, &sreq));
    MPI_OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    flag = 0;
    while (!flag)
        MPI_OK(MPI_Request_get_status_any(3, reqs, &index, &flag, &st));
    CHECK(index == 1 && st.MPI_SOURCE == rank && st.MPI_TAG == 2 && b == 20 + rank, "get_status_any: index %d source %d tag %d", index, st.MPI_SOURCE, st.MPI_TAG);
    CHECK(reqs[1] != MPI_REQUEST_NULL, "get_status_any freed the request");
    MPI_OK(MPI_Request_get_status_some(3, reqs, &outcount, indices, sts));
    CHECK(outcount == 1 && indices[0] == 1 && sts[0].MPI_TAG == 2, "get_status_some: outcount %d", outcount);
    MPI_OK(MPI_Request_get_status_all(3, reqs, &flag, MPI_STATUSES_IGNORE));
    CHECK(!flag, "get_status_all: complete with one receive pending");

    /* Complete the rest: _all reports every status, the generalized request's from its query. */
    MPI_OK(MPI_Grequest_complete(reqs[2]));
    MPI_OK(MPI_Isend(&x, 1, MPI_INT, rank, 1, MPI_COMM_WORLD, &sreq));
    MPI_OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    flag = 0;
    while (!flag)
        MPI_OK(MPI_Request_get_status_all(3, reqs, &flag, sts));
    CHECK(a == 10 + rank && sts[0].MPI_TAG == 1 && sts[1].MPI_TAG == 2, "get_status_all: a %d tags %d %d", a, sts[0].MPI_TAG, sts[1].MPI_TAG);
    CHECK(sts[2].MPI_SOURCE == 42 && sts[2].MPI_TAG == 43, "get_status_all grequest status %d/%d", sts[2].MPI_SOURCE, sts[2].MPI_TAG);
    CHECK(reqs[0] != MPI_REQUEST_NULL && reqs[1] != MPI_REQUEST_NULL && reqs[2] != MPI_REQUEST_NULL && frees == 0, "get_status_all freed requests");

    /* The requests are still to be completed, once. */
    MPI_OK(MPI_Waitall(3, reqs, sts));
    CHECK(frees == 1 && sts[2].MPI_SOURCE == 42, "waitall after get_status_all: frees %d", frees);
    CHECK(reqs[0] == MPI_REQUEST_NULL && reqs[1] == MPI_REQUEST_NULL && reqs[2] == MPI_REQUEST_NULL, "waitall left requests");

    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Finalize());
    return 0;
}
