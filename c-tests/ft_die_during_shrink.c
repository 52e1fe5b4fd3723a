/* oxmpi-test: ranks=4,8 mpich=skip expect-exit=137 expect-exit-threads=139 timeout=60 */
/* oxmpi-test: env-matrix=FT_DELAY_US=0|30|100|300 */
/* A rank dies inside MPIX_Comm_shrink, then another inside MPIX_Comm_agree (issue 22, item 2):
 * the survivors must neither wait forever nor disagree. The victim arms a timer (FT_DELAY_US
 * microseconds, 0: at once) that signals its own thread, and enters the call with the others;
 * the signal kills it at some point of the protocol. Every survivor must get the same result:
 * the same shrunk communicator (with or without the victim, whose part may have counted before
 * it died; then a second shrink leaves it out) and the same agreed flag.
 * Processes mode: the victim dies by SIGKILL. Threads mode (a rank is a thread, or a fiber on a
 * carrier thread shared with other ranks): by a crash of its own thread (SIGSEGV, see oxt_die);
 * the timer signals the carrier the victim ran on before the call, and the handler kills the
 * rank only when the victim is the one running (its stack holds the handler's frame), else it
 * tries again a little later; nor does it kill the rank inside the C library, whose allocator
 * locks belong to the whole process (a thread that died holding one would stall all ranks).
 * mpich=skip: MPICH 4.0.2 (ch4) has no working ULFM in this build (see ulfm_revoke.c). */
#define _GNU_SOURCE
#include "oxtest.h"
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

/* The victim's stack: [low, high) (its main's frame and what lies below it). */
static uintptr_t stack_low, stack_high;
static timer_t timer;

static void arm(long us)
{
    struct itimerspec when = {{0, 0}, {us / 1000000, (us % 1000000) * 1000}};
    timer_settime(timer, 0, &when, NULL);
}

/* The C library's code (and the dynamic loader's): executable mappings of libc.so / ld-linux. */
static uintptr_t libc_lo[8], libc_hi[8];
static int libc_n;

static void find_libc(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    while (f && libc_n < 8 && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        char perm[8];
        if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perm) == 3 && perm[2] == 'x' &&
            (strstr(line, "/libc.so") || strstr(line, "/ld-linux"))) {
            libc_lo[libc_n] = lo;
            libc_hi[libc_n++] = hi;
        }
    }
    if (f)
        fclose(f);
}

/* Whether the interrupted instruction is in the C library. */
static int in_libc(void *uctx)
{
#if defined(__x86_64__)
    uintptr_t ip = (uintptr_t)((ucontext_t *)uctx)->uc_mcontext.gregs[REG_RIP];
    for (int i = 0; i < libc_n; i++)
        if (ip >= libc_lo[i] && ip < libc_hi[i])
            return 1;
#else
    (void)uctx;
#endif
    return 0;
}

/* SIGALRM handler: runs on the interrupted stack (no SA_ONSTACK). In threads mode a rank dies by
 * a crash of its own code: not inside the C library, whose allocator locks are the whole
 * process's (a thread that died holding one would stall every rank). */
static void on_timer(int sig, siginfo_t *info, void *uctx)
{
    (void)sig;
    (void)info;
    char here;
    if ((uintptr_t)&here < stack_low || (uintptr_t)&here >= stack_high || in_libc(uctx)) {
        arm(10); /* another rank's fiber runs on this carrier now, or the C library does */
        return;
    }
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGALRM);
    pthread_sigmask(SIG_UNBLOCK, &s, NULL); /* the rank's frames are left for good */
    oxt_die();
}

/* The calling rank dies FT_DELAY_US microseconds from now (at once if 0). `top` is an address
 * in main's frame. */
