/* oxmpi-test: ranks=1,2,3,4,8 timeout=60 */
/* MPI_Put/MPI_Get (and MPI_Rput/MPI_Rget, the _c forms) under fence and lock, on windows of
   every flavor (create on user memory, allocate, allocate_shared, dynamic), with contiguous and
   derived origin/target datatypes, sizes from 1 element to 1 MiB. Over several nodes
   (mpiexec --nodes K) the same, but allocate_shared on MPI_COMM_WORLD fails with
   MPI_ERR_RMA_SHARED. */
#include "oxtest.h"
#include <string.h>

#define N (1 << 18) /* ints per rank: 1 MiB */

static int rank, size;

/* Each rank puts a pattern to its right neighbour, then gets it back from the left one. */
static void ring_put_get(MPI_Win win, int *mem, MPI_Aint disp0)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int counts[] = {1, 7, 1000, N};
    for (int c = 0; c < 4; c++) {
        int n = counts[c];
        int *src = oxt_malloc(n * sizeof(int)), *dst = oxt_malloc(n * sizeof(int));
        for (int i = 0; i < n; i++)
            src[i] = rank * 1000003 + i + c;
        MPI_OK(MPI_Win_fence(0, win));
        MPI_OK(MPI_Put(src, n, MPI_INT, right, disp0, n, MPI_INT, win));
        MPI_OK(MPI_Win_fence(0, win));
        for (int i = 0; i < n; i++)
            CHECK(mem[i] == left * 1000003 + i + c, "put: mem[%d]=%d n=%d", i, mem[i], n);
        memset(dst, 0, n * sizeof(int));
        MPI_OK(MPI_Get(dst, n, MPI_INT, left, disp0, n, MPI_INT, win));
        MPI_OK(MPI_Win_fence(0, win));
        int ll = (left + size - 1) % size;
        for (int i = 0; i < n; i++)
            CHECK(dst[i] == ll * 1000003 + i + c, "get: dst[%d]=%d n=%d", i, dst[i], n);
        free(src);
        free(dst);
    }
}

/* Strided origin and target types: put every other int of a vector into a strided target. */
static void derived(MPI_Win win, int *mem)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Datatype vec, res;
    MPI_OK(MPI_Type_vector(100, 1, 3, MPI_INT, &vec));
    MPI_OK(MPI_Type_commit(&vec));
    MPI_OK(MPI_Type_contiguous(100, MPI_INT, &res));
    MPI_OK(MPI_Type_commit(&res));
    int src[100];
    for (int i = 0; i < 100; i++)
        src[i] = rank * 7 + i;
    MPI_OK(MPI_Win_fence(0, win));
    for (int i = 0; i < 300; i++)
        mem[i] = -1;
    MPI_OK(MPI_Win_fence(0, win));
    MPI_OK(MPI_Put(src, 1, res, right, 0, 1, vec, win));
    MPI_OK(MPI_Win_fence(0, win));
    for (int i = 0; i < 300; i++)
        CHECK(mem[i] == (i % 3 == 0 ? left * 7 + i / 3 : -1), "strided put: mem[%d]=%d", i, mem[i]);
    /* Get the strided target into a strided origin. */
    int back[300];
    for (int i = 0; i < 300; i++)
        back[i] = -2;
    MPI_OK(MPI_Get(back, 1, vec, rank, 0, 100, MPI_INT, win));
    MPI_OK(MPI_Win_fence(0, win));
    for (int i = 0; i < 300; i++)
        CHECK(back[i] == (i % 3 == 0 ? mem[i / 3] : -2), "strided get: back[%d]=%d", i, back[i]);
    MPI_OK(MPI_Type_free(&vec));
    MPI_OK(MPI_Type_free(&res));
}

