/* oxmpi-test: ranks=1,2,3,5,8 timeout=300 mpich=skip */
/* oxmpi-test: env=OXMPI_ALLREDUCE_ALGORITHM=clairvoyant,OXMPI_BCAST_ALGORITHM=arrival_tree */
/* oxmpi-test: env=OXMPI_ALLREDUCE_ALGORITHM=sorted_linear,OXMPI_BCAST_ALGORITHM=arrival_tree */
/* oxmpi-test: env=OXMPI_ALLREDUCE_ALGORITHM=prereduced_ring env=- */
/* oxmpi's PAP-aware MPI_Allreduce (clairvoyant, sorted_linear, prereduced_ring, forced by the
   env= lines above; env=- lets `auto` choose) and MPI_Bcast (arrival_tree) under random
   arrivals: before every call each rank sleeps a fresh random time and reports it (or not) with
   MPIX_Pap_progress / MPIX_Pap_expect, correctly, wrongly (says soon, comes late; says an hour,
   comes at once), late, or not at all. Every result element is checked exactly: counts 0, 1, 7,
   1001 and 70001 (not multiples of the rank count; the last above `auto`'s 256 KiB threshold),
   MPI_SUM on int and on exact-valued doubles, MPI_MIN on int, with and without MPI_IN_PLACE;
   a non-commutative user op stays in rank order (the PAP-aware algorithms fall back); every
   broadcast root with the root arriving first and the others late. */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include "oxtest.h"
#include <time.h>

static int rank, n;
static uint64_t seed;

static void nap(long us)
{
    if (us > 0) {
        struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
        nanosleep(&ts, NULL);
    }
}

enum { CORRECT, EXPECT, WRONG_SOON, WRONG_LATE, LATE, MISSING, NSCEN };

/* Computes for `us` microseconds, reporting as scenario `sc` says. */
static void compute(int sc, long us)
{
    switch (sc) {
    case CORRECT:
        MPI_OK(MPIX_Pap_progress(MPI_COMM_WORLD, 0.0));
        nap(us / 2);
        MPI_OK(MPIX_Pap_progress(MPI_COMM_WORLD, 0.5));
        nap(us / 2);
        break;
    case EXPECT:
        MPI_OK(MPIX_Pap_expect(MPI_COMM_WORLD, us * 1e-6));
        nap(us);
        break;
    case WRONG_SOON:
        MPI_OK(MPIX_Pap_expect(MPI_COMM_WORLD, 0.0));
        nap(us + 1000);
        break;
    case WRONG_LATE:
        MPI_OK(MPIX_Pap_expect(MPI_COMM_WORLD, rank % 2 ? 3600.0 : 0.5));
        break;
    case LATE:
        nap(us);
        MPI_OK(MPIX_Pap_expect(MPI_COMM_WORLD, 0.0));
        break;
    case MISSING:
        if (rank == n - 1)
            MPI_OK(MPIX_Pap_expect(MPI_COMM_WORLD, us * 1e-6));
        nap(us);
        break;
    }
}

/* A fresh random delay up to 1.5 ms (the same draw sequence on every rank, offset by rank). */
static long delay(void)
{
    uint64_t r = 0;
    for (int q = 0; q <= rank; q++)
        r = oxt_rand(&seed);
    for (int q = rank + 1; q < n; q++)
        (void)oxt_rand(&seed);
    return (long)(r % 1500);
}

static int ival(int r, long i, int it) { return (r + 1) * (int)((i + it) % 1013) - 3 * r; }
static double dval(int r, long i, int it) { return (double)((r + 2) * (int)((i * 3 + it) % 977)) * 0.5 - r; }
static int mval(int r, long i, int it) { return (int)((i * 7 + (long)r * 13 + it) % 1001); }

