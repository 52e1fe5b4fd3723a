/* The bindings' constants and vtables a program copies from the bindings library
 * (R_X86_64_COPY): MPI::ERR_OTHER must read MPI_ERR_OTHER, and a virtual call the bindings make
 * on the program's objects (Call_errhandler on a Dup'd communicator, through Get_errhandler)
 * must reach the C++ handler. In threads mode these copies were filled from the program itself
 * (zero) before runtime/threads/loader/copy_source.rs. */
#include <mpi.h>
#include <cstdio>
static int called = 0;
static void handler(MPI::Comm &comm, int *code, ...) { called = *code; }
int main(int argc, char **argv) {
    MPI::Init(argc, argv);
    int bad = 0;
    if (MPI::ERR_OTHER != MPI_ERR_OTHER) { printf("ERR_OTHER %d\n", MPI::ERR_OTHER); bad = 1; }
    MPI::Intracomm dup = MPI::COMM_WORLD.Dup();
    MPI::Errhandler eh = MPI::Comm::Create_errhandler(handler);
    dup.Set_errhandler(eh);
    dup.Call_errhandler(MPI::ERR_OTHER);
    if (called != MPI_ERR_OTHER) { printf("handler got %d\n", called); bad = 1; }
    if (!bad && MPI::COMM_WORLD.Get_rank() == 0) printf("cxx_consts: OK (%d ranks)\n", MPI::COMM_WORLD.Get_size());
    dup.Free();
    MPI::Finalize();
    return bad;
}
