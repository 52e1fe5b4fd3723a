/* oxmpi-test: ranks=1,2,4,8 */
/* Programs parse their options with getopt before MPI_Init. getopt's state lives in the C library,
   which the ranks of a threads-mode job share, so oxmpi starts each rank's start-up code in turn
   and resets getopt for it: every rank must see all of its options. */
#define _POSIX_C_SOURCE 200809L
#include "oxtest.h"
#include <unistd.h>

int main(int argc, char **argv)
{
    char a0[] = "prog", a1[] = "-n", a2[] = "5", a3[] = "-x", a4[] = "tail";
    char *av[] = {a0, a1, a2, a3, a4, NULL};
    int n = 0, x = 0, opt;
    (void)argc;
    (void)argv;
    while ((opt = getopt(5, av, "n:x")) != -1) {
        if (opt == 'n')
            n = atoi(optarg);
        else if (opt == 'x')
            x = 1;
    }
    int first_operand = optind;
    MPI_OK(MPI_Init(&argc, &argv));
    int rank;
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    CHECK(n == 5 && x == 1 && first_operand == 4, "rank %d parsed n=%d x=%d optind=%d", rank, n, x, first_operand);
    MPI_Finalize();
    return 0;
}
