/* oxmpi-test: ranks=2,4 expect=fail expect-stderr="own SIGSEGV handler ran" expect-stderr="rank 1" expect-stderr="killed by signal 11" mpich=skip timeout=30 */
/* Rank 1 installs its own SIGSEGV handler, which reports and returns, then faults. Returning
   re-executes the faulting store, so the handler can never fix it: the handler must run once,
   then the job end at once naming rank 1 (in a plain process it would run forever; threads mode
   once ran it until the time-out). A second run of the handler exits with 42, which fails the
   test. mpich=skip: under MPICH the rank does loop. */
#define _POSIX_C_SOURCE 200809L
#include "oxtest.h"
#include <signal.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t runs;

static void on_segv(int sig, siginfo_t *info, void *uc)
{
    static const char once[] = "own SIGSEGV handler ran\n", again[] = "own SIGSEGV handler ran again\n";
    (void)sig, (void)info, (void)uc;
    if (runs++ == 0) {
        write(2, once, sizeof once - 1);
        return;
    }
    write(2, again, sizeof again - 1);
    _exit(42);
}

int main(int argc, char **argv)
{
    int rank, x = 0;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    if (rank == 1) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_segv;
        sa.sa_flags = SA_SIGINFO;
        sigemptyset(&sa.sa_mask);
        CHECK(sigaction(SIGSEGV, &sa, NULL) == 0, "sigaction failed");
        struct sigaction now;
        CHECK(sigaction(SIGSEGV, NULL, &now) == 0 && now.sa_sigaction == on_segv,
              "sigaction reports a handler other than the program's own");
        volatile int *nowhere = NULL;
        *nowhere = 1;
    }
    /* Never satisfied: the job ends because rank 1 died. */
    MPI_Recv(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
