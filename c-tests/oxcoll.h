/* Reduction cases shared by coll_reduce.c and coll_allreduce.c (header only, not a test).
   Rank r contributes val(r, i) at index i; the expected result folds comb over the ranks in rank
   order. Values are chosen so that every order of combination gives the same exact result. */
#ifndef OXCOLL_H
#define OXCOLL_H
#include "oxtest.h"

static int oxc_rank, oxc_size;

/* MPICH 4.0.2 crashes in MPI_Reduce with MPI_IN_PLACE at a non-zero root once the message is
   large enough for its reduce-scatter-gather algorithm (pmodels/mpich#6540, fixed in 4.1.2); the
   tests skip that combination there only. */
static inline int oxc_is_mpich(void)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(v, &len);
    return strncmp(v, "MPICH Version:", 14) == 0 && strstr(v, "4.0.2") != NULL;
}

/* root < 0: MPI_Allreduce; otherwise MPI_Reduce to root. */
static inline int oxc_call(const void *s, void *r, int n, MPI_Datatype dt, MPI_Op op, int root)
{
    if (root < 0)
        return MPI_Allreduce(s, r, n, dt, op, MPI_COMM_WORLD);
    return MPI_Reduce(s, r, n, dt, op, root, MPI_COMM_WORLD);
}

