/* Shared helpers for the oxmpi C tests (header only, not a test). */
#ifndef OXTEST_H
#define OXTEST_H

#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>

/* Ends the calling rank at once, the hardest way its mode allows (failure-survival tests): SIGKILL
 * in processes mode; in threads mode, where the rank is a thread and SIGKILL would end every
 * rank, a crash of its own thread (SIGSEGV). Job status: 137 or 139. */
static inline void oxt_die(void)
{
    const char *mode = getenv("OXMPI_MODE");
    fflush(stdout);
    raise(mode && !strcmp(mode, "threads") ? 11 /* SIGSEGV */ : 9 /* SIGKILL */);
}

static int oxt_world_rank(void)
{
    int init = 0, fin = 0, r = -1;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (init && !fin)
        MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

/* Report a failed check and end the job. */
static void oxt_fail(const char *file, int line, const char *expr, const char *fmt, ...)
{
    va_list ap;
    int init = 0, fin = 0, n;
    char msg[2048];
    /* one write, so that reports of several ranks do not interleave */
    n = snprintf(msg, sizeof msg, "TEST FAILED [rank %d] %s:%d: check `%s` failed: ", oxt_world_rank(), file,
                 line, expr);
    if (n < 0 || n >= (int)sizeof msg)
        n = 0;
    va_start(ap, fmt);
    vsnprintf(msg + n, sizeof msg - (size_t)n - 1, fmt, ap);
    va_end(ap);
    strcat(msg, "\n");
    fputs(msg, stderr);
    fflush(stderr);
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (init && !fin)
        MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

/* CHECK(cond, fmt, ...): fmt is mandatory. */
#define CHECK(cond, ...)                                                      \
    do {                                                                      \
        if (!(cond))                                                          \
            oxt_fail(__FILE__, __LINE__, #cond, __VA_ARGS__);                 \
    } while (0)

/* Call an MPI function and require MPI_SUCCESS. */
#define MPI_OK(call)                                                          \
    do {                                                                      \
        int oxt_rc_ = (call);                                                 \
        if (oxt_rc_ != MPI_SUCCESS) {                                         \
            char oxt_s_[MPI_MAX_ERROR_STRING];                                \
            int oxt_l_ = 0;                                                   \
            oxt_s_[0] = 0;                                                    \
            MPI_Error_string(oxt_rc_, oxt_s_, &oxt_l_);                       \
            oxt_fail(__FILE__, __LINE__, #call, "returned %d (%s)", oxt_rc_, oxt_s_); \
        }                                                                     \
    } while (0)

/* MPI_T functions return MPI_T_ERR_* codes, not error classes: require one exactly. */
#define T_OK(call)                                                                       \
    do {                                                                                 \
        int t_rc_ = (call);                                                              \
        CHECK(t_rc_ == MPI_SUCCESS, "%s returned %d", #call, t_rc_);                     \
    } while (0)
#define T_ERR(call, code)                                                                \
    do {                                                                                 \
        int t_rc_ = (call);                                                              \
        CHECK(t_rc_ == (code), "%s returned %d, expected %s (%d)", #call, t_rc_, #code, code); \
    } while (0)

/* Require that rc is an error of class cls. */
#define CHECK_CLASS(rc, cls)                                                  \
    do {                                                                      \
        int oxt_rc2_ = (rc), oxt_c_ = -1;                                     \
        if (oxt_rc2_ != MPI_SUCCESS)                                          \
            MPI_Error_class(oxt_rc2_, &oxt_c_);                               \
        else                                                                  \
            oxt_c_ = MPI_SUCCESS;                                             \
        if (oxt_c_ != (cls))                                                  \
            oxt_fail(__FILE__, __LINE__, #rc " has class " #cls,              \
                     "rc=%d class=%d, expected class %d", oxt_rc2_, oxt_c_, (int)(cls)); \
    } while (0)

/* Deterministic byte pattern for (seed, index). */
static inline unsigned char oxt_pat(unsigned seed, size_t i)
{
    return (unsigned char)((i * 131u + seed * 7u + (i >> 8) * 17u + 1u) & 0xffu);
}

static inline void oxt_fill(void *buf, size_t n, unsigned seed)
{
    unsigned char *p = (unsigned char *)buf;
    for (size_t i = 0; i < n; i++)
        p[i] = oxt_pat(seed, i);
}

/* Returns the index of the first wrong byte, or -1 if all are right. */
static inline long oxt_verify(const void *buf, size_t n, unsigned seed)
{
    const unsigned char *p = (const unsigned char *)buf;
    for (size_t i = 0; i < n; i++)
        if (p[i] != oxt_pat(seed, i))
            return (long)i;
    return -1;
}

/* Small reproducible PRNG (xorshift64*). */
static inline uint64_t oxt_rand(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 2685821657736338717ULL;
}

static inline void *oxt_malloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "TEST FAILED: malloc(%zu) failed\n", n);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return p;
}

/* Whether the ranks of `comm` are on more than one node (mpiexec --nodes K): MPI_Win_allocate_shared
   over it is refused then. Collective. */
static inline int oxt_spans_nodes(MPI_Comm comm)
{
    MPI_Comm node;
    int n, all, spans, any;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &n);
    MPI_Comm_size(comm, &all);
    MPI_Comm_free(&node);
    spans = n < all;
    MPI_Allreduce(&spans, &any, 1, MPI_INT, MPI_LOR, comm);
    return any;
}

/* Check that a status describes an empty/PROC_NULL completion. */
#define CHECK_STATUS(st, src, tg, dt, cnt)                                    \
    do {                                                                      \
        int oxt_n_ = -7;                                                      \
        MPI_Get_count(&(st), (dt), &oxt_n_);                                  \
        CHECK((st).MPI_SOURCE == (src), "status source %d, expected %d", (st).MPI_SOURCE, (int)(src)); \
        CHECK((st).MPI_TAG == (tg), "status tag %d, expected %d", (st).MPI_TAG, (int)(tg)); \
        CHECK(oxt_n_ == (cnt), "status count %d, expected %d", oxt_n_, (int)(cnt)); \
    } while (0)

/* Body of the err_fatal_* tests: rank 0 makes the erroneous call `bad` under the default
   MPI_ERRORS_ARE_FATAL while the other ranks block in MPI_Recv; the job must end there. If the call
   returns instead, rank 0 releases the others so the job ends with status 0, which the runner reports
   as a failure (the tests say expect=fail). */
static inline int oxtest_fatal_case(int argc, char **argv, int (*bad)(int size))
{
    int rank, size, rc = 0;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    if (rank == 0) {
        rc = bad(size);
        fprintf(stderr, "TEST FAILED: erroneous call returned %d instead of ending the job\n", rc);
        for (int r = 1; r < size; r++)
            MPI_Send(&rc, 1, MPI_INT, r, 1, MPI_COMM_WORLD);
    } else {
        MPI_OK(MPI_Recv(&rc, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
    MPI_Finalize();
    return 0;
}

#endif
