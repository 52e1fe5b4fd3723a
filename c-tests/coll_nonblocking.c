/* oxmpi-test: ranks=1,2,3,4,7,8 timeout=90 */
/* Nonblocking and persistent collectives: Ibarrier/Ibcast/Ireduce/Iallreduce outstanding at once,
   a blocking collective issued while nonblocking ones run on the same communicator, nonblocking
   collectives on two communicators started in opposite orders on even and odd ranks (legal: MPI
   orders collectives per communicator only), persistent collectives started many times (also
   with MPI_Startall), the large-count (_c) forms, and the errors: MPI_Start of an active
   persistent collective, a NULL request. */
#include "oxtest.h"

int main(int argc, char **argv)
{
    int rank, size, provided;
    MPI_OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_Comm dup;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));

    /* Several nonblocking collectives in flight, plus a blocking one on the same communicator. */
    for (int iter = 0; iter < 20; iter++) {
        int root = iter % size;
        enum { N = 3000 };
        static int b[N], s[N], r[N], a[N];
        long total = 0;
        for (int i = 0; i < N; i++) {
            b[i] = rank == root ? i + iter : -1;
            s[i] = rank + i;
            r[i] = -7;
            a[i] = -7;
        }
        MPI_Request req[4];
        MPI_OK(MPI_Ibcast(b, N, MPI_INT, root, MPI_COMM_WORLD, &req[0]));
        MPI_OK(MPI_Ireduce(s, r, N, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD, &req[1]));
        MPI_OK(MPI_Iallreduce(s, a, N, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &req[2]));
        MPI_OK(MPI_Ibarrier(MPI_COMM_WORLD, &req[3]));
        long mine = rank + iter, sum = 0;
        MPI_OK(MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
        for (int q = 0; q < size; q++)
            total += q + iter;
        CHECK(sum == total, "blocking allreduce beside nonblocking ones: %ld, expected %ld", sum, total);
        if (iter % 2) {
            MPI_OK(MPI_Waitall(4, req, MPI_STATUSES_IGNORE));
        } else {
            int done = 0;
            while (!done)
                MPI_OK(MPI_Testall(4, req, &done, MPI_STATUSES_IGNORE));
        }
        for (int i = 0; i < N; i++) {
            CHECK(b[i] == i + iter, "Ibcast iter %d [%d] = %d", iter, i, b[i]);
            CHECK(a[i] == size - 1 + i, "Iallreduce MAX [%d] = %d", i, a[i]);
            if (rank == root)
                CHECK(r[i] == size * (size - 1) / 2 + size * i, "Ireduce SUM [%d] = %d", i, r[i]);
            else
                CHECK(r[i] == -7, "Ireduce wrote the receive buffer of a non-root");
        }
    }

    /* Two communicators, started in opposite orders on even and odd ranks. */
    for (int iter = 0; iter < 10; iter++) {
        int x = rank, y = -rank, sx = 0, sy = 0;
        MPI_Request rq[2];
        if (rank % 2 == 0) {
            MPI_OK(MPI_Iallreduce(&x, &sx, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq[0]));
            MPI_OK(MPI_Iallreduce(&y, &sy, 1, MPI_INT, MPI_SUM, dup, &rq[1]));
        } else {
            MPI_OK(MPI_Iallreduce(&y, &sy, 1, MPI_INT, MPI_SUM, dup, &rq[1]));
            MPI_OK(MPI_Iallreduce(&x, &sx, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq[0]));
        }
        MPI_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
        CHECK(sx == size * (size - 1) / 2 && sy == -sx, "two communicators: %d %d", sx, sy);
    }

    /* Persistent collectives, restarted with new data each time. */
    {
        double v[100], out[100];
        int bb[17];
        MPI_Request pr[3];
        MPI_OK(MPI_Allreduce_init(v, out, 100, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &pr[0]));
        MPI_OK(MPI_Bcast_init(bb, 17, MPI_INT, size - 1, dup, MPI_INFO_NULL, &pr[1]));
        MPI_OK(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &pr[2]));
        /* Completing an inactive persistent request returns at once (MPI 4.1 section 3.9).
           MPICH 4.0.2 hangs there with persistent collectives, so the check runs on oxmpi only. */
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int liblen = 0;
        MPI_OK(MPI_Get_library_version(lib, &liblen));
        if (strncmp(lib, "MPICH", 5) != 0) {
            MPI_OK(MPI_Wait(&pr[0], MPI_STATUS_IGNORE));
            CHECK(pr[0] != MPI_REQUEST_NULL, "an inactive persistent request stays allocated");
        }
        for (int iter = 0; iter < 25; iter++) {
            for (int i = 0; i < 100; i++)
                v[i] = rank * 0.5 + i + iter;
            for (int i = 0; i < 17; i++)
                bb[i] = rank == size - 1 ? i * iter : -1;
            if (iter % 3 == 0) {
                MPI_OK(MPI_Startall(3, pr));
            } else {
                for (int k = 0; k < 3; k++)
                    MPI_OK(MPI_Start(&pr[k]));
            }
            if (iter == 0) {
                MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
                int rc = MPI_Start(&pr[0]);
                int cls = -1;
                MPI_Error_class(rc, &cls);
                CHECK(cls == MPI_ERR_REQUEST, "MPI_Start of an active persistent collective: class %d", cls);
                MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
            }
            MPI_OK(MPI_Waitall(3, pr, MPI_STATUSES_IGNORE));
            for (int i = 0; i < 100; i++) {
                double e = 0;
                for (int q = 0; q < size; q++)
                    e += q * 0.5 + i + iter;
                CHECK(out[i] == e, "Allreduce_init iter %d [%d] = %g, expected %g", iter, i, out[i], e);
            }
            for (int i = 0; i < 17; i++)
                CHECK(bb[i] == i * iter, "Bcast_init iter %d [%d] = %d", iter, i, bb[i]);
        }
        for (int k = 0; k < 3; k++) {
            MPI_OK(MPI_Request_free(&pr[k]));
            CHECK(pr[k] == MPI_REQUEST_NULL, "MPI_Request_free sets MPI_REQUEST_NULL");
        }
    }

    /* Large-count forms. */
    {
        MPI_Count n = 5;
        long v[5], out[5];
        for (int i = 0; i < 5; i++)
            v[i] = rank * 10 + i;
        MPI_OK(MPI_Allreduce_c(v, out, n, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
        for (int i = 0; i < 5; i++)
            CHECK(out[i] == 10L * size * (size - 1) / 2 + (long)size * i, "Allreduce_c [%d] = %ld", i, out[i]);
        MPI_OK(MPI_Bcast_c(v, n, MPI_LONG, 0, MPI_COMM_WORLD));
        CHECK(v[4] == 4, "Bcast_c: %ld", v[4]);
        MPI_Request rq;
        MPI_OK(MPI_Ireduce_c(v, out, n, MPI_LONG, MPI_MIN, 0, MPI_COMM_WORLD, &rq));
        MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        if (rank == 0)
            CHECK(out[3] == 3, "Ireduce_c MIN: %ld", out[3]);
    }

    /* A NULL request is an error, reported at the call. */
    {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        int rc = MPI_Ibarrier(MPI_COMM_WORLD, NULL), cls = -1;
        MPI_Error_class(rc, &cls);
        CHECK(rc != MPI_SUCCESS, "MPI_Ibarrier with a NULL request succeeded");
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    }

    MPI_OK(MPI_Comm_free(&dup));
    MPI_OK(MPI_Finalize());
    if (rank == 0)
        printf("coll_nonblocking: OK\n");
    return 0;
}
