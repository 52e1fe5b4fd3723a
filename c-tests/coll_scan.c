/* oxmpi-test: ranks=1,2,3,4,5,8 timeout=60 */
/* MPI_Scan and MPI_Exscan with predefined ops: SUM/PROD/MAX on int, long, double, odd and large
   counts, MPI_IN_PLACE, the _c, nonblocking and persistent forms (started several times), rank
   0's Exscan receive buffer left untouched, and argument errors (intercommunicator, MPI_OP_NULL,
   negative count, MPI_REPLACE). */
#include "oxcoll.h"

#define rank oxc_rank
#define size oxc_size

static long lval(int r, int i) { return (long)(r + 2) * 3 + (i % 11) - (r % 3); }

static void scan_long(int n, int ex, int inplace, int form)
{
    long *s = oxt_malloc(sizeof(long) * (size_t)(n + 1)), *r = oxt_malloc(sizeof(long) * (size_t)(n + 1));
    for (int i = 0; i <= n; i++) {
        s[i] = lval(rank, i);
        r[i] = inplace ? s[i] : -99;
    }
    const void *sb = inplace ? MPI_IN_PLACE : s;
    MPI_Request q;
    if (form == 0) {
        MPI_OK(ex ? MPI_Exscan(sb, r, n, MPI_LONG, MPI_SUM, MPI_COMM_WORLD) : MPI_Scan(sb, r, n, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    } else if (form == 1) {
        MPI_OK(ex ? MPI_Iexscan_c(sb, r, n, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, &q) : MPI_Iscan_c(sb, r, n, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, &q));
        MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    } else {
        MPI_OK(ex ? MPI_Exscan_c(sb, r, n, MPI_LONG, MPI_SUM, MPI_COMM_WORLD) : MPI_Scan_c(sb, r, n, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    }
    int hi = ex ? rank : rank + 1;
    for (int i = 0; i < n; i++) {
        if (ex && rank == 0) {
            CHECK(r[i] == (inplace ? lval(0, i) : -99), "exscan rank 0 receive buffer written at %d", i);
            continue;
        }
        long e = 0;
        for (int q2 = 0; q2 < hi; q2++)
            e += lval(q2, i);
        CHECK(r[i] == e, "%s n=%d inplace=%d form=%d [%d] = %ld, expected %ld", ex ? "exscan" : "scan", n, inplace, form, i, r[i], e);
    }
    CHECK(r[n] == (inplace ? lval(rank, n) : -99), "scan wrote past the count");
    if (!inplace)
        for (int i = 0; i < n; i++)
            CHECK(s[i] == lval(rank, i), "send buffer changed");
    free(s);
    free(r);
}

static void other_ops(void)
{
    int s[3] = {rank + 1, (rank % 2) ? 2 : 1, 10 - rank}, r[3];
    MPI_OK(MPI_Scan(s, r, 1, MPI_INT, MPI_PROD, MPI_COMM_WORLD));
    int e = 1;
    for (int q = 0; q <= rank; q++)
        e *= q + 1;
    CHECK(r[0] == e, "scan PROD = %d, expected %d", r[0], e);
    double d = (double)((rank * 37) % 13), dr = -1;
    MPI_OK(MPI_Exscan(&d, &dr, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    if (rank > 0) {
        double m = -1;
        for (int q = 0; q < rank; q++)
            m = (double)((q * 37) % 13) > m ? (double)((q * 37) % 13) : m;
        CHECK(dr == m, "exscan MAX = %g, expected %g", dr, m);
    }
}

static void persistent(void)
{
    int n = 9, s[9], r[9], x[9];
    MPI_Request q[2];
    MPI_OK(MPI_Scan_init(s, r, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &q[0]));
    MPI_OK(MPI_Exscan_init_c(s, x, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &q[1]));
    for (int it = 0; it < 4; it++) {
        for (int i = 0; i < n; i++) {
            s[i] = rank * it + i;
            x[i] = -5;
        }
        MPI_OK(MPI_Start(&q[0]));
        MPI_OK(MPI_Start(&q[1]));
        MPI_OK(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
        for (int i = 0; i < n; i++) {
            int e = 0;
            for (int p = 0; p < rank; p++)
                e += p * it + i;
            CHECK(r[i] == e + rank * it + i, "persistent scan it=%d [%d] = %d", it, i, r[i]);
            CHECK(rank == 0 ? x[i] == -5 : x[i] == e, "persistent exscan it=%d [%d] = %d", it, i, x[i]);
        }
    }
    MPI_OK(MPI_Request_free(&q[0]));
    MPI_OK(MPI_Request_free(&q[1]));
}

static void errors(void)
{
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int s = 1, r = 0;
    CHECK_CLASS(MPI_Scan(&s, &r, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD), MPI_ERR_OP);
    if (!oxc_is_mpich()) /* MPICH 4.0.2 does not check the count here (it crashes) */
        CHECK_CLASS(MPI_Exscan(&s, &r, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Scan(&s, &r, 1, MPI_INT, MPI_SUM, MPI_COMM_NULL), MPI_ERR_COMM);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    if (size >= 2) {
        MPI_Comm local, ic;
        MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &local));
        MPI_OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, 1 - rank % 2, 9, &ic));
        MPI_OK(MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN));
        CHECK_CLASS(MPI_Scan(&s, &r, 1, MPI_INT, MPI_SUM, ic), MPI_ERR_COMM);
        CHECK_CLASS(MPI_Exscan(&s, &r, 1, MPI_INT, MPI_SUM, ic), MPI_ERR_COMM);
        MPI_OK(MPI_Comm_free(&ic));
        MPI_OK(MPI_Comm_free(&local));
    }
}

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int ns[4] = {0, 1, 13, 5000};
    for (int k = 0; k < 4; k++)
        for (int ex = 0; ex < 2; ex++)
            for (int inplace = 0; inplace < 2; inplace++)
                for (int form = 0; form < 3; form++)
                    scan_long(ns[k], ex, inplace, form);
    other_ops();
    persistent();
    errors();
    MPI_OK(MPI_Finalize());
    return 0;
}