#define ALLREDUCE_CASE(T, DT, OP, VAL, COMB, NAME)                                                   \
    static void NAME(int count, int in_place, int it, int sc)                                         \
    {                                                                                                 \
        T *s = oxt_malloc(sizeof(T) * (size_t)(count + 1)), *r = oxt_malloc(sizeof(T) * (size_t)(count + 1)); \
        for (long i = 0; i <= count; i++) {                                                           \
            s[i] = VAL(rank, i, it);                                                                  \
            r[i] = (T)-77;                                                                            \
        }                                                                                             \
        compute(sc, delay());                                                                         \
        if (in_place) {                                                                               \
            memcpy(r, s, sizeof(T) * (size_t)count);                                                  \
            MPI_OK(MPI_Allreduce(MPI_IN_PLACE, r, count, DT, OP, MPI_COMM_WORLD));                    \
        } else {                                                                                      \
            MPI_OK(MPI_Allreduce(s, r, count, DT, OP, MPI_COMM_WORLD));                               \
        }                                                                                             \
        for (long i = 0; i < count; i++) {                                                            \
            T e = VAL(0, i, it);                                                                      \
            for (int q = 1; q < n; q++)                                                               \
                e = COMB(e, VAL(q, i, it));                                                           \
            if (r[i] != e || s[i] != VAL(rank, i, it)) {                                              \
                CHECK(0, #NAME " count %d in_place %d it %d scenario %d: element %ld is %g (send %g), expected %g", \
                      count, in_place, it, sc, i, (double)r[i], (double)s[i], (double)e);           \
                break;                                                                                \
            }                                                                                         \
        }                                                                                             \
        CHECK(r[count] == (T)-77, #NAME " count %d: wrote past the end", count);                     \
        free(s);                                                                                      \
        free(r);                                                                                      \
    }

static int isum(int a, int b) { return a + b; }
static double dsum(double a, double b) { return a + b; }
static int imin(int a, int b) { return a < b ? a : b; }
ALLREDUCE_CASE(int, MPI_INT, MPI_SUM, ival, isum, int_sum)
ALLREDUCE_CASE(double, MPI_DOUBLE, MPI_SUM, dval, dsum, double_sum)
ALLREDUCE_CASE(int, MPI_INT, MPI_MIN, mval, imin, int_min)

/* Associative, not commutative: the left operand wins unless it is 0, so in rank order the
   result is the value of the lowest rank whose value is not 0. */
static void first_nonzero(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    int *a = in, *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] = a[i] != 0 ? a[i] : b[i];
}

static int fval(int r, long i, int it) { return (r + i + it) % 3 == 0 ? 0 : r * 1000 + (int)(i % 997) + 1; }

static void ordered(MPI_Op op, int count, int it)
{
    int *s = oxt_malloc(sizeof(int) * (size_t)count + 1), *r = oxt_malloc(sizeof(int) * (size_t)count + 1);
    for (long i = 0; i < count; i++)
        s[i] = fval(rank, i, it);
    compute(it % NSCEN, delay());
    MPI_OK(MPI_Allreduce(s, r, count, MPI_INT, op, MPI_COMM_WORLD));
    for (long i = 0; i < count; i++) {
        int e = 0;
        for (int q = 0; q < n && e == 0; q++)
            e = fval(q, i, it);
        if (r[i] != e) {
            CHECK(0, "non-commutative count %d it %d: element %ld is %d, expected %d", count, it, i, r[i], e);
            break;
        }
    }
    free(s);
    free(r);
}

static void bcast(int count, int root, int it, int sc)
{
    int *b = oxt_malloc(sizeof(int) * (size_t)count + 1);
    for (long i = 0; i < count; i++)
        b[i] = rank == root ? ival(root, i, it) : -5;
    /* The root arrives first, the others late. */
    long us = delay();
    compute(sc, rank == root ? 0 : 300 + us);
    MPI_OK(MPI_Bcast(b, count, MPI_INT, root, MPI_COMM_WORLD));
    for (long i = 0; i < count; i++)
        if (b[i] != ival(root, i, it)) {
            CHECK(0, "bcast count %d root %d it %d scenario %d: element %ld is %d, expected %d", count, root, it, sc, i, b[i], ival(root, i, it));
            break;
        }
    free(b);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    static const int counts[] = {0, 1, 7, 1001, 70001};
    int it = 0;
    for (int rep = 0; rep < 2; rep++)
        for (int sc = 0; sc < NSCEN; sc++)
            for (int c = 0; c < 5; c++, it++) {
                seed = 0x9e3779b97f4a7c15ull * (uint64_t)(it + 1);
                int_sum(counts[c], it % 2, it, sc);
                double_sum(counts[c], (it + 1) % 2, it, sc);
                int_min(counts[c], it % 2, it, (sc + rank) % NSCEN); /* ranks disagree on how they report */
            }
    for (int sc = 0; sc < NSCEN; sc++)
        for (int root = 0; root < n; root++, it++) {
            if (n > 5 && root % 3 != 0 && root != n - 1)
                continue;
            seed = 0x2545f4914f6cdd1dull * (uint64_t)(it + 1);
            bcast(70001, root, it, sc);
            bcast(sc % 2 ? 1001 : 1, root, it, sc);
            bcast(0, root, it, sc);
        }
    MPI_Op op;
    MPI_OK(MPI_Op_create(first_nonzero, 0, &op));
    for (int k = 0; k < NSCEN; k++, it++) {
        seed = 77 + (uint64_t)it;
        ordered(op, k % 2 ? 70001 : 5, it);
    }
    MPI_Op_free(&op);
    MPI_Finalize();
    if (rank == 0)
        printf("pap_allreduce_bcast: OK\n");
    return 0;
}
