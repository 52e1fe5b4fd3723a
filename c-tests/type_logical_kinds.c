/* oxmpi-test: ranks=1,2,3,4 timeout=60 */
/* The Fortran LOGICAL kinds MPI_LOGICAL1, 2, 4 and 8 (MPI 5.0; Open MPI 4.1 and the MPI-5 ABI
   define them; oxmpi's mpi.h too; MPICH 4.0's does not, so there the test checks nothing): each
   is a predefined type of its size and name, moves by point-to-point, and reduces with MPI_LAND,
   MPI_LOR and MPI_LXOR (any non-zero element is true, results are 1 or 0, as gfortran stores
   .TRUE.); MPI_SUM on a logical type is refused with MPI_ERR_OP (MPI 4.1 section 6.9.2; Open MPI 4.1 accepts it). The same source builds with
   mpicc.openmpi and 'mpicc -mpi-abi', so it checks the foreign ABI layers' mappings as well. */
#include "oxtest.h"
#include <stdint.h>
#include <string.h>

#define N 5

#ifdef MPI_LOGICAL1
/* Element i of rank r: true on ranks whose bit i is set (so LAND, LOR and LXOR differ). */
static int truth(int r, int i) { return (r >> (i % 3)) & 1 || i == 4; }

static void store(void *buf, int size, int i, long long v)
{
    switch (size) {
    case 1: ((int8_t *)buf)[i] = (int8_t)v; break;
    case 2: ((int16_t *)buf)[i] = (int16_t)v; break;
    case 4: ((int32_t *)buf)[i] = (int32_t)v; break;
    default: ((int64_t *)buf)[i] = v; break;
    }
}

static long long load(const void *buf, int size, int i)
{
    switch (size) {
    case 1: return ((const int8_t *)buf)[i];
    case 2: return ((const int16_t *)buf)[i];
    case 4: return ((const int32_t *)buf)[i];
    default: return ((const int64_t *)buf)[i];
    }
}

static void check_kind(MPI_Datatype t, int want_size, const char *want_name)
{
    int rank, size, sz, len, i, r;
    char name[MPI_MAX_OBJECT_NAME];
    int64_t in[N], out[N]; /* room for N elements of any kind */
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_OK(MPI_Type_size(t, &sz));
    CHECK(sz == want_size, "%s: size %d, want %d", want_name, sz, want_size);
    MPI_OK(MPI_Type_get_name(t, name, &len));
    CHECK(strcmp(name, want_name) == 0, "name '%s', want '%s'", name, want_name);

    /* Reductions: a true value other than 1 (7) counts as true. */
    MPI_Op ops[3] = {MPI_LAND, MPI_LOR, MPI_LXOR};
    const char *opn[3] = {"MPI_LAND", "MPI_LOR", "MPI_LXOR"};
    for (int o = 0; o < 3; o++) {
        for (i = 0; i < N; i++)
            store(in, sz, i, truth(rank, i) ? 7 : 0);
        memset(out, 0x55, sizeof out);
        MPI_OK(MPI_Allreduce(in, out, N, t, ops[o], MPI_COMM_WORLD));
        for (i = 0; i < N; i++) {
            int all = 1, any = 0, odd = 0;
            for (r = 0; r < size; r++) {
                all &= truth(r, i);
                any |= truth(r, i);
                odd ^= truth(r, i);
            }
            int want = o == 0 ? all : o == 1 ? any : odd;
            long long got = load(out, sz, i);
            CHECK((got != 0) == want, "%s %s element %d: %lld, want %s", want_name, opn[o], i, got,
                  want ? "true" : "false");
        }
    }

    /* Point-to-point around a ring, bytes intact. */
    for (i = 0; i < N; i++)
        store(in, sz, i, rank * 10 + i);
    memset(out, 0, sizeof out);
    MPI_OK(MPI_Sendrecv(in, N, t, (rank + 1) % size, 0, out, N, t, (rank + size - 1) % size, 0,
                        MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (i = 0; i < N; i++)
        CHECK(load(out, sz, i) == ((rank + size - 1) % size) * 10 + i, "%s ring element %d", want_name, i);

    /* Arithmetic on a logical type is not allowed. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK_CLASS(MPI_Allreduce(in, out, N, t, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_OP);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}
#endif

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
#ifdef MPI_LOGICAL1
    check_kind(MPI_LOGICAL1, 1, "MPI_LOGICAL1");
    check_kind(MPI_LOGICAL2, 2, "MPI_LOGICAL2");
    check_kind(MPI_LOGICAL4, 4, "MPI_LOGICAL4");
    check_kind(MPI_LOGICAL8, 8, "MPI_LOGICAL8");
#endif
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Finalize();
    if (rank == 0)
        printf("type_logical_kinds OK\n");
    return 0;
}
