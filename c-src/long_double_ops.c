/*
 * Reduction kernels for the predefined datatypes Rust has no arithmetic for, compiled by build.rs
 * into the oxmpi library and called from src/op/kernels.rs (`extern "C"`):
 *
 *   long double               MPI_LONG_DOUBLE (x87 80-bit extended, 16 bytes with padding)
 *   long double _Complex      MPI_C_LONG_DOUBLE_COMPLEX, MPI_CXX_LONG_DOUBLE_COMPLEX (32 bytes)
 *   struct {long double; int} MPI_LONG_DOUBLE_INT (32 bytes)
 *   __float128                MPI_REAL16 (gfortran's REAL(16) on x86-64) and its complex,
 *                             MPI_COMPLEX32 (32 bytes)
 *   _Float16                  MPIX_C_FLOAT16 (2 bytes)
 *
 * Every kernel computes inout[i] = in[i] op inout[i] for n elements, the operand order of
 * MPI_Reduce_local, with the rules of the Rust kernels: MAX keeps inout unless in is greater, MIN
 * unless in is smaller; complex products are the textbook formula; MINLOC/MAXLOC keep the lower
 * index on equal values. Buffers carry no alignment promise, so elements are moved with memcpy.
 * Results of x87 long double types are stored without their padding (6 bytes after each 10-byte
 * value, 12 after the int of MPI_LONG_DOUBLE_INT): the padding of inout keeps its bytes, as an
 * x87 store (fstpt) does, rather than receiving whatever the stack held.
 */
#include <stddef.h>
#include <string.h>

/* Stores result r in its element slot: all bytes, or only the significant ones. */
#define OX_STORE_ALL(dst, r) memcpy((dst), &(r), sizeof(r))
#define OX_LD_BYTES 10
#define OX_STORE_LD(dst, r) memcpy((dst), &(r), OX_LD_BYTES)
#define OX_STORE_LDC(dst, r)                                                                       \
    do {                                                                                           \
        memcpy((dst), &(r).re, OX_LD_BYTES);                                                       \
        memcpy((dst) + sizeof(long double), &(r).im, OX_LD_BYTES);                                 \
    } while (0)
#define OX_STORE_LDINT(dst, r)                                                                     \
    do {                                                                                           \
        memcpy((dst), &(r).v, OX_LD_BYTES);                                                        \
        memcpy((dst) + sizeof(long double), &(r).i, sizeof(int));                                  \
    } while (0)

#define OX_BINARY(name, T, expr) OX_BINARY_STORE(name, T, expr, OX_STORE_ALL)

#define OX_BINARY_STORE(name, T, expr, store)                                                      \
    void name(const void *in, void *inout, size_t n)                                              \
    {                                                                                              \
        const unsigned char *a = (const unsigned char *)in;                                        \
        unsigned char *b = (unsigned char *)inout;                                                 \
        for (size_t i = 0; i < n; i++) {                                                           \
            T x, y, r;                                                                             \
            memcpy(&x, a + i * sizeof(T), sizeof(T));                                              \
            memcpy(&y, b + i * sizeof(T), sizeof(T));                                              \
            r = (expr);                                                                            \
            store(b + i * sizeof(T), r);                                                           \
        }                                                                                          \
    }

#define OX_REAL(prefix, T, store)                                                                  \
    OX_BINARY_STORE(oxmpi_##prefix##_sum, T, x + y, store)                                         \
    OX_BINARY_STORE(oxmpi_##prefix##_prod, T, x * y, store)                                        \
    OX_BINARY_STORE(oxmpi_##prefix##_max, T, x > y ? x : y, store)                                 \
    OX_BINARY_STORE(oxmpi_##prefix##_min, T, x < y ? x : y, store)

/* A complex as two reals (re first), the layout of C's _Complex and Fortran's COMPLEX. */
#define OX_COMPLEX(prefix, F, store)                                                                      \
    typedef struct {                                                                               \
        F re, im;                                                                                  \
    } prefix##_complex;                                                                            \
    static prefix##_complex prefix##_cadd(prefix##_complex x, prefix##_complex y)                  \
    {                                                                                              \
        prefix##_complex r = {x.re + y.re, x.im + y.im};                                           \
        return r;                                                                                  \
    }                                                                                              \
    static prefix##_complex prefix##_cmul(prefix##_complex x, prefix##_complex y)                  \
    {                                                                                              \
        prefix##_complex r = {x.re * y.re - x.im * y.im, x.re * y.im + x.im * y.re};               \
        return r;                                                                                  \
    }                                                                                              \
    OX_BINARY_STORE(oxmpi_##prefix##c_sum, prefix##_complex, prefix##_cadd(x, y), store)           \
    OX_BINARY_STORE(oxmpi_##prefix##c_prod, prefix##_complex, prefix##_cmul(x, y), store)

OX_REAL(ld, long double, OX_STORE_LD)
OX_COMPLEX(ld, long double, OX_STORE_LDC)

OX_REAL(f128, __float128, OX_STORE_ALL)
OX_COMPLEX(f128, __float128, OX_STORE_ALL)

OX_REAL(f16, _Float16, OX_STORE_ALL)

/* MPI_LONG_DOUBLE_INT: MINLOC / MAXLOC (MPI 4.1 section 6.9.4), the lower index on a tie. */
typedef struct {
    long double v;
    int i;
} ld_int;

static ld_int ld_minloc(ld_int x, ld_int y)
{
    if (x.v < y.v)
        return x;
    if (y.v < x.v)
        return y;
    if (x.i < y.i)
        y.i = x.i;
    return y;
}

static ld_int ld_maxloc(ld_int x, ld_int y)
{
    if (x.v > y.v)
        return x;
    if (y.v > x.v)
        return y;
    if (x.i < y.i)
        y.i = x.i;
    return y;
}

OX_BINARY_STORE(oxmpi_ld_int_minloc, ld_int, ld_minloc(x, y), OX_STORE_LDINT)
OX_BINARY_STORE(oxmpi_ld_int_maxloc, ld_int, ld_maxloc(x, y), OX_STORE_LDINT)

/* Sizes the Rust side relies on (MPI_LONG_DOUBLE is 16 bytes, MPI_LONG_DOUBLE_INT 32). */
_Static_assert(sizeof(long double) == 16, "MPI_LONG_DOUBLE is 16 bytes in the MPICH ABI on x86-64");
_Static_assert(sizeof(ld_int) == 32, "MPI_LONG_DOUBLE_INT is 32 bytes");
_Static_assert(sizeof(ld_complex) == 32 && sizeof(f128_complex) == 32, "complex of 16-byte reals");
_Static_assert(sizeof(_Float16) == 2, "MPIX_C_FLOAT16 is 2 bytes");
