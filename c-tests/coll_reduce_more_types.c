/* oxmpi-test: ranks=1,2,3,4,8 timeout=60 */
/* Predefined reductions on the types beyond the standard's core lists that MPICH and Open MPI
   accept: MPI_CHAR / MPI_SIGNED_CHAR / MPI_UNSIGNED_CHAR in the arithmetic, logical and bitwise
   ops (OSU's collectives reduce MPI_CHAR with MPI_SUM), MPI_LONG_DOUBLE (x87 80-bit: values that
   only a 64-bit mantissa holds exactly), MPI_C_LONG_DOUBLE_COMPLEX and
   MPI_CXX_LONG_DOUBLE_COMPLEX, MPI_LONG_DOUBLE_INT with MINLOC/MAXLOC (ties: the lower index),
   MPI_C_BOOL and MPI_CXX_BOOL in the logical ops. Each through MPI_Allreduce, MPI_Reduce (to the
   last rank), MPI_Scan and MPI_Reduce_local, with exact expected values folded in rank order. */
#include "oxtest.h"
#include <complex.h>
#include <stdbool.h>
#include <string.h>

#define N 7

static int rank, size;

typedef struct {
    long double v;
    int i;
} ld_int;

static int eq_scalar_ld(long double a, long double b) { return a == b; }
static int eq_ldc(long double _Complex a, long double _Complex b) { return a == b; }
static int eq_ldi(ld_int a, ld_int b) { return a.v == b.v && a.i == b.i; }

