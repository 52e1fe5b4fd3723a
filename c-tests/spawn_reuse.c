/* oxmpi-test: ranks=1,2 modes=processes,threads env=OXMPI_UNIVERSE_SIZE=4 env-matrix=OXMPI_FIBERS=0|1 */
/* A parent that spawns 2 children 100 times: 200 ranks in all, more than the job's 64 slots, so
   later rounds reuse the slots of finished children (threads mode too: their program instances
   are unloaded and their MPI state made new). Each child gets its round in argv and answers with
   it and a count of its own runs kept in a static (1: a fresh instance of the program, not a
   used one). The parent's open descriptors and threads do not grow with the rounds (a loaded
   instance's memfds are closed when its slot is reused; processes mode: no descriptor per
   child), processes mode's children are reaped by the launcher (no /proc entry, no zombie), and
   /dev/shm holds no more entries at the end than at the start. */
#define _DEFAULT_SOURCE
#include "oxtest.h"
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int runs;

static int entries(const char *dir)
{
    int n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

int main(int argc, char **argv)
{
    int rank;
    MPI_Comm parent;
    runs++;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_get_parent(&parent));
    if (parent != MPI_COMM_NULL) {
        CHECK(argc == 2, "child argc %d", argc);
        int me, msg[4];
        MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &me));
        msg[0] = atoi(argv[1]);
        msg[1] = me;
        msg[2] = runs;
        msg[3] = (int)getpid();
        MPI_OK(MPI_Send(msg, 4, MPI_INT, 0, 1, parent));
        MPI_OK(MPI_Comm_disconnect(&parent));
        MPI_OK(MPI_Finalize());
        return 0;
    }
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    int shm_before = entries("/dev/shm"), fds_mid = 0, fds_end = 0;
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    CHECK(n > 0, "readlink");
    exe[n] = 0;
    enum { ROUNDS = 100, PER = 2, MID = 10 };
    static int pids[ROUNDS * PER];
    int npids = 0;
    for (int k = 0; k < ROUNDS; k++) {
        MPI_Comm inter;
        char round[16];
        snprintf(round, sizeof round, "%d", k);
        char *args[] = {round, NULL};
        int errs[PER];
        MPI_OK(MPI_Comm_spawn(exe, args, PER, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, errs));
        for (int i = 0; i < PER; i++)
            CHECK(errs[i] == MPI_SUCCESS, "round %d: errcode %d of child %d", k, errs[i], i);
        if (rank == 0)
            for (int i = 0; i < PER; i++) {
                int msg[4];
                MPI_OK(MPI_Recv(msg, 4, MPI_INT, i, 1, inter, MPI_STATUS_IGNORE));
                CHECK(msg[0] == k && msg[1] == i, "round %d child %d answered round %d rank %d", k, i, msg[0], msg[1]);
                CHECK(msg[2] == 1, "round %d child %d: its static counter is %d, not 1 (a used instance?)", k, i, msg[2]);
                if (msg[3] != (int)getpid())
                    pids[npids++] = msg[3];
            }
        MPI_OK(MPI_Comm_disconnect(&inter));
        if (k == MID)
            fds_mid = entries("/proc/self/fd");
    }
    fds_end = entries("/proc/self/fd");
    /* A round's worth of slack: the last children may hold theirs until the next spawn. */
    CHECK(fds_end <= fds_mid + 2 * PER + 2, "open descriptors grew from %d (round %d) to %d (round %d)", fds_mid, MID, fds_end, ROUNDS);
    for (int k = 0; k < npids; k++) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%d", pids[k]);
        for (int waited = 0; access(path, F_OK) == 0 && waited < 20000; waited++)
            usleep(1000);
        CHECK(access(path, F_OK) != 0, "child %d (pid %d) was not reaped", k, pids[k]);
    }
    if (rank == 0)
        CHECK(entries("/dev/shm") <= shm_before, "/dev/shm grew from %d to %d entries", shm_before, entries("/dev/shm"));
    MPI_OK(MPI_Finalize());
    if (rank == 0)
        printf("spawn_reuse OK\n");
    return 0;
}
