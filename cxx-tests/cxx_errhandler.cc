/* C++ error handlers (MPI::Comm::Create_errhandler, MPI::Win::Create_errhandler) through both
 * bindings: the handler is called with the communicator (window) the error happened on and the
 * error's code, for Call_errhandler and for an error the library raises (a send to a rank that
 * does not exist). Once the handler returns, the call returns that code under Open MPI and
 * MPI_SUCCESS under MPICH (MPIR_Err_return_comm: C++ handlers report errors by throwing). */
#include <mpi.h>
#include <cstdio>
static int calls, last_code;
static MPI::Comm *expect_comm;
static bool comm_ok = true;
static void comm_handler(MPI::Comm &comm, int *code, ...) {
    calls++;
    last_code = *code;
    if (expect_comm && MPI::Comm::Compare(comm, *expect_comm) != MPI_IDENT) comm_ok = false;
}
static int win_calls, win_code;
static MPI::Win *expect_win;
static bool win_ok = true;
static void win_handler(MPI::Win &win, int *code, ...) {
    win_calls++;
    win_code = *code;
    if (expect_win && (MPI_Win)win != (MPI_Win)*expect_win) win_ok = false;
}
/* A failed check names its line. */
#define CHECK(c) do { if (!(c)) { std::printf("rank %d: line %d: check failed: %s\n", rank, __LINE__, #c); ok = false; } } while (0)
int main(int argc, char **argv) {
    MPI::Init(argc, argv);
    int rank = MPI::COMM_WORLD.Get_rank(), size = MPI::COMM_WORLD.Get_size();
    bool ok = true;
    MPI::Errhandler eh = MPI::Comm::Create_errhandler(comm_handler);
    MPI::Intracomm dup = MPI::COMM_WORLD.Dup();
    dup.Set_errhandler(eh);
    expect_comm = &dup;
    /* The C call: libmpichcxx's Comm::Call_errhandler makes a virtual call through the vtable
     * the program copy-relocates, which threads mode leaves empty for now (see the report). */
    MPI_Comm_call_errhandler((MPI_Comm)dup, MPI_ERR_OTHER);
    CHECK(calls == 1 && last_code == MPI_ERR_OTHER);
    /* An error of the library itself: a send to rank `size`. */
    int x = 0;
    int rc = MPI_Send(&x, 1, MPI_INT, size, 0, (MPI_Comm)dup);
    CHECK(calls == 2 && MPI::Get_error_class(last_code) == MPI_ERR_RANK);
#ifdef MPICH_VERSION
    CHECK(rc == MPI_SUCCESS); /* MPICH: a C++ handler that returns leaves no error to return */
#else
    CHECK(rc == last_code);
#endif
    /* The same handler on MPI::COMM_WORLD. */
    MPI::COMM_WORLD.Set_errhandler(eh);
    expect_comm = &MPI::COMM_WORLD;
    MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_ARG);
    CHECK(calls == 3 && last_code == MPI_ERR_ARG && comm_ok);
    MPI::COMM_WORLD.Set_errhandler(MPI::ERRORS_ARE_FATAL);
    eh.Free();
    dup.Free();

    /* A window's handler. */
    MPI::Errhandler weh = MPI::Win::Create_errhandler(win_handler);
    int buf[4];
    MPI::Win win = MPI::Win::Create(buf, sizeof buf, sizeof(int), MPI::INFO_NULL, MPI::COMM_WORLD);
    win.Set_errhandler(weh);
    expect_win = &win;
    MPI_Win_call_errhandler((MPI_Win)win, MPI_ERR_OTHER);
    CHECK(win_calls == 1 && win_code == MPI_ERR_OTHER && win_ok);
    win.Free();
    weh.Free();

    int good = ok, allgood = 0;
    MPI::COMM_WORLD.Allreduce(&good, &allgood, 1, MPI::INT, MPI::LAND);
    if (rank == 0) std::printf("cxx_errhandler: %s (%d ranks)\n", allgood ? "OK" : "FAIL", size);
    MPI::Finalize();
    return allgood ? 0 : 1;
}
