/* oxmpi-test: ranks=2,4,8 */
/* Ranks parsing options after MPI_Init (as PnetCDF's ncmpidiff does) while the host starts the
   later ranks of a threads-mode job: for each new rank the host restarts the C library's getopt
   (optind = 0), which must not land inside an earlier rank's parse. Every rank parses its own
   argument vector again and again until every rank has joined an MPI_Ibarrier, so the parses of
   the early ranks overlap the later ranks' start-up, and each parse must see all its options. */
#define _POSIX_C_SOURCE 200809L
#include "oxtest.h"
#include <unistd.h>

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    int rank;
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_Request req;
    MPI_OK(MPI_Ibarrier(MPI_COMM_WORLD, &req));
    long parses = 0, bad = 0;
    int done = 0;
    while (!done) {
        char a0[] = "prog", a1[] = "-a", a2[] = "-b", a3[] = "7", a4[] = "-c", a5[] = "one", a6[] = "two";
        char *av[] = {a0, a1, a2, a3, a4, a5, a6, NULL};
        int a = 0, b = -1, c = 0, opt;
        optind = 1;
        while ((opt = getopt(7, av, "ab:c")) != -1) {
            if (opt == 'a')
                a++;
            else if (opt == 'b')
                b = atoi(optarg);
            else if (opt == 'c')
                c++;
            else
                bad++;
        }
        if (a != 1 || b != 7 || c != 1 || optind != 5) {
            if (bad++ < 3)
                fprintf(stderr, "rank %d parse %ld: a=%d b=%d c=%d optind=%d\n", rank, parses, a, b, c, optind);
        }
        parses++;
        MPI_OK(MPI_Test(&req, &done, MPI_STATUS_IGNORE));
    }
    CHECK(bad == 0, "rank %d: %ld of %ld parses went wrong", rank, bad, parses);
    MPI_OK(MPI_Finalize());
    return 0;
}
