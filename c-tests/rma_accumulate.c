/* oxmpi-test: ranks=1,2,3,4,8 timeout=60 */
/* The accumulate family: MPI_Accumulate with several predefined ops (incl. MPI_REPLACE) and a
   strided target type, MPI_Get_accumulate (incl. MPI_NO_OP), MPI_Raccumulate/Rget_accumulate,
   concurrent accumulates from all ranks to one target under lock_all with exact sums,
   MPI_Fetch_and_op counters and an MPI_Compare_and_swap mutex; on a window on user memory and
   an allocated one. */
#include "oxtest.h"
#include <string.h>

static int rank, size;

static void ops(MPI_Win win, long *mem)
{
    /* 0..9: SUM of rank+1 from everyone into rank 0's; 10: MAX; 11: MIN; 12: BXOR; 13: PROD */
    MPI_OK(MPI_Win_fence(0, win));
    for (int i = 0; i < 64; i++)
        mem[i] = (i == 13) ? 1 : 0;
    MPI_OK(MPI_Win_fence(0, win));
    long v[10];
    for (int i = 0; i < 10; i++)
        v[i] = rank + 1 + i;
    long one = rank + 1;
    MPI_OK(MPI_Accumulate(v, 10, MPI_LONG, 0, 0, 10, MPI_LONG, MPI_SUM, win));
    MPI_OK(MPI_Accumulate(&one, 1, MPI_LONG, 0, 10, 1, MPI_LONG, MPI_MAX, win));
    long neg = -one;
    MPI_OK(MPI_Accumulate(&neg, 1, MPI_LONG, 0, 11, 1, MPI_LONG, MPI_MIN, win));
    long bit = 1L << rank;
    MPI_OK(MPI_Accumulate(&bit, 1, MPI_LONG, 0, 12, 1, MPI_LONG, MPI_BXOR, win));
    long two = 2;
    MPI_OK(MPI_Accumulate(&two, 1, MPI_LONG, 0, 13, 1, MPI_LONG, MPI_PROD, win));
    MPI_OK(MPI_Win_fence(0, win));
    if (rank == 0) {
        long s = (long)size * (size + 1) / 2;
        for (int i = 0; i < 10; i++)
            CHECK(mem[i] == s + (long)i * size, "sum mem[%d]=%ld", i, mem[i]);
        CHECK(mem[10] == size, "max %ld", mem[10]);
        CHECK(mem[11] == -size, "min %ld", mem[11]);
        CHECK(mem[12] == (1L << size) - 1, "bxor %ld", mem[12]);
        CHECK(mem[13] == 1L << size, "prod %ld", mem[13]);
    }
    /* Strided target type: add into every other element of 20..39 of the right neighbour. */
    MPI_Datatype vec;
    MPI_OK(MPI_Type_vector(10, 1, 2, MPI_LONG, &vec));
    MPI_OK(MPI_Type_commit(&vec));
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_OK(MPI_Accumulate(v, 10, MPI_LONG, right, 20, 1, vec, MPI_SUM, win));
    MPI_OK(MPI_Win_fence(0, win));
    for (int i = 0; i < 20; i++)
        CHECK(mem[20 + i] == (i % 2 ? 0 : left + 1 + i / 2), "strided acc mem[%d]=%ld", 20 + i, mem[20 + i]);
    /* REPLACE, then Get_accumulate with NO_OP reads it back; Get_accumulate SUM fetches old. */
    long r = 1000 + rank, got = -1;
    MPI_OK(MPI_Accumulate(&r, 1, MPI_LONG, right, 50, 1, MPI_LONG, MPI_REPLACE, win));
    MPI_OK(MPI_Win_fence(0, win));
    MPI_OK(MPI_Get_accumulate(NULL, 0, MPI_LONG, &got, 1, MPI_LONG, right, 50, 1, MPI_LONG, MPI_NO_OP, win));
    MPI_OK(MPI_Win_fence(0, win));
    CHECK(got == 1000 + rank, "replace/no_op got %ld", got);
    long add = 5;
    MPI_OK(MPI_Get_accumulate(&add, 1, MPI_LONG, &got, 1, MPI_LONG, left, 50, 1, MPI_LONG, MPI_SUM, win));
    MPI_OK(MPI_Win_fence(0, win));
    CHECK(got == 1000 + (left + size - 1) % size, "get_acc old %ld", got);
    CHECK(mem[50] == 1000 + left + 5, "get_acc new %ld", mem[50]);
    /* Request-based forms under lock. */
    MPI_Request rq[2];
    long old2[2], inc[2] = {1, 2};
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    MPI_OK(MPI_Raccumulate(inc, 2, MPI_LONG, 0, 60, 2, MPI_LONG, MPI_SUM, win, &rq[0]));
    MPI_OK(MPI_Rget_accumulate(inc, 2, MPI_LONG, old2, 2, MPI_LONG, 0, 62, 2, MPI_LONG, MPI_SUM, win, &rq[1]));
    MPI_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    MPI_OK(MPI_Win_unlock(0, win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        CHECK(mem[60] == size && mem[61] == 2 * size, "raccumulate %ld %ld", mem[60], mem[61]);
        CHECK(mem[62] == size && mem[63] == 2 * size, "rget_accumulate %ld %ld", mem[62], mem[63]);
        MPI_OK(MPI_Win_unlock(0, win));
    }
    MPI_OK(MPI_Type_free(&vec));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* All ranks add into the same elements of rank 0 (and the last rank) many times, concurrently. */
static void concurrent(MPI_Win win, long *mem)
{
    const int iters = 200;
    int tgt[2] = {0, size - 1};
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
    for (int i = 0; i < 64; i++)
        mem[i] = 0;
    MPI_OK(MPI_Win_unlock(rank, win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Win_lock_all(0, win));
    long v[8];
    for (int i = 0; i < 8; i++)
        v[i] = rank + 1;
    for (int it = 0; it < iters; it++) {
        for (int k = 0; k < 2; k++)
            MPI_OK(MPI_Accumulate(v, 8, MPI_LONG, tgt[k], 0, 8, MPI_LONG, MPI_SUM, win));
        long one = 1, old;
        MPI_OK(MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, 8, MPI_SUM, win));
        MPI_OK(MPI_Win_flush(0, win));
        CHECK(old >= 0 && old < (long)iters * size, "fetch_and_op old %ld", old);
    }
    /* A mutex on element 9 of rank 0 with compare-and-swap guarding element 10. */
    for (int it = 0; it < 20; it++) {
        long me = rank + 1, zero = 0, prev;
        do {
            MPI_OK(MPI_Compare_and_swap(&me, &zero, &prev, MPI_LONG, 0, 9, win));
            MPI_OK(MPI_Win_flush(0, win));
        } while (prev != 0);
        long x;
        MPI_OK(MPI_Get(&x, 1, MPI_LONG, 0, 10, 1, MPI_LONG, win));
        MPI_OK(MPI_Win_flush(0, win));
        x++;
        MPI_OK(MPI_Put(&x, 1, MPI_LONG, 0, 10, 1, MPI_LONG, win));
        MPI_OK(MPI_Win_flush(0, win));
        MPI_OK(MPI_Compare_and_swap(&zero, &me, &prev, MPI_LONG, 0, 9, win));
        MPI_OK(MPI_Win_flush(0, win));
        CHECK(prev == me, "mutex owner was %ld, not %ld", prev, me);
    }
    MPI_OK(MPI_Win_unlock_all(win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
    long s = (long)size * (size + 1) / 2 * iters;
    if (rank == 0 || rank == size - 1)
        for (int i = 0; i < 8; i++)
            CHECK(mem[i] == (size == 1 ? 2 * s : s), "concurrent sum mem[%d]=%ld expected %ld", i, mem[i], s);
    if (rank == 0) {
        CHECK(mem[8] == (long)iters * size, "fetch_and_op counter %ld", mem[8]);
        CHECK(mem[9] == 0, "mutex left held by %ld", mem[9]);
        CHECK(mem[10] == 20L * size, "mutex-protected counter %ld", mem[10]);
    }
    MPI_OK(MPI_Win_unlock(rank, win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Win win;
    long *mem = oxt_malloc(64 * sizeof(long));
    MPI_OK(MPI_Win_create(mem, 64 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    ops(win, mem);
    concurrent(win, mem);
    MPI_OK(MPI_Win_free(&win));
    free(mem);
    MPI_OK(MPI_Win_allocate(64 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    ops(win, mem);
    concurrent(win, mem);
    /* an empty access combines nothing: any predefined op is accepted (MPICH; mpi4py does this) */
    {
        char o = 0, r = 0;
        MPI_OK(MPI_Win_fence(0, win));
        MPI_OK(MPI_Get_accumulate(&o, 0, MPI_BYTE, &r, 0, MPI_BYTE, rank, 0, 0, MPI_BYTE, MPI_SUM, win));
        MPI_OK(MPI_Accumulate(&o, 0, MPI_BYTE, rank, 0, 0, MPI_BYTE, MPI_PROD, win));
        MPI_OK(MPI_Win_fence(0, win));
    }
    MPI_OK(MPI_Win_free(&win));
    MPI_Finalize();
    return 0;
}
