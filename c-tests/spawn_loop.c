/* oxmpi-test: ranks=1,2 modes=processes env=OXMPI_UNIVERSE_SIZE=4 */
/* A parent that spawns repeatedly, more ranks in all (72) than the job has slots for (64):
   the children send their pids and end, and later rounds reuse their slots. Afterwards every child has been reaped by the launcher (its /proc entry is gone,
   no zombie) and /dev/shm holds no more entries than before. */
#define _DEFAULT_SOURCE
#include "oxtest.h"
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int shm_entries(void)
{
    int n = 0;
    DIR *d = opendir("/dev/shm");
    if (!d)
        return 0;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

int main(int argc, char **argv)
{
    int rank, size, pid;
    MPI_Comm parent;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_get_parent(&parent));
    if (parent != MPI_COMM_NULL) {
        pid = (int)getpid();
        MPI_OK(MPI_Send(&pid, 1, MPI_INT, 0, 1, parent));
        MPI_OK(MPI_Comm_disconnect(&parent));
        MPI_OK(MPI_Finalize());
        return 0;
    }
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int before = shm_entries();
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    CHECK(n > 0, "readlink");
    exe[n] = 0;
    enum { ROUNDS = 24 };
    int per = 3, npids = 0, pids[ROUNDS * 3];
    for (int k = 0; k < ROUNDS; k++) {
        MPI_Comm inter;
        MPI_OK(MPI_Comm_spawn(exe, MPI_ARGV_NULL, per, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, MPI_ERRCODES_IGNORE));
        if (rank == 0)
            for (int i = 0; i < per; i++)
                MPI_OK(MPI_Recv(&pids[npids++], 1, MPI_INT, i, 1, inter, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Comm_disconnect(&inter));
    }
    if (rank == 0) {
        for (int k = 0; k < npids; k++) {
            char path[64];
            snprintf(path, sizeof path, "/proc/%d", pids[k]);
            int waited = 0;
            while (access(path, F_OK) == 0 && waited < 20000) {
                usleep(1000);
                waited++;
            }
            CHECK(access(path, F_OK) != 0, "child %d (pid %d) was not reaped", k, pids[k]);
        }
        CHECK(shm_entries() <= before, "/dev/shm grew from %d to %d entries", before, shm_entries());
    }
    MPI_OK(MPI_Finalize());
    if (rank == 0)
        printf("spawn_loop OK\n");
    return 0;
}
