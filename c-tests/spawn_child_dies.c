/* oxmpi-test: ranks=2 modes=processes env=OXMPI_UNIVERSE_SIZE=4 expect=fail expect-exit=137 expect-stderr="of spawned job 1" expect-stderr="killed by signal 9" */
/* A spawned rank that dies ends the whole job (parents waiting for it included), and the
   launcher names it as a rank of the spawned job. */
#define _DEFAULT_SOURCE
#include "oxtest.h"
#include <signal.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int v = 0;
    MPI_Comm parent, inter;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_get_parent(&parent));
    if (parent != MPI_COMM_NULL) {
        raise(SIGKILL);
        return 0;
    }
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    CHECK(n > 0, "readlink");
    exe[n] = 0;
    MPI_OK(MPI_Comm_spawn(exe, MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, MPI_ERRCODES_IGNORE));
    MPI_OK(MPI_Recv(&v, 1, MPI_INT, 0, 1, inter, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Finalize());
    return 0;
}
