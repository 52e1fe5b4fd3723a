/* oxmpi-test: ranks=1,2,3,8 timeout=90 */
/* Per-rank libc state, as a process of its own would have it (in threads mode all ranks share
   one libc): the rand/random and drand48 generators give each rank the sequence of its own seed
   while the other ranks draw from theirs in between; strtok keeps each rank's position; the exit
   handlers a rank registers run when that rank leaves main, last first (one registered by a
   handler runs next), while the other ranks are still running. Expected sequences come from
   glibc's reentrant forms (random_r, nrand48) on the test's own state. */
#define _GNU_SOURCE
#include "oxtest.h"
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int rank, size;
static char marker_dir[256];
static int order[3], norder;

static void handler3(void) { order[norder++] = 3; }

static void handler1(void)
{
    order[norder++] = 1;
    /* Registered first, so it runs last: 2, then 3 (registered by 2), then 1. */
    if (norder != 3 || order[0] != 2 || order[1] != 3 || order[2] != 1) {
        fprintf(stderr, "rank %d: exit handlers ran in the order %d %d %d (%d of them), expected 2 3 1\n", rank, order[0], order[1], order[2], norder);
        _exit(1);
    }
    if (rank == 0) {
        rmdir(marker_dir); /* rank 0 exits last: the others' markers are gone */
        return;
    }
    char path[300];
    snprintf(path, sizeof path, "%s/exited.%d", marker_dir, rank);
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "rank %d: cannot write %s\n", rank, path);
        _exit(1);
    }
    fclose(f);
}

static void handler2(void)
{
    order[norder++] = 2;
    atexit(handler3);
}

static void generators(void)
{
    /* rand/srand against random_r on a state of our own with the same seed. */
    static char buf[128];
    struct random_data rd;
    memset(&rd, 0, sizeof rd);
    initstate_r(100 + rank, buf, sizeof buf, &rd);
    srand(100 + rank);
    for (int i = 0; i < 60; i++) {
        if (i % 10 == 0)
            MPI_Barrier(MPI_COMM_WORLD); /* the other ranks draw in between */
        int32_t want;
        random_r(&rd, &want);
        int got = i % 2 ? rand() : (int)random();
        CHECK(got == want, "rank %d: draw %d of rand/random is %d, expected %d", rank, i, got, (int)want);
    }
    /* drand48 family against nrand48 on the seed srand48 sets (x = seed << 16 | 0x330E). */
    long seed = 7 + 1000L * rank;
    unsigned short x[3] = {0x330E, (unsigned short)(seed & 0xffff), (unsigned short)((seed >> 16) & 0xffff)};
    srand48(seed);
    for (int i = 0; i < 60; i++) {
        if (i % 10 == 0)
            MPI_Barrier(MPI_COMM_WORLD);
        long want = nrand48(x);
        long got = lrand48();
        CHECK(got == want, "rank %d: draw %d of lrand48 is %ld, expected %ld", rank, i, got, want);
    }
}

static void tokens(void)
{
    char line[64];
    snprintf(line, sizeof line, "r%d a%d b%d c%d", rank, rank, rank, rank);
    const char *want[] = {"r", "a", "b", "c"};
    char *t = strtok(line, " ");
    for (int i = 0; i < 4; i++) {
        MPI_Barrier(MPI_COMM_WORLD); /* the other ranks tokenize their lines in between */
        char expect[16];
        snprintf(expect, sizeof expect, "%s%d", want[i], rank);
        CHECK(t && strcmp(t, expect) == 0, "rank %d: token %d is \"%s\", expected \"%s\"", rank, i, t ? t : "(null)", expect);
        t = strtok(NULL, " ");
    }
    CHECK(t == NULL, "rank %d: a fifth token \"%s\"", rank, t);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    generators();
    tokens();

    if (rank == 0) {
        snprintf(marker_dir, sizeof marker_dir, "%s/oxmpi-exit-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
        CHECK(mkdtemp(marker_dir) != NULL, "mkdtemp failed");
    }
    MPI_Bcast(marker_dir, sizeof marker_dir, MPI_CHAR, 0, MPI_COMM_WORLD);
    atexit(handler1);
    atexit(handler2);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    if (rank != 0)
        return 0; /* handlers 2, 3, 1 run now, for this rank */

    /* Rank 0 is still running: every other rank's handlers must have run by the time it left
       main, not when the process (threads mode: shared by all ranks) ends. */
    for (int r = 1; r < size; r++) {
        char path[300];
        snprintf(path, sizeof path, "%s/exited.%d", marker_dir, r);
        int waited = 0;
        while (access(path, F_OK) != 0 && waited < 600) {
            usleep(100000);
            waited++;
        }
        CHECK(access(path, F_OK) == 0, "rank %d's exit handlers did not run while rank 0 waited 60 s after MPI_Finalize", r);
        unlink(path);
    }
    printf("env_libc_state: OK\n");
    fflush(stdout);
    /* rank 0's handler1 removes the directory */
    return 0;
}