/* Passive target: lock, Rput/Rget with requests, _c forms, unlock. */
static void passive(MPI_Win win, int *mem)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int v[16], w[16];
    for (int i = 0; i < 16; i++)
        v[i] = 5000 + rank * 16 + i;
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));
    MPI_Request r;
    MPI_OK(MPI_Rput(v, 16, MPI_INT, right, 16, 16, MPI_INT, win, &r));
    MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Put_c(v, 8, MPI_INT, right, 40, 8, MPI_INT, win));
    MPI_OK(MPI_Win_unlock(right, win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
    for (int i = 0; i < 16; i++)
        CHECK(mem[16 + i] == 5000 + left * 16 + i, "rput: mem[%d]=%d", 16 + i, mem[16 + i]);
    for (int i = 0; i < 8; i++)
        CHECK(mem[40 + i] == 5000 + left * 16 + i, "put_c: mem[%d]=%d", 40 + i, mem[40 + i]);
    MPI_OK(MPI_Win_unlock(rank, win));
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, left, 0, win));
    MPI_OK(MPI_Rget(w, 16, MPI_INT, left, 16, 16, MPI_INT, win, &r));
    MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    int ll = (left + size - 1) % size;
    for (int i = 0; i < 16; i++)
        CHECK(w[i] == 5000 + ll * 16 + i, "rget: w[%d]=%d", i, w[i]);
    MPI_OK(MPI_Get_c(w, 4, MPI_INT, left, 40, 4, MPI_INT, win));
    MPI_OK(MPI_Win_flush(left, win));
    for (int i = 0; i < 4; i++)
        CHECK(w[i] == 5000 + ll * 16 + i, "get_c: w[%d]=%d", i, w[i]);
    MPI_OK(MPI_Win_unlock(left, win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Win win;
    int *mem;

    /* Win_create on user memory. */
    mem = oxt_malloc(N * sizeof(int));
    MPI_OK(MPI_Win_create(mem, N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    ring_put_get(win, mem, 0);
    derived(win, mem);
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    passive(win, mem);
    MPI_OK(MPI_Win_free(&win));
    CHECK(win == MPI_WIN_NULL, "Win_free sets MPI_WIN_NULL");
    free(mem);

    /* Win_allocate and Win_allocate_shared. */
    MPI_OK(MPI_Win_allocate(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    ring_put_get(win, mem, 0);
    derived(win, mem);
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    passive(win, mem);
    MPI_OK(MPI_Win_free(&win));
    if (oxt_spans_nodes(MPI_COMM_WORLD)) {
        /* Over several nodes: refused, the ranks do not share memory. */
        MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        CHECK_CLASS(MPI_Win_allocate_shared(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win), MPI_ERR_RMA_SHARED);
        MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    } else {
        MPI_OK(MPI_Win_allocate_shared(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
        ring_put_get(win, mem, 0);
        MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
        passive(win, mem);
        MPI_OK(MPI_Win_free(&win));
    }

    /* Dynamic: displacements are addresses, exchanged by the application. */
    mem = oxt_malloc(N * sizeof(int));
    MPI_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_OK(MPI_Win_attach(win, mem, N * sizeof(int)));
    MPI_Aint mine, *addrs = oxt_malloc(size * sizeof(MPI_Aint));
    MPI_OK(MPI_Get_address(mem, &mine));
    MPI_OK(MPI_Allgather(&mine, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD));
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int v[64];
    for (int i = 0; i < 64; i++)
        v[i] = rank * 64 + i;
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));
    MPI_OK(MPI_Put(v, 64, MPI_INT, right, MPI_Aint_add(addrs[right], 8 * sizeof(int)), 64, MPI_INT, win));
    MPI_OK(MPI_Win_unlock(right, win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
    MPI_OK(MPI_Win_sync(win));
    for (int i = 0; i < 64; i++)
        CHECK(mem[8 + i] == left * 64 + i, "dynamic put: mem[%d]=%d", 8 + i, mem[8 + i]);
    MPI_OK(MPI_Win_unlock(rank, win));
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, left, 0, win));
    MPI_OK(MPI_Get(v, 64, MPI_INT, left, MPI_Aint_add(addrs[left], 8 * sizeof(int)), 64, MPI_INT, win));
    MPI_OK(MPI_Win_unlock(left, win));
    int ll = (left + size - 1) % size;
    for (int i = 0; i < 64; i++)
        CHECK(v[i] == ll * 64 + i, "dynamic get: v[%d]=%d", i, v[i]);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Win_detach(win, mem));
    MPI_OK(MPI_Win_free(&win));
    free(mem);
    free(addrs);
    MPI_Finalize();
    return 0;
}
