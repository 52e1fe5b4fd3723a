/* oxmpi-test: ranks=2,4,8 timeout=240 mpich=skip */
/* oxmpi-test: env-matrix=OXMPI_REDUCE_ALGORITHM=clairvoyant|arrival|auto */
/* oxmpi's progress reports (MPIX_Pap_progress, MPIX_Pap_expect) for Clairvoyant MPI_Reduce.
   Absurd input (NaN, negative, fractions above 1, infinite times, MPI_COMM_NULL, an
   intercommunicator) is an MPI error of the right class whose message names the argument.
   Reports never change a result: MPI_Reduce stays exact with correct reports (rate
   extrapolation and announced times), wrong ones (a rank that says "soon" arrives late, one
   that says "late" comes at once), late ones (made after the other ranks entered), missing ones
   (some ranks never report), on MPI_COMM_WORLD and on the halves of a split (which share the
   world's ranks), for every root, small and large counts; and a non-commutative user op stays
   in rank order with reports going on. */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include "oxcoll.h"
#include <math.h>
#include <time.h>

static void nap(long us)
{
    if (us > 0) {
        struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
        nanosleep(&ts, NULL);
    }
}

static int val(int r, long i, int it) { return (r + 1) * (int)((i + it) % 1013) - 3 * r; }

enum { CORRECT, EXPECT, WRONG_SOON, WRONG_LATE, LATE, MISSING, NSCEN };
static const char *names[] = {"correct progress", "correct expect", "wrong (says soon)", "wrong (says late)", "late", "missing"};

/* Rank `rank` of `comm` computes for `us` microseconds and reports it as scenario `sc` says. */
static void compute(MPI_Comm comm, int rank, int sc, long us)
{
    switch (sc) {
    case CORRECT:
        MPI_OK(MPIX_Pap_progress(comm, 0.0));
        for (int k = 1; k <= 4; k++) {
            nap(us / 4);
            MPI_OK(MPIX_Pap_progress(comm, k / 4.0));
        }
        break;
    case EXPECT:
        MPI_OK(MPIX_Pap_expect(comm, us * 1e-6));
        nap(us);
        break;
    case WRONG_SOON: /* says it is nearly there, then takes its time */
        MPI_OK(MPIX_Pap_expect(comm, 0.0));
        MPI_OK(MPIX_Pap_progress(comm, 0.0));
        MPI_OK(MPIX_Pap_progress(comm, 0.9));
        nap(us + 2000);
        break;
    case WRONG_LATE: /* says an hour, comes at once (odd ranks), or a day of progress */
        if (rank % 2)
            MPI_OK(MPIX_Pap_expect(comm, 3600.0));
        else {
            MPI_OK(MPIX_Pap_progress(comm, 0.0));
            nap(50);
            MPI_OK(MPIX_Pap_progress(comm, 1e-9));
        }
        break;
    case LATE: /* the report comes after the computation, just before the call */
        nap(us);
        MPI_OK(MPIX_Pap_expect(comm, 0.0));
        break;
    case MISSING: /* only rank 0 reports */
        if (rank == 0)
            MPI_OK(MPIX_Pap_expect(comm, us * 1e-6));
        nap(us);
        break;
    }
}

static void reduce_check(MPI_Comm comm, int count, int root, int it, int sc)
{
    int rank, n;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &n);
    int *s = oxt_malloc(sizeof(int) * (size_t)count), *r = oxt_malloc(sizeof(int) * (size_t)count);
    for (long i = 0; i < count; i++) {
        s[i] = val(rank, i, it);
        r[i] = -7;
    }
    compute(comm, rank, sc, (long)((rank * 7 + it * 3) % n) * 600);
    MPI_OK(MPI_Reduce(s, r, count, MPI_INT, MPI_SUM, root, comm));
    for (long i = 0; i < count; i++) {
        if (rank == root) {
            long want = 0;
            for (int q = 0; q < n; q++)
                want += val(q, i, it);
            if (r[i] != want) {
                CHECK(0, "%s, %d ranks, count %d, root %d, iteration %d: element %ld is %d, expected %ld", names[sc], n, count, root, it, i, r[i], want);
                break;
            }
        } else if (r[i] != -7) {
            CHECK(0, "%s: a non-root's receive buffer changed", names[sc]);
            break;
        }
    }
    free(s);
    free(r);
}

/* Associative, not commutative: the left operand wins unless it is 0. In rank order the result
   is the value of the lowest rank whose value is not 0. */
static void first_nonzero(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    int *a = in, *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] = a[i] != 0 ? a[i] : b[i];
}

