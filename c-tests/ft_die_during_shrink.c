/* oxmpi-test: ranks=4,8 modes=processes mpich=skip expect-exit=137 timeout=30 */
/* oxmpi-test: env-matrix=FT_DELAY_US=0|30|100|300 */
/* A rank dies inside MPIX_Comm_shrink, then another inside MPIX_Comm_agree (issue 22, item 2):
 * the survivors must neither wait forever nor disagree. The victim arms a timer (FT_DELAY_US
 * microseconds, 0: at once) whose handler kills it with SIGKILL, and enters the call with the
 * others, so it dies at some point of the protocol. Every survivor must get the same result:
 * the same shrunk communicator (with or without the victim, whose part may have counted before
 * it died; then a second shrink leaves it out) and the same agreed flag.
 * Processes mode only: in threads mode a rank is a thread and SIGKILL ends the whole process.
 * mpich=skip: MPICH 4.0.2 (ch4) has no working ULFM in this build (see ulfm_revoke.c). */
#define _DEFAULT_SOURCE
#include "oxtest.h"
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

static void die(int sig)
{
    (void)sig;
    raise(SIGKILL);
}

/* The calling rank dies FT_DELAY_US microseconds from now (at once if 0). */
static void die_soon(void)
{
    const char *e = getenv("FT_DELAY_US");
    long us = e ? atol(e) : 0;
    if (us <= 0)
        raise(SIGKILL);
    signal(SIGALRM, die);
    ualarm((useconds_t)us, 0);
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
    if (rank == size - 1)
        die_soon();
    MPI_Comm s;
    MPI_OK(MPIX_Comm_shrink(MPI_COMM_WORLD, &s));
    if (rank == size - 1)
        for (;;)
            pause(); /* the call ended before the timer: die right after it */
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
        die_soon();
    int flag = ~(1 << rank), rc = MPIX_Comm_agree(s, &flag);
    if (rank == size - 2)
        for (;;)
            pause();
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
