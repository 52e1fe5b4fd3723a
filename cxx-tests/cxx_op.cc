/* A C++ reduction function (MPI::Op::Init) through MPICH's C++ bindings.
 * expect-fail: openmpi (Open MPI's libmpi_cxx marks the op through Open MPI internals oxmpi
 * does not have: the job ends with the not-supported line) */
#include <mpi.h>
#include <cstdio>
/* A C++ reduction function (MPI::Op::Init): elementwise max of |x| on ints, plus a count check. */
static void absmax(const void *in, void *inout, int len, const MPI::Datatype &dt) {
    if (dt != MPI::INT) { std::printf("absmax: wrong datatype\n"); MPI::COMM_WORLD.Abort(3); }
    const int *a = static_cast<const int *>(in);
    int *b = static_cast<int *>(inout);
    for (int i = 0; i < len; i++) { int x = a[i] < 0 ? -a[i] : a[i], y = b[i] < 0 ? -b[i] : b[i]; b[i] = x > y ? x : y; }
}
int main(int argc, char **argv) {
    MPI::Init(argc, argv);
    int rank = MPI::COMM_WORLD.Get_rank(), size = MPI::COMM_WORLD.Get_size();
    MPI::Op op;
    op.Init(absmax, true);
    int v[3] = {rank % 2 ? -rank : rank, -7, 1000 + rank}, r[3];
    MPI::COMM_WORLD.Allreduce(v, r, 3, MPI::INT, op);
    op.Free();
    bool ok = r[0] == size - 1 && r[1] == (size == 1 ? -7 : 7) && r[2] == 1000 + size - 1;
    if (rank == 0) std::printf("cxx_op: %s (%d ranks)\n", ok ? "OK" : "FAIL", size);
    MPI::Finalize();
    return ok ? 0 : 1;
}
