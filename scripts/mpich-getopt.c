/* Built with MPICH's mpicc (a PIE that keeps its own copies of optarg, optind and optopt) by
 * scripts/test.sh, run on oxmpi in both rank modes. Each rank parses its command line with
 * getopt_long after MPI_Init, rank r starting r steps late with a barrier after every step, so in
 * threads mode the ranks' parses interleave call by call; then prints one line of what it parsed.
 * The outputs of the two modes must be the same. */
#define _GNU_SOURCE
#include <getopt.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int verbose;

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"name", required_argument, NULL, 'N'},
        {"level", optional_argument, NULL, 'L'},
        {"verbose", no_argument, &verbose, 1},
        {NULL, 0, NULL, 0},
    };
    int rank, size, a = 0, b = 0, n = -1, bad = 0, bad_opt = 0, calls = 0, done = 0;
    const char *s = "-", *name = "-", *level = "-";
    char operands[1024] = "";

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* 2 argc + 1 calls is more than any parse needs. */
    for (int step = 0; step < 2 * argc + 1 + size; step++) {
        if (!done && step >= rank) {
            int c = getopt_long(argc, argv, "abn:s:", longopts, NULL);
            calls++;
            switch (c) {
            case -1: done = 1; break;
            case 'a': a++; break;
            case 'b': b++; break;
            case 'n': n = atoi(optarg); break;
            case 's': s = optarg; break;
            case 'N': name = optarg; break;
            case 'L': level = optarg ? optarg : "(none)"; break;
            case 0: break;
            case '?': bad++, bad_opt = optopt; break;
            default: printf("rank %d: unexpected getopt result %d\n", rank, c); break;
            }
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    for (int i = optind; i < argc; i++) {
        strncat(operands, argv[i], sizeof operands - strlen(operands) - 2);
        if (i + 1 < argc)
            strcat(operands, ",");
    }
    printf("rank %d: done=%d calls=%d a=%d b=%d n=%d s=%s name=%s level=%s verbose=%d bad=%d optopt=%c operands=%s\n",
           rank, done, calls, a, b, n, s, name, level, verbose, bad, bad_opt ? bad_opt : '-', operands);
    MPI_Finalize();
    return 0;
}