#define OXC_CASE(T, TN)                                                                              \
    static inline void oxc_##TN(MPI_Datatype dt, const char *opn, MPI_Op op, T (*val)(int, long),           \
                         T (*comb)(T, T), int n, int root, int inplace)                              \
    {                                                                                                \
        T *s = (T *)oxt_malloc(sizeof(T) * (size_t)n), *r = (T *)oxt_malloc(sizeof(T) * (size_t)n);  \
        int sig = root < 0 || oxc_rank == root;                                                      \
        for (long i = 0; i < n; i++) {                                                               \
            s[i] = val(oxc_rank, i);                                                                 \
            r[i] = (T)0x5a;                                                                          \
        }                                                                                            \
        if (inplace && sig) {                                                                        \
            memcpy(r, s, sizeof(T) * (size_t)n);                                                     \
            MPI_OK(oxc_call(MPI_IN_PLACE, r, n, dt, op, root));                                      \
        } else {                                                                                     \
            MPI_OK(oxc_call(s, r, n, dt, op, root));                                                 \
        }                                                                                            \
        for (long i = 0; i < n; i++) {                                                               \
            CHECK(s[i] == val(oxc_rank, i), "%s %s n=%d: send buffer changed at %ld", opn, #T, n, i); \
            if (sig) {                                                                               \
                T e = val(0, i);                                                                     \
                for (int q = 1; q < oxc_size; q++)                                                   \
                    e = comb(e, val(q, i));                                                          \
                CHECK(r[i] == e, "%s on %s n=%d root=%d inplace=%d: [%ld] = %.17g, expected %.17g", opn, \
                      #T, n, root, inplace, i, (double)r[i], (double)e);                             \
            } else {                                                                                 \
                CHECK(r[i] == (T)0x5a, "%s %s: non-root receive buffer written at %ld", opn, #T, i); \
            }                                                                                        \
        }                                                                                            \
        free(s);                                                                                     \
        free(r);                                                                                     \
    }

OXC_CASE(int, int)
OXC_CASE(long, long)
OXC_CASE(double, double)
OXC_CASE(float, float)
OXC_CASE(unsigned char, uchar)
OXC_CASE(int64_t, int64)

/* combiners */
#define OXC_COMB(T, TN)                                                     \
    static inline T sum_##TN(T a, T b) { return (T)(a + b); }                      \
    static inline T prod_##TN(T a, T b) { return (T)(a * b); }                     \
    static inline T max_##TN(T a, T b) { return a > b ? a : b; }                  \
    static inline T min_##TN(T a, T b) { return a < b ? a : b; }
#define OXC_COMB_INT(T, TN)                                                 \
    OXC_COMB(T, TN)                                                         \
    static inline T band_##TN(T a, T b) { return (T)(a & b); }                     \
    static inline T bor_##TN(T a, T b) { return (T)(a | b); }                      \
    static inline T bxor_##TN(T a, T b) { return (T)(a ^ b); }                     \
    static inline T land_##TN(T a, T b) { return (T)(a && b); }                    \
    static inline T lor_##TN(T a, T b) { return (T)(a || b); }                     \
    static inline T lxor_##TN(T a, T b) { return (T)(!a != !b); }
OXC_COMB_INT(int, int)
OXC_COMB_INT(long, long)
OXC_COMB_INT(unsigned char, uchar)
OXC_COMB_INT(int64_t, int64)
OXC_COMB(double, double)
OXC_COMB(float, float)

/* values */
static inline int v_int_sum(int r, long i) { return (r + 1) * (int)(i % 7 + 1) - 3 * r; }
static inline int v_int_prod(int r, long i) { return (r + i) % 4 == 0 ? 2 : ((r + i) % 4 == 1 ? -1 : 1); }
static inline int v_int_mm(int r, long i) { return (int)((r * 37 + i * 11) % 101) - 50; }
static inline int v_int_bits(int r, long i) { return (int)(((unsigned)i * 2654435761u) ^ ((unsigned)r * 40503u) ^ (1u << (r % 31))); }
static inline int v_int_logic(int r, long i) { return r == 0 ? (int)(i % 3 != 0) : (int)((r + i) % 3 != 0) * (r + 1); }
static inline long v_long_sum(int r, long i) { return (long)r * 1000003L + i - 77; }
static inline long v_long_mm(int r, long i) { return ((long)((r * 37 + i * 11) % 101) - 50) * 4000000000L; }
static inline long v_long_bits(int r, long i) { return (long)(((unsigned long)i * 0x9e3779b97f4a7c15ul) >> (r % 13)); }
static inline double v_double_sum(int r, long i) { return r * 0.5 + (double)(i % 1000) - 3.25; }
static inline double v_double_prod(int r, long i) { return (r + i) % 3 == 0 ? 2.0 : ((r + i) % 3 == 1 ? -0.5 : 1.0); }
static inline double v_double_mm(int r, long i) { return (double)((r * 37 + i * 11) % 101) - 50.25; }
static inline float v_float_sum(int r, long i) { return (float)r + (float)(i % 100); }
static inline float v_float_prod(int r, long i) { return (r + i) % 3 == 0 ? 4.0f : ((r + i) % 3 == 1 ? 0.25f : -1.0f); }
static inline float v_float_mm(int r, long i) { return (float)((r * 13 + i * 7) % 53) * 0.5f; }
static inline unsigned char v_uchar_sum(int r, long i) { return (unsigned char)(r * 50 + i); }
static inline unsigned char v_uchar_prod(int r, long i) { return (unsigned char)((r + i) % 2 ? 3 : 1); }
/* Below 128: MPICH 4.0.2 computes MAX/MIN of unsigned types as signed (pmodels/mpich#6083); the
   full range is covered by the oxmpi unit tests and by BXOR here. */
static inline unsigned char v_uchar_mm(int r, long i) { return (unsigned char)((r * 97 + i * 31) % 128); }
static inline unsigned char v_uchar_bits(int r, long i) { return (unsigned char)((r * 97 + i * 31) % 256); }
static inline unsigned char v_uchar_logic(int r, long i) { return (unsigned char)(r == 0 ? (i % 2) : ((r + i) % 4 != 0) * (r + 1)); }
static inline int64_t v_int64_sum(int r, long i) { return ((int64_t)1 << 40) * r + i; }
static inline int64_t v_int64_mm(int r, long i) { return (int64_t)(((uint64_t)i * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)r << 50)); }

/* Runs every (op, type) case with count n to root (root < 0: allreduce). */
static inline void oxc_all_cases(int n, int root, int inplace)
{
    oxc_int(MPI_INT, "MPI_SUM", MPI_SUM, v_int_sum, sum_int, n, root, inplace);
    oxc_int(MPI_INT, "MPI_PROD", MPI_PROD, v_int_prod, prod_int, n, root, inplace);
    oxc_int(MPI_INT, "MPI_MAX", MPI_MAX, v_int_mm, max_int, n, root, inplace);
    oxc_int(MPI_INT, "MPI_MIN", MPI_MIN, v_int_mm, min_int, n, root, inplace);
    oxc_int(MPI_INT, "MPI_BAND", MPI_BAND, v_int_bits, band_int, n, root, inplace);
    oxc_int(MPI_INT, "MPI_BOR", MPI_BOR, v_int_bits, bor_int, n, root, inplace);
    oxc_int(MPI_INT, "MPI_BXOR", MPI_BXOR, v_int_bits, bxor_int, n, root, inplace);
    oxc_int(MPI_INT, "MPI_LAND", MPI_LAND, v_int_logic, land_int, n, root, inplace);
    oxc_int(MPI_INT, "MPI_LOR", MPI_LOR, v_int_logic, lor_int, n, root, inplace);
    oxc_int(MPI_INT, "MPI_LXOR", MPI_LXOR, v_int_logic, lxor_int, n, root, inplace);
    oxc_long(MPI_LONG, "MPI_SUM", MPI_SUM, v_long_sum, sum_long, n, root, inplace);
    oxc_long(MPI_LONG, "MPI_MAX", MPI_MAX, v_long_mm, max_long, n, root, inplace);
    oxc_long(MPI_LONG, "MPI_MIN", MPI_MIN, v_long_mm, min_long, n, root, inplace);
    oxc_long(MPI_LONG, "MPI_BOR", MPI_BOR, v_long_bits, bor_long, n, root, inplace);
    oxc_long(MPI_LONG, "MPI_BAND", MPI_BAND, v_long_bits, band_long, n, root, inplace);
    oxc_double(MPI_DOUBLE, "MPI_SUM", MPI_SUM, v_double_sum, sum_double, n, root, inplace);
    oxc_double(MPI_DOUBLE, "MPI_PROD", MPI_PROD, v_double_prod, prod_double, n, root, inplace);
    oxc_double(MPI_DOUBLE, "MPI_MAX", MPI_MAX, v_double_mm, max_double, n, root, inplace);
    oxc_double(MPI_DOUBLE, "MPI_MIN", MPI_MIN, v_double_mm, min_double, n, root, inplace);
    oxc_float(MPI_FLOAT, "MPI_SUM", MPI_SUM, v_float_sum, sum_float, n, root, inplace);
    oxc_float(MPI_FLOAT, "MPI_PROD", MPI_PROD, v_float_prod, prod_float, n, root, inplace);
    oxc_float(MPI_FLOAT, "MPI_MAX", MPI_MAX, v_float_mm, max_float, n, root, inplace);
    oxc_float(MPI_FLOAT, "MPI_MIN", MPI_MIN, v_float_mm, min_float, n, root, inplace);
    oxc_uchar(MPI_UNSIGNED_CHAR, "MPI_SUM", MPI_SUM, v_uchar_sum, sum_uchar, n, root, inplace);
    oxc_uchar(MPI_UNSIGNED_CHAR, "MPI_PROD", MPI_PROD, v_uchar_prod, prod_uchar, n, root, inplace);
    oxc_uchar(MPI_UNSIGNED_CHAR, "MPI_MAX", MPI_MAX, v_uchar_mm, max_uchar, n, root, inplace);
    oxc_uchar(MPI_UNSIGNED_CHAR, "MPI_MIN", MPI_MIN, v_uchar_mm, min_uchar, n, root, inplace);
    oxc_uchar(MPI_UNSIGNED_CHAR, "MPI_BXOR", MPI_BXOR, v_uchar_bits, bxor_uchar, n, root, inplace);
    oxc_uchar(MPI_UNSIGNED_CHAR, "MPI_LAND", MPI_LAND, v_uchar_logic, land_uchar, n, root, inplace);
    oxc_uchar(MPI_UNSIGNED_CHAR, "MPI_LOR", MPI_LOR, v_uchar_logic, lor_uchar, n, root, inplace);
    oxc_uchar(MPI_UNSIGNED_CHAR, "MPI_LXOR", MPI_LXOR, v_uchar_logic, lxor_uchar, n, root, inplace);
    oxc_int64(MPI_INT64_T, "MPI_SUM", MPI_SUM, v_int64_sum, sum_int64, n, root, inplace);
    oxc_int64(MPI_INT64_T, "MPI_MAX", MPI_MAX, v_int64_mm, max_int64, n, root, inplace);
    oxc_int64(MPI_INT64_T, "MPI_MIN", MPI_MIN, v_int64_mm, min_int64, n, root, inplace);
    oxc_int64(MPI_INT64_T, "MPI_BXOR", MPI_BXOR, v_int64_mm, bxor_int64, n, root, inplace);
}

/* MINLOC/MAXLOC on MPI_DOUBLE_INT and MPI_2INT, with many ties (values repeat across ranks), so
   the lower-index rule decides. The index is not the rank, to catch rank-order assumptions. */
struct oxc_di { double v; int i; };
struct oxc_ii { int v; int i; };
static inline int oxc_idx(int r, long i) { return (int)((r * 5 + i) % 11); }
static inline double oxc_dv(int r, long i) { return (double)((r * 7 + i * 3) % 5) - 1.5; }

static inline void oxc_loc_cases(int n, int root, int inplace)
{
    for (int loc = 0; loc < 2; loc++) {
        MPI_Op op = loc ? MPI_MAXLOC : MPI_MINLOC;
        struct oxc_di *sd = oxt_malloc(sizeof *sd * (size_t)n), *rd = oxt_malloc(sizeof *rd * (size_t)n);
        struct oxc_ii *si = oxt_malloc(sizeof *si * (size_t)n), *ri = oxt_malloc(sizeof *ri * (size_t)n);
        int sig = root < 0 || oxc_rank == root;
        for (long k = 0; k < n; k++) {
            sd[k].v = oxc_dv(oxc_rank, k);
            sd[k].i = oxc_idx(oxc_rank, k);
            si[k].v = (int)oxc_dv(oxc_rank, k);
            si[k].i = oxc_idx(oxc_rank, k);
        }
        if (inplace && sig) {
            memcpy(rd, sd, sizeof *sd * (size_t)n);
            memcpy(ri, si, sizeof *si * (size_t)n);
            MPI_OK(oxc_call(MPI_IN_PLACE, rd, n, MPI_DOUBLE_INT, op, root));
            MPI_OK(oxc_call(MPI_IN_PLACE, ri, n, MPI_2INT, op, root));
        } else {
            MPI_OK(oxc_call(sd, rd, n, MPI_DOUBLE_INT, op, root));
            MPI_OK(oxc_call(si, ri, n, MPI_2INT, op, root));
        }
        for (long k = 0; sig && k < n; k++) {
            double ev = oxc_dv(0, k);
            int ei = oxc_idx(0, k), eiv = (int)ev, eii = ei;
            for (int q = 1; q < oxc_size; q++) {
                double v = oxc_dv(q, k);
                int ix = oxc_idx(q, k);
                if (loc ? v > ev : v < ev) { ev = v; ei = ix; }
                else if (v == ev && ix < ei) ei = ix;
                if (loc ? (int)v > eiv : (int)v < eiv) { eiv = (int)v; eii = ix; }
                else if ((int)v == eiv && ix < eii) eii = ix;
            }
            CHECK(rd[k].v == ev && rd[k].i == ei, "%s MPI_DOUBLE_INT n=%d root=%d inplace=%d [%ld]: (%g,%d), expected (%g,%d)",
                  loc ? "MAXLOC" : "MINLOC", n, root, inplace, k, rd[k].v, rd[k].i, ev, ei);
            CHECK(ri[k].v == eiv && ri[k].i == eii, "%s MPI_2INT n=%d root=%d inplace=%d [%ld]: (%d,%d), expected (%d,%d)",
                  loc ? "MAXLOC" : "MINLOC", n, root, inplace, k, ri[k].v, ri[k].i, eiv, eii);
        }
        free(sd); free(rd); free(si); free(ri);
    }
}

/* A user message posted around the collectives must still reach its own receive: collective
   traffic must never match point-to-point wildcards. */
static inline void oxc_p2p_isolation(int root)
{
    int in = -1, out = oxc_rank + 1000, x = oxc_rank + 1, y = 0;
    MPI_Request rq;
    MPI_Status st;
    int from = (oxc_rank + oxc_size - 1) % oxc_size, to = (oxc_rank + 1) % oxc_size;
    MPI_OK(MPI_Irecv(&in, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &rq));
    MPI_OK(oxc_call(&x, &y, 1, MPI_INT, MPI_SUM, root));
    MPI_OK(MPI_Send(&out, 1, MPI_INT, to, 7, MPI_COMM_WORLD));
    MPI_OK(MPI_Wait(&rq, &st));
    CHECK(in == from + 1000 && st.MPI_TAG == 7 && st.MPI_SOURCE == from, "wildcard receive got %d tag %d from %d", in, st.MPI_TAG, st.MPI_SOURCE);
    if (root < 0 || oxc_rank == root)
        CHECK(y == oxc_size * (oxc_size + 1) / 2, "sum of ranks+1 = %d", y);
}
#endif
