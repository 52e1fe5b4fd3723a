/* expect-fail: mpich openmpi. A C++ error handler (MPI::Comm::Create_errhandler) is not supported: the job must
 * end at once with one line naming it, never run on with a half-made handler. */
#include <mpi.h>
#include <cstdio>
static void handler(MPI::Comm &, int *, ...) {}
int main(int argc, char **argv) {
    MPI::Init(argc, argv);
    MPI::Errhandler eh = MPI::Comm::Create_errhandler(handler);
    std::printf("cxx_errhandler: not stopped\n");
    eh.Free();
    MPI::Finalize();
    return 0;
}
