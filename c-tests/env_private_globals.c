/* oxmpi-test: ranks=1,2,4,8 */
/* Every rank has its own copy of the program's globals and static locals, in every rank mode (in
   threads mode each rank thread runs a private instance of the program). Each rank updates them
   in turns interleaved by barriers; with shared copies the totals would be multiplied by the
   number of ranks. */
#include "oxtest.h"

int counter;                   /* zero-initialised global (.bss) */
int initialised = 42;          /* initialised global (.data) */
static long hidden = 7;        /* file-static */
char name[32] = "unset";

static int bump(void)
{
    static int calls;          /* static local */
    return ++calls;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    snprintf(name, sizeof name, "rank-%d", rank);
    for (int round = 0; round < 10; round++) {
        /* ranks take turns so that updates through a shared copy would be seen */
        for (int turn = 0; turn < size; turn++) {
            if (turn == rank) {
                counter++;
                initialised++;
                hidden += 2;
                CHECK(bump() == round + 1, "static local of rank %d shared: round %d", rank, round);
            }
            MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        }
    }
    CHECK(counter == 10, "global counter is %d, expected 10 (shared between ranks?)", counter);
    CHECK(initialised == 52, "initialised global is %d, expected 52", initialised);
    CHECK(hidden == 27, "file-static is %ld, expected 27", hidden);
    char want[32];
    snprintf(want, sizeof want, "rank-%d", rank);
    CHECK(strcmp(name, want) == 0, "global string is %s, expected %s", name, want);
    MPI_Finalize();
    return 0;
}
