/* oxmpi-test: ranks=1,2,4 */
/* Programs that parse options after MPI_Init (as OSU's benchmarks do): in a threads-mode job
   getopt's variables (optind, optarg) and its parse state would be the C library's one copy for
   every rank, so ranks parsing in lockstep would read each other's results. Every rank parses its
   own argument vector one getopt call at a time, with a barrier between calls, and must see
   exactly its own options. */
#define _POSIX_C_SOURCE 200809L
#include "oxtest.h"
#include <unistd.h>

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    int rank;
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    char n_arg[16], m_arg[16];
    snprintf(n_arg, sizeof n_arg, "%d", rank * 10 + 1);
    snprintf(m_arg, sizeof m_arg, "%d", rank + 100);
    char a0[] = "prog", a1[] = "-n", a3[] = "-v", a4[] = "-m", a6[] = "operand";
    char *av[] = {a0, a1, n_arg, a3, a4, m_arg, a6, NULL};
    int n = -1, m = -1, v = 0, opt, calls = 0;
    do {
        opt = getopt(7, av, "n:vm:");
        if (opt == 'n')
            n = atoi(optarg);
        else if (opt == 'm')
            m = atoi(optarg);
        else if (opt == 'v')
            v++;
        else
            CHECK(opt == -1, "rank %d: getopt returned '%c' (%d)", rank, opt, opt);
        calls++;
        /* every rank makes the same number of calls, so the barriers pair up */
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    } while (opt != -1 && calls < 10);
    CHECK(n == rank * 10 + 1 && m == rank + 100 && v == 1, "rank %d parsed n=%d m=%d v=%d", rank, n, m, v);
    CHECK(optind == 6 && calls == 4, "rank %d: optind=%d after %d calls, expected 6 after 4", rank, optind, calls);
    MPI_Finalize();
    return 0;
}