static void die_soon(void *top)
{
    const char *e = getenv("FT_DELAY_US");
    long us = e ? atol(e) : 0;
    if (us <= 0)
        oxt_die();
    struct rlimit rl;
    size_t depth = getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY ? rl.rlim_cur : 8 << 20;
    stack_high = (uintptr_t)top + 4096;
    stack_low = (uintptr_t)top - (depth - 65536);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_timer;
    sa.sa_flags = SA_SIGINFO;
    find_libc();
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_THREAD_ID;
    ev.sigev_signo = SIGALRM;
    ev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
    if (timer_create(CLOCK_MONOTONIC, &ev, &timer) != 0)
        oxt_die();
    arm(us);
}

/* The victim's call ended before the timer: it dies right after it. */
static void die_now(void)
{
    for (;;)
        oxt_die();
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    /* First failure: the last rank, inside MPIX_Comm_shrink. */
    char top;
    if (rank == size - 1)
        die_soon(&top);
    MPI_Comm s;
    MPI_OK(MPIX_Comm_shrink(MPI_COMM_WORLD, &s));
    if (rank == size - 1)
        die_now();
    /* A rank that dies during the call may be in the result, if its part counted (for every
     * survivor alike); then a second shrink leaves it out. */
    int first = -1, ssize = -1, sum = -1;
    MPI_OK(MPI_Comm_size(s, &first));
    CHECK(first == size - 1 || first == size, "shrink gave %d ranks, expected %d or %d", first, size - 1, size);
    MPI_OK(MPI_Comm_set_errhandler(s, MPI_ERRORS_RETURN));
    if (first == size) {
        MPI_Comm t;
        MPI_OK(MPIX_Comm_failure_ack(s));
        MPI_OK(MPIX_Comm_shrink(s, &t));
        MPI_OK(MPI_Comm_free(&s));
        s = t;
        MPI_OK(MPI_Comm_set_errhandler(s, MPI_ERRORS_RETURN));
    }
    MPI_OK(MPI_Comm_size(s, &ssize));
    CHECK(ssize == size - 1, "the survivors' communicator has %d ranks, expected %d", ssize, size - 1);
    MPI_OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, s));
    CHECK(sum == (size - 1) * (size - 2) / 2, "allreduce over the shrunk communicator gave %d, expected %d", sum,
          (size - 1) * (size - 2) / 2);
    /* Every survivor got the same first result. */
    int fm[2] = {first, -first}, fo[2];
    MPI_OK(MPI_Allreduce(fm, fo, 2, MPI_INT, MPI_MIN, s));
    CHECK(fo[0] == first && -fo[1] == first, "the survivors' first shrink differed (%d ranks here)", first);

    /* Second failure: the new last rank, inside MPIX_Comm_agree on the shrunk communicator. */
    if (rank == size - 2)
        die_soon(&top);
    int flag = ~(1 << rank), rc = MPIX_Comm_agree(s, &flag);
    if (rank == size - 2)
        die_now();
    /* The victim's bit is in the AND or not, depending on whether its contribution counted. */
    int base = ~0;
    for (int r = 0; r < size - 2; r++)
        base &= ~(1 << r);
    CHECK(flag == base || flag == (base & ~(1 << (size - 2))), "agree gave 0x%x, expected 0x%x or 0x%x", flag, base,
          base & ~(1 << (size - 2)));
    if (rc != MPI_SUCCESS)
        CHECK_CLASS(rc, MPIX_ERR_PROC_FAILED);
    /* All survivors agree on the flag: its minimum and maximum over them are equal. */
    MPI_OK(MPIX_Comm_failure_ack(s));
    MPI_Comm s2;
    MPI_OK(MPIX_Comm_shrink(s, &s2));
    int mm[2] = {flag, -flag}, out[2];
    MPI_OK(MPI_Allreduce(mm, out, 2, MPI_INT, MPI_MIN, s2));
    CHECK(out[0] == flag && -out[1] == flag, "the survivors agreed on different flags (0x%x here)", flag);
    MPI_OK(MPI_Comm_size(s2, &ssize));
    CHECK(ssize == size - 2, "second shrink gave %d ranks, expected %d", ssize, size - 2);
    MPI_OK(MPI_Comm_free(&s2));
    MPI_OK(MPI_Comm_free(&s));
    MPI_Finalize();
    return 0;
}
