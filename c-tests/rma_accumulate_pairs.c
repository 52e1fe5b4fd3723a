/* oxmpi-test: ranks=1,2,3,4,8 timeout=60 */
/* The accumulate family on the value/index pair types (MPI_SHORT_INT, MPI_LONG_INT,
   MPI_DOUBLE_INT, MPI_2INT, MPI_FLOAT_INT, MPI_LONG_DOUBLE_INT) with MINLOC, MAXLOC, REPLACE and
   NO_OP, on long double and long double complex, and MPI_Compare_and_swap on MPI_C_BOOL, on an
   allocated window and on one over user memory.
   Stress: every rank issues MAXLOC MPI_Fetch_and_op on one pair of rank 0 under lock_all; each
   fetched pair must be a pair that really existed (its value is the one its index was sent with:
   no torn pair), the values one rank fetches never decrease, and the final pair is the maximum
   with the lowest index among equal values. */
#include "oxtest.h"
#include <complex.h>
#include <stdbool.h>
#include <string.h>

#define ITERS 40
#define SLOT 64 /* bytes between the pairs of different types in the window */

static int rank, size;

/* The value rank r sends at iteration k: many ties across ranks and iterations. */
static int vof(int r, int k) { return (r * 7 + k * 13) % 50; }
static int idx(int r, int k) { return r * 1000 + k; }

typedef struct { short v; int i; } short_int;
typedef struct { long v; int i; } long_int;
typedef struct { double v; int i; } double_int;
typedef struct { int v; int i; } two_int;
typedef struct { float v; int i; } float_int;
typedef struct { long double v; int i; } ldouble_int;

/* stress_NAME(win, slot): the MAXLOC / MINLOC / REPLACE / NO_OP checks for one pair type. */
#define DEFINE_PAIR(T, NAME, DT)                                                                    \
    static void stress_##NAME(MPI_Win win, int slot)                                                \
    {                                                                                               \
        MPI_Aint disp = (MPI_Aint)slot * SLOT;                                                      \
        T init, mine, old, fin;                                                                     \
        memset(&init, 0, sizeof init);                                                              \
        init.v = -1;                                                                                \
        init.i = -1;                                                                                \
        MPI_OK(MPI_Win_lock_all(0, win));                                                           \
        if (rank == 0) {                                                                            \
            MPI_OK(MPI_Fetch_and_op(&init, &old, DT, 0, disp, MPI_REPLACE, win));                   \
            MPI_OK(MPI_Win_flush(0, win));                                                          \
        }                                                                                           \
        MPI_OK(MPI_Win_unlock_all(win));                                                            \
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));                                                        \
        MPI_OK(MPI_Win_lock_all(0, win));                                                           \
        int last = -1;                                                                              \
        for (int k = 0; k < ITERS; k++) {                                                           \
            memset(&mine, 0, sizeof mine);                                                          \
            mine.v = vof(rank, k);                                                                  \
            mine.i = idx(rank, k);                                                                  \
            MPI_OK(MPI_Fetch_and_op(&mine, &old, DT, 0, disp, MPI_MAXLOC, win));                    \
            MPI_OK(MPI_Win_flush(0, win));                                                          \
            int ov = (int)old.v, oi = old.i;                                                        \
            CHECK(oi == -1 ? ov == -1 : (oi / 1000 < size && oi % 1000 < ITERS && ov == vof(oi / 1000, oi % 1000)), \
                  #NAME " MAXLOC fetched a pair that never existed: (%d, %d)", ov, oi);             \
            CHECK(ov >= last, #NAME " MAXLOC: fetched value %d after %d", ov, last);                \
            last = ov;                                                                              \
        }                                                                                           \
        MPI_OK(MPI_Win_unlock_all(win));                                                            \
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));                                                        \
        /* the expected maximum: value 49 if reached, the lowest index among its senders */         \
        int ev = -1, ei = -1;                                                                       \
        for (int r = 0; r < size; r++)                                                              \
            for (int k = 0; k < ITERS; k++)                                                         \
                if (vof(r, k) > ev || (vof(r, k) == ev && idx(r, k) < ei)) {                        \
                    ev = vof(r, k);                                                                 \
                    ei = idx(r, k);                                                                 \
                }                                                                                   \
        MPI_OK(MPI_Win_lock_all(0, win));                                                           \
        MPI_OK(MPI_Fetch_and_op(NULL, &fin, DT, 0, disp, MPI_NO_OP, win));                          \
        MPI_OK(MPI_Win_flush(0, win));                                                              \
        CHECK((int)fin.v == ev && fin.i == ei, #NAME " MAXLOC final (%d, %d), expected (%d, %d)",   \
              (int)fin.v, fin.i, ev, ei);                                                           \
        MPI_OK(MPI_Win_unlock_all(win));                                                            \
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));                                                        \
        /* MINLOC through MPI_Get_accumulate from every rank: the minimum, lowest index */          \
        MPI_OK(MPI_Win_lock_all(0, win));                                                           \
        memset(&mine, 0, sizeof mine);                                                              \
        mine.v = -2 - rank % 3;                                                                     \
        mine.i = 500 - rank;                                                                        \
        MPI_OK(MPI_Get_accumulate(&mine, 1, DT, &old, 1, DT, 0, disp, 1, DT, MPI_MINLOC, win));     \
        MPI_OK(MPI_Win_flush(0, win));                                                              \
        CHECK((int)old.v <= ev && (int)old.v >= -4, #NAME " MINLOC fetched (%d, %d)", (int)old.v, old.i); \
        MPI_OK(MPI_Win_unlock_all(win));                                                            \
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));                                                        \
        int mv = 0, mi = 0;                                                                         \
        for (int r = 0; r < size; r++)                                                              \
            if (-2 - r % 3 < mv || (-2 - r % 3 == mv && 500 - r < mi)) {                            \
                mv = -2 - r % 3;                                                                    \
                mi = 500 - r;                                                                       \
            }                                                                                       \
        MPI_OK(MPI_Win_lock_all(0, win));                                                           \
        MPI_OK(MPI_Get_accumulate(NULL, 0, DT, &fin, 1, DT, 0, disp, 1, DT, MPI_NO_OP, win));       \
        MPI_OK(MPI_Win_flush(0, win));                                                              \
        CHECK((int)fin.v == mv && fin.i == mi, #NAME " MINLOC final (%d, %d), expected (%d, %d)",   \
              (int)fin.v, fin.i, mv, mi);                                                           \
        MPI_OK(MPI_Win_unlock_all(win));                                                            \
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));                                                        \
        /* REPLACE swaps: every fetched pair is one some rank wrote, or the MINLOC result */        \
        MPI_OK(MPI_Win_lock_all(0, win));                                                           \
        for (int k = 0; k < ITERS / 4; k++) {                                                       \
            memset(&mine, 0, sizeof mine);                                                          \
            mine.v = vof(rank, k);                                                                  \
            mine.i = idx(rank, k);                                                                  \
            MPI_OK(MPI_Fetch_and_op(&mine, &old, DT, 0, disp, MPI_REPLACE, win));                   \
            MPI_OK(MPI_Win_flush(0, win));                                                          \
            int ov = (int)old.v, oi = old.i;                                                        \
            CHECK((ov == mv && oi == mi) || (oi >= 0 && oi / 1000 < size && oi % 1000 < ITERS && ov == vof(oi / 1000, oi % 1000)), \
                  #NAME " REPLACE fetched a pair that never existed: (%d, %d)", ov, oi);            \
        }                                                                                           \
        MPI_OK(MPI_Win_unlock_all(win));                                                            \
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));                                                        \
    }

