/* The MPI-2 C++ bindings (MPI::Init, MPI::COMM_WORLD, Allreduce, Send/Recv with a status, Dup):
 * the objects the bindings library builds in its constructors, used by every rank. */
#include <mpi.h>
#include <cstdio>
#include <vector>
int main(int argc, char **argv) {
    MPI::Init(argc, argv);
    int rank = MPI::COMM_WORLD.Get_rank(), size = MPI::COMM_WORLD.Get_size();
    int v = rank + 1, sum = 0;
    MPI::COMM_WORLD.Allreduce(&v, &sum, 1, MPI::INT, MPI::SUM);
    std::vector<double> buf(1000, rank);
    if (size > 1) {
        if (rank == 0) { MPI::COMM_WORLD.Send(buf.data(), 1000, MPI::DOUBLE, 1, 7); }
        else if (rank == 1) { MPI::Status st; MPI::COMM_WORLD.Recv(buf.data(), 1000, MPI::DOUBLE, 0, 7, st); if (st.Get_source() != 0 || st.Get_count(MPI::DOUBLE) != 1000 || buf[999] != 0) { printf("bad recv\n"); MPI::COMM_WORLD.Abort(2);} }
    }
    MPI::Intracomm dup = MPI::COMM_WORLD.Dup();
    int r2 = dup.Get_rank();
    dup.Free();
    bool ok = sum == size * (size + 1) / 2 && r2 == rank;
    if (rank == 0) printf("cxx_basic: %s (%d ranks)\n", ok ? "OK" : "FAIL", size);
    MPI::Finalize();
    return ok ? 0 : 1;
}