/* check_NAME(dt, opname, op, val, comb, eq): all four calls on N elements. */
#define DEFINE_CHECK(T, NAME, EQ)                                                                   \
    static void check_##NAME(MPI_Datatype dt, const char *opn, MPI_Op op, T (*val)(int, int),       \
                             T (*comb)(T, T))                                                       \
    {                                                                                               \
        T s[N], r[N], e[N], pre[N], a[N], b[N];                                                     \
        int root = size - 1;                                                                        \
        for (int i = 0; i < N; i++) {                                                               \
            s[i] = val(rank, i);                                                                    \
            e[i] = val(0, i);                                                                       \
            for (int q = 1; q < size; q++)                                                          \
                e[i] = comb(e[i], val(q, i));                                                       \
            pre[i] = val(0, i);                                                                     \
            for (int q = 1; q <= rank; q++)                                                         \
                pre[i] = comb(pre[i], val(q, i));                                                   \
        }                                                                                           \
        memset(r, 0, sizeof r);                                                                     \
        MPI_OK(MPI_Allreduce(s, r, N, dt, op, MPI_COMM_WORLD));                                     \
        for (int i = 0; i < N; i++)                                                                 \
            CHECK(EQ(r[i], e[i]), "MPI_Allreduce %s on %s: wrong result at %d", opn, #NAME, i);     \
        memset(r, 0, sizeof r);                                                                     \
        MPI_OK(MPI_Reduce(s, r, N, dt, op, root, MPI_COMM_WORLD));                                  \
        if (rank == root)                                                                           \
            for (int i = 0; i < N; i++)                                                             \
                CHECK(EQ(r[i], e[i]), "MPI_Reduce %s on %s: wrong result at %d", opn, #NAME, i);    \
        memset(r, 0, sizeof r);                                                                     \
        MPI_OK(MPI_Scan(s, r, N, dt, op, MPI_COMM_WORLD));                                          \
        for (int i = 0; i < N; i++)                                                                 \
            CHECK(EQ(r[i], pre[i]), "MPI_Scan %s on %s: wrong result at %d", opn, #NAME, i);        \
        for (int i = 0; i < N; i++) {                                                               \
            a[i] = val(rank + 1, i);                                                                \
            b[i] = val(rank, i);                                                                    \
        }                                                                                           \
        MPI_OK(MPI_Reduce_local(a, b, N, dt, op));                                                  \
        for (int i = 0; i < N; i++)                                                                 \
            CHECK(EQ(b[i], comb(val(rank, i), val(rank + 1, i))), "MPI_Reduce_local %s on %s: wrong " \
                  "result at %d", opn, #NAME, i);                                                   \
    }

#define EQ_PLAIN(x, y) ((x) == (y))
DEFINE_CHECK(char, char, EQ_PLAIN)
DEFINE_CHECK(signed char, schar, EQ_PLAIN)
DEFINE_CHECK(unsigned char, uchar, EQ_PLAIN)
DEFINE_CHECK(long double, ld, eq_scalar_ld)
DEFINE_CHECK(long double _Complex, ldc, eq_ldc)
DEFINE_CHECK(ld_int, ldi, eq_ldi)
DEFINE_CHECK(bool, bool, EQ_PLAIN)

/* char: small signed values (C char is signed on x86-64), sums and products that fit. */
static char c_val(int r, int i) { return (char)((r * 3 + i) % 11 - 5); }
static char c_pval(int r, int i) { return (char)(r == 1 && i % 3 == 0 ? 2 : ((r + i) % 2 ? -1 : 1)); }
static char c_sum(char a, char b) { return (char)(a + b); }
static char c_prod(char a, char b) { return (char)(a * b); }
static char c_max(char a, char b) { return a > b ? a : b; }
static char c_min(char a, char b) { return a < b ? a : b; }
static char c_bits(int r, int i) { return (char)((0x5a >> (r % 4)) ^ (i * 0x11) ^ (r << 4)); }
static char c_band(char a, char b) { return (char)(a & b); }
static char c_bor(char a, char b) { return (char)(a | b); }
static char c_bxor(char a, char b) { return (char)(a ^ b); }
static char c_truth(int r, int i) { return (char)((r + i) % 3 == 0 ? 0 : (r % 2 ? -7 : 1)); }
static char c_land(char a, char b) { return (char)(a && b); }
static char c_lor(char a, char b) { return (char)(a || b); }
static char c_lxor(char a, char b) { return (char)(!a != !b); }

static signed char sc_val(int r, int i) { return (signed char)(-(r * 5 + i) % 13); }
static signed char sc_sum(signed char a, signed char b) { return (signed char)(a + b); }
static signed char sc_min(signed char a, signed char b) { return a < b ? a : b; }

/* unsigned char: sums wrap modulo 256. */
static unsigned char uc_val(int r, int i) { return (unsigned char)(200 + r * 7 + i); }
static unsigned char uc_sum(unsigned char a, unsigned char b) { return (unsigned char)(a + b); }
/* MAX on values that all lie in 128..255: MPICH 4.0.2 compares unsigned types as signed (max(0, 249)
   is 0 there), so the test does not mix values below and above 128. */
static unsigned char uc_mval(int r, int i) { return (unsigned char)(128 + (r * 7 + i * 13) % 120); }
static unsigned char uc_max(unsigned char a, unsigned char b) { return a > b ? a : b; }

/* long double: 1 + k * 2^-60 needs the 64-bit mantissa of the x87 format (a double rounds it to
   1); every partial sum over 8 ranks stays exact. */
static long double ld_val(int r, int i) { return 1.0L + (long double)((r + i) % 5) * 0x1p-60L; }
/* products: at most three factors 1 + 2^-20 (61 significant bits, beyond a double), signs, 2s */
static long double ld_pval(int r, int i) { return (r + i) % 3 == 0 ? -1.0L : ((r + i) % 3 == 1 ? 2.0L : 1.0L + 0x1p-20L); }
static long double ld_sum(long double a, long double b) { return a + b; }
static long double ld_prod(long double a, long double b) { return a * b; }
static long double ld_max(long double a, long double b) { return a > b ? a : b; }
static long double ld_min(long double a, long double b) { return a < b ? a : b; }

static long double _Complex ldc_val(int r, int i) { return (long double)(r % 3 - 1) + (long double)((i + r) % 2) * I + 0x1p-60L; }
static long double _Complex ldc_pval(int r, int i) { return (r + i) % 2 ? 1.0L + 1.0L * I : -1.0L * I; }
static long double _Complex ldc_sum(long double _Complex a, long double _Complex b) { return a + b; }
static long double _Complex ldc_prod(long double _Complex a, long double _Complex b)
{
    /* the textbook product (exact here: small integers) */
    long double ar = creall(a), ai = cimagl(a), br = creall(b), bi = cimagl(b);
    return (ar * br - ai * bi) + (ar * bi + ai * br) * I;
}

/* {long double, int}: values that tie across ranks (and differ only beyond a double's
   precision), the index being the rank: ties keep the lower index. */
static ld_int ldi_val(int r, int i)
{
    ld_int p;
    p.v = 1.0L + (long double)((r + i) % 3) * 0x1p-61L;
    p.i = (i % 2) ? r : size - 1 - r + 100;
    return p;
}
static ld_int ldi_minloc(ld_int a, ld_int b)
{
    if (a.v < b.v)
        return a;
    if (b.v < a.v)
        return b;
    return a.i < b.i ? a : b;
}
static ld_int ldi_maxloc(ld_int a, ld_int b)
{
    if (a.v > b.v)
        return a;
    if (b.v > a.v)
        return b;
    return a.i < b.i ? a : b;
}

static bool b_val(int r, int i) { return (r + i) % 3 != 0 || (i == 5); }
static bool b_land(bool a, bool b) { return a && b; }
static bool b_lor(bool a, bool b) { return a || b; }
static bool b_lxor(bool a, bool b) { return a != b; }

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(sizeof(ld_int) == 32, "sizeof {long double, int} = %zu", sizeof(ld_int));
    int tsz;
    MPI_OK(MPI_Type_size(MPI_LONG_DOUBLE_INT, &tsz));
    CHECK(tsz == 26 || tsz == 20 || tsz == 32, "MPI_LONG_DOUBLE_INT size %d", tsz);

    check_char(MPI_CHAR, "MPI_SUM", MPI_SUM, c_val, c_sum);
    check_char(MPI_CHAR, "MPI_PROD", MPI_PROD, c_pval, c_prod);
    check_char(MPI_CHAR, "MPI_MAX", MPI_MAX, c_val, c_max);
    check_char(MPI_CHAR, "MPI_MIN", MPI_MIN, c_val, c_min);
    check_char(MPI_CHAR, "MPI_BAND", MPI_BAND, c_bits, c_band);
    check_char(MPI_CHAR, "MPI_BOR", MPI_BOR, c_bits, c_bor);
    check_char(MPI_CHAR, "MPI_BXOR", MPI_BXOR, c_bits, c_bxor);
    check_char(MPI_CHAR, "MPI_LAND", MPI_LAND, c_truth, c_land);
    check_char(MPI_CHAR, "MPI_LOR", MPI_LOR, c_truth, c_lor);
    check_char(MPI_CHAR, "MPI_LXOR", MPI_LXOR, c_truth, c_lxor);
    check_schar(MPI_SIGNED_CHAR, "MPI_SUM", MPI_SUM, sc_val, sc_sum);
    check_schar(MPI_SIGNED_CHAR, "MPI_MIN", MPI_MIN, sc_val, sc_min);
    check_uchar(MPI_UNSIGNED_CHAR, "MPI_SUM", MPI_SUM, uc_val, uc_sum);
    check_uchar(MPI_UNSIGNED_CHAR, "MPI_MAX", MPI_MAX, uc_mval, uc_max);

    check_ld(MPI_LONG_DOUBLE, "MPI_SUM", MPI_SUM, ld_val, ld_sum);
    check_ld(MPI_LONG_DOUBLE, "MPI_PROD", MPI_PROD, ld_pval, ld_prod);
    check_ld(MPI_LONG_DOUBLE, "MPI_MAX", MPI_MAX, ld_val, ld_max);
    check_ld(MPI_LONG_DOUBLE, "MPI_MIN", MPI_MIN, ld_val, ld_min);
    check_ldc(MPI_C_LONG_DOUBLE_COMPLEX, "MPI_SUM", MPI_SUM, ldc_val, ldc_sum);
    check_ldc(MPI_C_LONG_DOUBLE_COMPLEX, "MPI_PROD", MPI_PROD, ldc_pval, ldc_prod);
    check_ldc(MPI_CXX_LONG_DOUBLE_COMPLEX, "MPI_SUM", MPI_SUM, ldc_val, ldc_sum);
    check_ldi(MPI_LONG_DOUBLE_INT, "MPI_MINLOC", MPI_MINLOC, ldi_val, ldi_minloc);
    check_ldi(MPI_LONG_DOUBLE_INT, "MPI_MAXLOC", MPI_MAXLOC, ldi_val, ldi_maxloc);

    check_bool(MPI_C_BOOL, "MPI_LAND", MPI_LAND, b_val, b_land);
    check_bool(MPI_C_BOOL, "MPI_LOR", MPI_LOR, b_val, b_lor);
    check_bool(MPI_C_BOOL, "MPI_LXOR", MPI_LXOR, b_val, b_lxor);
    check_bool(MPI_CXX_BOOL, "MPI_LXOR", MPI_LXOR, b_val, b_lxor);

    MPI_OK(MPI_Finalize());
    return 0;
}