DEFINE_PAIR(short_int, short_int, MPI_SHORT_INT)
DEFINE_PAIR(long_int, long_int, MPI_LONG_INT)
DEFINE_PAIR(double_int, double_int, MPI_DOUBLE_INT)
DEFINE_PAIR(two_int, two_int, MPI_2INT)
DEFINE_PAIR(float_int, float_int, MPI_FLOAT_INT)
DEFINE_PAIR(ldouble_int, long_double_int, MPI_LONG_DOUBLE_INT)

/* long double SUM / MAX and long double complex SUM from every rank: exact in 80-bit (each
   addend 1 + (r+1) 2^-60 needs the 64-bit mantissa), and a C_BOOL compare-and-swap that exactly
   one rank wins. */
static void long_double_and_bool(MPI_Win win, int slot)
{
    MPI_Aint d_ld = (MPI_Aint)slot * SLOT, d_max = d_ld + 16, d_c = d_ld + 32, d_flag = d_ld + 64, d_wins = d_ld + 68;
    long double zero = 0.0L, r_ld;
    long double _Complex czero = 0.0L, r_c;
    bool f = false, t = true, got = true;
    int izero = 0, r_i;
    MPI_OK(MPI_Win_lock_all(0, win));
    if (rank == 0) {
        MPI_OK(MPI_Fetch_and_op(&zero, &r_ld, MPI_LONG_DOUBLE, 0, d_ld, MPI_REPLACE, win));
        MPI_OK(MPI_Fetch_and_op(&zero, &r_ld, MPI_LONG_DOUBLE, 0, d_max, MPI_REPLACE, win));
        MPI_OK(MPI_Fetch_and_op(&czero, &r_c, MPI_C_LONG_DOUBLE_COMPLEX, 0, d_c, MPI_REPLACE, win));
        MPI_OK(MPI_Fetch_and_op(&f, &got, MPI_C_BOOL, 0, d_flag, MPI_REPLACE, win));
        MPI_OK(MPI_Fetch_and_op(&izero, &r_i, MPI_INT, 0, d_wins, MPI_REPLACE, win));
        MPI_OK(MPI_Win_flush(0, win));
    }
    MPI_OK(MPI_Win_unlock_all(win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    MPI_OK(MPI_Win_lock_all(0, win));
    long double mine = 1.0L + (long double)(rank + 1) * 0x1p-60L;
    MPI_OK(MPI_Accumulate(&mine, 1, MPI_LONG_DOUBLE, 0, d_ld, 1, MPI_LONG_DOUBLE, MPI_SUM, win));
    MPI_OK(MPI_Fetch_and_op(&mine, &r_ld, MPI_LONG_DOUBLE, 0, d_max, MPI_MAX, win));
    MPI_OK(MPI_Win_flush(0, win));
    CHECK(r_ld == 0.0L || (r_ld > 1.0L && r_ld <= 1.0L + size * 0x1p-60L && r_ld != mine),
          "long double MAX fetched %La", r_ld);
    long double _Complex cm = mine + (long double)(rank % 2) * 0x1p-60L * I;
    MPI_OK(MPI_Get_accumulate(&cm, 1, MPI_C_LONG_DOUBLE_COMPLEX, &r_c, 1, MPI_C_LONG_DOUBLE_COMPLEX, 0, d_c, 1,
                              MPI_C_LONG_DOUBLE_COMPLEX, MPI_SUM, win));
    /* the lock: exactly one rank turns false into true */
    MPI_OK(MPI_Compare_and_swap(&t, &f, &got, MPI_C_BOOL, 0, d_flag, win));
    MPI_OK(MPI_Win_flush(0, win));
    int won = got == false;
    MPI_OK(MPI_Accumulate(&won, 1, MPI_INT, 0, d_wins, 1, MPI_INT, MPI_SUM, win));
    MPI_OK(MPI_Win_unlock_all(win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    MPI_OK(MPI_Win_lock_all(0, win));
    MPI_OK(MPI_Fetch_and_op(NULL, &r_ld, MPI_LONG_DOUBLE, 0, d_ld, MPI_NO_OP, win));
    MPI_OK(MPI_Win_flush(0, win));
    long double esum = (long double)size + (long double)(size * (size + 1) / 2) * 0x1p-60L;
    CHECK(r_ld == esum, "long double SUM = %La, expected %La", r_ld, esum);
    MPI_OK(MPI_Fetch_and_op(NULL, &r_ld, MPI_LONG_DOUBLE, 0, d_max, MPI_NO_OP, win));
    MPI_OK(MPI_Win_flush(0, win));
    CHECK(r_ld == 1.0L + size * 0x1p-60L, "long double MAX = %La", r_ld);
    MPI_OK(MPI_Get_accumulate(NULL, 0, MPI_C_LONG_DOUBLE_COMPLEX, &r_c, 1, MPI_C_LONG_DOUBLE_COMPLEX, 0, d_c, 1,
                              MPI_C_LONG_DOUBLE_COMPLEX, MPI_NO_OP, win));
    MPI_OK(MPI_Win_flush(0, win));
    CHECK(creall(r_c) == esum && cimagl(r_c) == (long double)(size / 2) * 0x1p-60L, "long double complex SUM = %La%+La i",
          creall(r_c), cimagl(r_c));
    MPI_OK(MPI_Fetch_and_op(NULL, &got, MPI_C_BOOL, 0, d_flag, MPI_NO_OP, win));
    MPI_OK(MPI_Fetch_and_op(NULL, &r_i, MPI_INT, 0, d_wins, MPI_NO_OP, win));
    MPI_OK(MPI_Win_flush(0, win));
    CHECK(got == true && r_i == 1, "C_BOOL compare-and-swap: flag %d, %d winners (expected 1)", (int)got, r_i);
    MPI_OK(MPI_Win_unlock_all(win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

static void all(MPI_Win win)
{
    stress_short_int(win, 0);
    stress_long_int(win, 1);
    stress_double_int(win, 2);
    stress_two_int(win, 3);
    stress_float_int(win, 4);
    stress_long_double_int(win, 5);
    long_double_and_bool(win, 6);
}

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    const MPI_Aint bytes = 10 * SLOT;

    /* an allocated window */
    void *base;
    MPI_Win win;
    MPI_OK(MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    all(win);
    MPI_OK(MPI_Win_free(&win));

    /* a window over user memory (cross-process accumulates in processes mode) */
    void *mem;
    MPI_OK(MPI_Alloc_mem(bytes, MPI_INFO_NULL, &mem));
    memset(mem, 0, (size_t)bytes);
    MPI_OK(MPI_Win_create(mem, bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    all(win);
    MPI_OK(MPI_Win_free(&win));
    MPI_OK(MPI_Free_mem(mem));

    MPI_OK(MPI_Finalize());
    return 0;
}