static void ordered_check(MPI_Op op, int count, int root, int it)
{
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int *s = oxt_malloc(sizeof(int) * (size_t)count), *r = oxt_malloc(sizeof(int) * (size_t)count);
    for (long i = 0; i < count; i++)
        s[i] = (rank + i + it) % 3 == 0 ? 0 : rank * 1000 + (int)(i % 997) + 1;
    compute(MPI_COMM_WORLD, rank, it % NSCEN, (long)((n - rank + it) % n) * 500);
    MPI_OK(MPI_Reduce(s, r, count, MPI_INT, op, root, MPI_COMM_WORLD));
    if (rank == root)
        for (long i = 0; i < count; i++) {
            int want = 0;
            for (int q = 0; q < n && want == 0; q++)
                want = (q + i + it) % 3 == 0 ? 0 : q * 1000 + (int)(i % 997) + 1;
            if (r[i] != want) {
                CHECK(0, "non-commutative op, root %d, iteration %d: element %ld is %d, expected %d (rank order)", root, it, i, r[i], want);
                break;
            }
        }
    free(s);
    free(r);
}

static void expect_error(int rc, int cls, const char *what, const char *word)
{
    int c = -1, len;
    char msg[MPI_MAX_ERROR_STRING];
    MPI_Error_class(rc, &c);
    MPI_Error_string(rc, msg, &len);
    CHECK(c == cls, "%s: error class %d, expected %d", what, c, cls);
    CHECK(strstr(msg, word) != NULL, "%s: the message \"%s\" does not name %s", what, msg, word);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    expect_error(MPIX_Pap_progress(MPI_COMM_WORLD, NAN), MPI_ERR_ARG, "progress NaN", "fraction_done");
    expect_error(MPIX_Pap_progress(MPI_COMM_WORLD, -0.25), MPI_ERR_ARG, "progress -0.25", "fraction_done");
    expect_error(MPIX_Pap_progress(MPI_COMM_WORLD, 1.5), MPI_ERR_ARG, "progress 1.5", "fraction_done");
    expect_error(MPIX_Pap_progress(MPI_COMM_WORLD, INFINITY), MPI_ERR_ARG, "progress inf", "fraction_done");
    expect_error(MPIX_Pap_expect(MPI_COMM_WORLD, -1.0), MPI_ERR_ARG, "expect -1", "seconds_until_arrival");
    expect_error(MPIX_Pap_expect(MPI_COMM_WORLD, NAN), MPI_ERR_ARG, "expect NaN", "seconds_until_arrival");
    expect_error(MPIX_Pap_expect(MPI_COMM_WORLD, INFINITY), MPI_ERR_ARG, "expect inf", "seconds_until_arrival");
    expect_error(MPIX_Pap_progress(MPI_COMM_NULL, 0.5), MPI_ERR_COMM, "progress on MPI_COMM_NULL", "MPI_COMM_NULL");
    expect_error(MPIX_Pap_expect(MPI_COMM_NULL, 0.5), MPI_ERR_COMM, "expect on MPI_COMM_NULL", "MPI_COMM_NULL");
    MPI_OK(MPIX_Pap_progress(MPI_COMM_SELF, 0.5)); /* one rank: nothing to share, no error */
    MPI_OK(PMPIX_Pap_expect(MPI_COMM_SELF, 0.0));
    {
        MPI_Comm half, inter;
        MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half));
        MPI_OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 99, &inter));
        MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
        expect_error(MPIX_Pap_progress(inter, 0.5), MPI_ERR_COMM, "progress on an intercommunicator", "intracommunicator");
        MPI_Comm_free(&inter);
        MPI_Comm_free(&half);
    }

    /* Every scenario, large and small, every root (absurd reports in between change nothing). */
    int it = 0;
    for (int sc = 0; sc < NSCEN; sc++)
        for (int root = 0; root < n; root++, it++) {
            MPIX_Pap_progress(MPI_COMM_WORLD, NAN);
            reduce_check(MPI_COMM_WORLD, 100003, root, it, sc);
            reduce_check(MPI_COMM_WORLD, 7, (root + 1) % n, it, sc);
        }
    /* Mixed scenarios call after call: ranks disagree on how they report. */
    for (int k = 0; k < 2 * NSCEN; k++, it++)
        reduce_check(MPI_COMM_WORLD, 100003, k % n, it, (k + rank) % NSCEN);
    /* The halves of a split share world ranks (and the context id) with each other. */
    MPI_Comm half;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, n - rank, &half));
    int hn;
    MPI_Comm_size(half, &hn);
    for (int k = 0; k < 2 * NSCEN; k++, it++) {
        reduce_check(half, 100003, k % hn, it, k % NSCEN);
        reduce_check(MPI_COMM_WORLD, 100003, k % n, it, (k + 1) % NSCEN);
    }
    MPI_Comm_free(&half);
    /* Non-commutative: rank order whatever the reports say. */
    MPI_Op op;
    MPI_OK(MPI_Op_create(first_nonzero, 0, &op));
    for (int k = 0; k < 2 * NSCEN; k++, it++)
        ordered_check(op, k % 2 ? 100003 : 5, k % n, it);
    MPI_Op_free(&op);
    MPI_Finalize();
    if (rank == 0)
        printf("pap_reports: OK\n");
    return 0;
}
