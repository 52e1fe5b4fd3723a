/* C++ reduction functions (MPI::Op::Init) through both bindings: a commutative one (elementwise
 * max of |x|, with a datatype check) in Allreduce, and a non-commutative one (2x2 integer matrix
 * product, which must combine the ranks' matrices in rank order) in Reduce and Allreduce. */
#include <mpi.h>
#include <cstdio>
static void absmax(const void *in, void *inout, int len, const MPI::Datatype &dt) {
    if (dt != MPI::INT) { std::printf("absmax: wrong datatype\n"); MPI::COMM_WORLD.Abort(3); }
    const int *a = static_cast<const int *>(in);
    int *b = static_cast<int *>(inout);
    for (int i = 0; i < len; i++) { int x = a[i] < 0 ? -a[i] : a[i], y = b[i] < 0 ? -b[i] : b[i]; b[i] = x > y ? x : y; }
}
/* inout = in * inout for each 2x2 matrix (4 longs, row major): "in" holds the lower ranks'. */
static void matmul(const void *in, void *inout, int len, const MPI::Datatype &dt) {
    if (dt != MPI::LONG) { std::printf("matmul: wrong datatype\n"); MPI::COMM_WORLD.Abort(3); }
    const long *a = static_cast<const long *>(in);
    long *b = static_cast<long *>(inout);
    for (int m = 0; m + 4 <= len; m += 4) {
        long r[4] = {a[m] * b[m] + a[m + 1] * b[m + 2], a[m] * b[m + 1] + a[m + 1] * b[m + 3],
                     a[m + 2] * b[m] + a[m + 3] * b[m + 2], a[m + 2] * b[m + 1] + a[m + 3] * b[m + 3]};
        for (int i = 0; i < 4; i++) b[m + i] = r[i];
    }
}
static void rank_matrix(int r, long *m) { m[0] = r + 1; m[1] = 1; m[2] = 2 * r; m[3] = 1; }
int main(int argc, char **argv) {
    MPI::Init(argc, argv);
    int rank = MPI::COMM_WORLD.Get_rank(), size = MPI::COMM_WORLD.Get_size();
    MPI::Op op;
    op.Init(absmax, true);
    int v[3] = {rank % 2 ? -rank : rank, -7, 1000 + rank}, r[3];
    MPI::COMM_WORLD.Allreduce(v, r, 3, MPI::INT, op);
    op.Free();
    bool ok = r[0] == size - 1 && r[1] == (size == 1 ? -7 : 7) && r[2] == 1000 + size - 1;

    MPI::Op mat;
    mat.Init(matmul, false);
    ok = ok && !mat.Is_commutative();
    long mine[4], prod[4], all[4], expect[4] = {1, 0, 0, 1};
    rank_matrix(rank, mine);
    for (int q = 0; q < size; q++) {
        long m[4], t[4];
        rank_matrix(q, m);
        for (int i = 0; i < 4; i++) t[i] = expect[i];
        matmul(t, m, 4, MPI::LONG); /* m = expect * m */
        for (int i = 0; i < 4; i++) expect[i] = m[i];
    }
    MPI::COMM_WORLD.Reduce(mine, prod, 4, MPI::LONG, mat, 0);
    MPI::COMM_WORLD.Allreduce(mine, all, 4, MPI::LONG, mat);
    mat.Free();
    for (int i = 0; i < 4; i++) {
        if (rank == 0 && prod[i] != expect[i]) ok = false;
        if (all[i] != expect[i]) ok = false;
    }
    int good = ok, allgood = 0;
    MPI::COMM_WORLD.Allreduce(&good, &allgood, 1, MPI::INT, MPI::LAND);
    if (rank == 0) std::printf("cxx_op: %s (%d ranks)\n", allgood ? "OK" : "FAIL", size);
    MPI::Finalize();
    return allgood ? 0 : 1;
}
