/* oxmpi-test: ranks=2,4 mpich=skip */
/* mpich=skip: MPI 4.1 buffers per communicator and session (MPI_Comm_attach_buffer,
   MPI_Session_attach_buffer, MPI_Buffer_flush/iflush, MPI_BUFFER_AUTOMATIC) are not in MPICH 4.0.
   A communicator's buffer serves MPI_Bsend on it with no process buffer (and takes precedence
   over a too small process buffer); MPI_Bsend on a communicator without one fails with
   MPI_ERR_BUFFER; flush / iflush wait until the buffered messages are delivered; detach gives
   the buffer and size back; MPI_BUFFER_AUTOMATIC needs no sizing; a communicator made from a
   session's process set uses the session's buffer. */
#include "oxtest.h"
#include <stdlib.h>
#include <string.h>

#define N 4
#define LEN 1000

static void exchange(MPI_Comm comm, int rank, int partner, int len, int seed, int flush_kind, MPI_Comm flushed, MPI_Session session)
{
    char *msg = oxt_malloc((size_t)len * N);
    if (rank % 2 == 0) {
        for (int i = 0; i < N; i++) {
            oxt_fill(msg + (size_t)i * len, (size_t)len, seed + i);
            MPI_OK(MPI_Bsend(msg + (size_t)i * len, len, MPI_BYTE, partner, i, comm));
        }
        memset(msg, 0, (size_t)len * N); /* the buffered copies must not depend on it */
        MPI_Request r = MPI_REQUEST_NULL;
        if (flush_kind == 1) {
            if (session != MPI_SESSION_NULL)
                MPI_OK(MPI_Session_iflush_buffer(session, &r));
            else if (flushed != MPI_COMM_NULL)
                MPI_OK(MPI_Comm_iflush_buffer(flushed, &r));
            else
                MPI_OK(MPI_Buffer_iflush(&r));
            CHECK(r != MPI_REQUEST_NULL, "iflush gave no request");
        }
        /* The receiver posts nothing before this barrier: the sends were buffered. */
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        if (flush_kind == 1) {
            MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        } else if (flush_kind == 2) {
            if (session != MPI_SESSION_NULL)
                MPI_OK(MPI_Session_flush_buffer(session));
            else if (flushed != MPI_COMM_NULL)
                MPI_OK(MPI_Comm_flush_buffer(flushed));
            else
                MPI_OK(MPI_Buffer_flush());
        }
    } else {
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        for (int i = 0; i < N; i++) {
            MPI_Status st;
            MPI_OK(MPI_Recv(msg, len, MPI_BYTE, partner, i, comm, &st));
            CHECK_STATUS(st, partner, i, MPI_BYTE, len);
            CHECK(oxt_verify(msg, (size_t)len, seed + i) < 0, "message %d corrupt", i);
        }
    }
    free(msg);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(size % 2 == 0, "needs an even number of ranks");
    int partner = rank ^ 1;
    MPI_Comm a;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &a));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));

    /* No buffer anywhere: flushing is a no-op. */
    MPI_OK(MPI_Buffer_flush());
    MPI_Request r;
    MPI_OK(MPI_Buffer_iflush(&r));
    MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));

    /* A communicator buffer, no process buffer. */
    int bsize = N * (LEN + MPI_BSEND_OVERHEAD);
    char *buf = oxt_malloc((size_t)bsize);
    MPI_OK(MPI_Comm_attach_buffer(a, buf, bsize));
    MPI_OK(MPI_Comm_attach_buffer(MPI_COMM_WORLD, MPI_BUFFER_AUTOMATIC, 0));
    void *got;
    int gotsize;
    MPI_OK(MPI_Comm_detach_buffer(MPI_COMM_WORLD, &got, &gotsize));
    CHECK(got == MPI_BUFFER_AUTOMATIC && gotsize == 0, "automatic detach gave %p, %d", got, gotsize);
    if (rank % 2 == 0) {
        char c = 1;
        int rc = MPI_Bsend(&c, 1, MPI_BYTE, partner, 99, MPI_COMM_WORLD);
        CHECK_CLASS(rc, MPI_ERR_BUFFER);
    }
    exchange(a, rank, partner, LEN, 10, 0, MPI_COMM_NULL, MPI_SESSION_NULL);
    exchange(a, rank, partner, LEN, 20, 1, a, MPI_SESSION_NULL);
    if (rank % 2 == 1) {
        /* The flushing sender waits until these are posted. */
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        char *m = oxt_malloc(LEN);
        for (int i = 0; i < N; i++) {
            MPI_OK(MPI_Recv(m, LEN, MPI_BYTE, partner, i, a, MPI_STATUS_IGNORE));
            CHECK(oxt_verify(m, LEN, 30 + i) < 0, "flushed message %d corrupt", i);
        }
        free(m);
    } else {
        char *m = oxt_malloc(LEN);
        for (int i = 0; i < N; i++) {
            oxt_fill(m, LEN, 30 + i);
            MPI_OK(MPI_Bsend(m, LEN, MPI_BYTE, partner, i, a));
        }
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        MPI_OK(MPI_Comm_flush_buffer(a));
        free(m);
    }
    MPI_OK(MPI_Comm_detach_buffer(a, &got, &gotsize));
    CHECK(got == buf && gotsize == bsize, "detach gave %p, %d; attached %p, %d", got, gotsize, (void *)buf, bsize);
    MPI_Count gotc;
    MPI_OK(MPI_Comm_attach_buffer_c(a, buf, (MPI_Count)bsize));
    MPI_OK(MPI_Comm_detach_buffer_c(a, &got, &gotc));
    CHECK(got == buf && gotc == bsize, "detach_c gave %p, %lld", got, (long long)gotc);

    /* The communicator's buffer takes precedence over a too small process buffer. */
    char small[MPI_BSEND_OVERHEAD + 8];
    MPI_OK(MPI_Buffer_attach(small, (int)sizeof small));
    MPI_OK(MPI_Comm_attach_buffer(a, buf, bsize));
    exchange(a, rank, partner, LEN, 40, 2, a, MPI_SESSION_NULL);
    MPI_OK(MPI_Comm_detach_buffer(a, &got, &gotsize));
    MPI_OK(MPI_Buffer_detach(&got, &gotsize));
    CHECK(got == small && gotsize == (int)sizeof small, "process detach gave %p, %d", got, gotsize);

    /* MPI_BUFFER_AUTOMATIC: large messages without sizing, on the communicator and the process. */
    MPI_OK(MPI_Comm_attach_buffer(a, MPI_BUFFER_AUTOMATIC, 0));
    exchange(a, rank, partner, 1 << 18, 50, 1, a, MPI_SESSION_NULL);
    MPI_OK(MPI_Comm_detach_buffer(a, &got, &gotsize));
    CHECK(got == MPI_BUFFER_AUTOMATIC && gotsize == 0, "automatic detach gave %p, %d", got, gotsize);
    MPI_OK(MPI_Buffer_attach(MPI_BUFFER_AUTOMATIC, 0));
    exchange(MPI_COMM_WORLD, rank, partner, 1 << 16, 60, 1, MPI_COMM_NULL, MPI_SESSION_NULL);
    MPI_OK(MPI_Buffer_detach(&got, &gotsize));
    CHECK(got == MPI_BUFFER_AUTOMATIC && gotsize == 0, "automatic detach gave %p, %d", got, gotsize);

    /* A session's buffer serves a communicator made from its process set. */
    MPI_Session s;
    MPI_Group g;
    MPI_Comm sc;
    MPI_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    MPI_OK(MPI_Session_attach_buffer(s, buf, bsize));
    MPI_OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
    MPI_OK(MPI_Comm_create_from_group(g, "oxmpi.bsend", MPI_INFO_NULL, MPI_ERRORS_RETURN, &sc));
    exchange(sc, rank, partner, LEN, 70, 1, MPI_COMM_NULL, s);
    exchange(sc, rank, partner, LEN, 80, 0, MPI_COMM_NULL, MPI_SESSION_NULL);
    MPI_OK(MPI_Session_flush_buffer(s));
    MPI_OK(MPI_Session_detach_buffer(s, &got, &gotsize));
    CHECK(got == buf && gotsize == bsize, "session detach gave %p, %d", got, gotsize);
    MPI_OK(MPI_Session_attach_buffer_c(s, MPI_BUFFER_AUTOMATIC, 0));
    MPI_OK(MPI_Session_detach_buffer_c(s, &got, &gotc));
    CHECK(got == MPI_BUFFER_AUTOMATIC && gotc == 0, "session automatic detach gave %p, %lld", got, (long long)gotc);
    MPI_OK(MPI_Comm_free(&sc));
    MPI_OK(MPI_Group_free(&g));
    MPI_OK(MPI_Session_finalize(&s));

    free(buf);
    MPI_OK(MPI_Comm_free(&a));
    MPI_OK(MPI_Finalize());
    return 0;
}
