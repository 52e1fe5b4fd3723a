/* oxmpi-test: ranks=1,2,3,4,8 timeout=60 */
/* MPI_Put/MPI_Get + MPI_Win_flush inside MPI_Win_lock_all, the OSU latency pattern (oxmpi runs
   contiguous predefined data there as one copy, src/ffi/rma/fast.rs): every predefined type and
   count lands where it should, on allocated and user-memory windows; a window freed and another
   created in its place (the same handle, possibly) is the one written; derived and pair types
   and mismatched datatypes still go right; and the errors the copy must not hide (range, negative
   displacement, rank, after MPI_Win_unlock_all) are still reported. */
#include "oxtest.h"
#include <string.h>

#define N 4096 /* bytes of window per rank */

static int rank, size;

/* Puts `n` elements of `dt` (`esz` bytes each) from a pattern to the right neighbour at
   displacement `disp` (bytes; unit 1), flushes, reads them back from the left neighbour's
   window after a barrier, and gets them from the right neighbour. */
static void ring(MPI_Win win, unsigned char *mem, MPI_Datatype dt, int n, int esz, int disp, unsigned seed)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    unsigned char src[N], back[N];
    size_t bytes = (size_t)n * esz;
    oxt_fill(src, bytes, seed + rank);
    MPI_OK(MPI_Put(src, n, dt, right, disp, n, dt, win));
    MPI_OK(MPI_Win_flush(right, win));
    MPI_OK(MPI_Win_sync(win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Win_sync(win));
    long bad = oxt_verify(mem + disp, bytes, seed + left);
    CHECK(bad < 0, "rank %d: put of %d elements of size %d at %d: byte %ld wrong", rank, n, esz, disp, bad);
    memset(back, 0, bytes);
    MPI_OK(MPI_Get(back, n, dt, right, disp, n, dt, win));
    MPI_OK(MPI_Win_flush_all(win));
    bad = oxt_verify(back, bytes, seed + rank);
    CHECK(bad < 0, "rank %d: get of %d elements of size %d at %d: byte %ld wrong", rank, n, esz, disp, bad);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

static void all_types(MPI_Win win, unsigned char *mem, unsigned seed)
{
    struct {
        MPI_Datatype dt;
        int esz;
    } types[] = {{MPI_BYTE, 1}, {MPI_CHAR, 1}, {MPI_SHORT, 2}, {MPI_INT, 4}, {MPI_FLOAT, 4}, {MPI_LONG, 8}, {MPI_DOUBLE, 8}, {MPI_INT64_T, 8}, {MPI_LONG_DOUBLE, 16}};
    int counts[] = {1, 2, 7, 64};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
        for (int c = 0; c < 4; c++)
            for (int disp = 0; disp <= 24; disp += 8)
                ring(win, mem, types[t].dt, counts[c], types[t].esz, disp, seed + (unsigned)(t * 16 + c * 4 + disp));
}

/* The paths around the copy: derived, pair and mismatched types give the same results. */
static void other_types(MPI_Win win, unsigned char *mem)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Datatype three;
    MPI_OK(MPI_Type_contiguous(3, MPI_INT, &three));
    MPI_OK(MPI_Type_commit(&three));
    int src[6] = {rank, rank + 1, rank + 2, rank + 3, rank + 4, rank + 5};
    /* 2 x (3 ints) as derived, 6 ints as origin: same signature. */
    MPI_OK(MPI_Put(src, 6, MPI_INT, right, 64, 2, three, win));
    MPI_OK(MPI_Win_flush(right, win));
    /* A pair type, count 2: padded elements (not one copy). */
    struct {
        double d;
        int i;
    } pairs[2] = {{rank + 0.5, rank}, {rank + 1.5, -rank}}, got[2];
    MPI_OK(MPI_Put(pairs, 2, MPI_DOUBLE_INT, right, 128, 2, MPI_DOUBLE_INT, win));
    MPI_OK(MPI_Win_flush(right, win));
    MPI_OK(MPI_Win_sync(win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Win_sync(win));
    int v[6];
    memcpy(v, mem + 64, sizeof v);
    for (int i = 0; i < 6; i++)
        CHECK(v[i] == left + i, "rank %d: derived put: element %d is %d, expected %d", rank, i, v[i], left + i);
    memset(got, 0, sizeof got);
    MPI_OK(MPI_Get(got, 2, MPI_DOUBLE_INT, right, 128, 2, MPI_DOUBLE_INT, win));
    MPI_OK(MPI_Win_flush(right, win));
    CHECK(got[0].d == rank + 0.5 && got[0].i == rank && got[1].d == rank + 1.5 && got[1].i == -rank, "rank %d: pair get returned {%g,%d},{%g,%d}", rank, got[0].d, got[0].i, got[1].d, got[1].i);
    /* Origin MPI_FLOAT, target MPI_INT: the same size, so the bytes move unchanged. */
    float f = 1.25f;
    int asint = 0;
    MPI_OK(MPI_Put(&f, 1, MPI_FLOAT, rank, 256, 1, MPI_INT, win));
    MPI_OK(MPI_Win_flush(rank, win));
    MPI_OK(MPI_Get(&asint, 1, MPI_INT, rank, 256, 1, MPI_INT, win));
    MPI_OK(MPI_Win_flush(rank, win));
    CHECK(memcmp(&asint, &f, 4) == 0, "rank %d: float put as int read back differently", rank);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Type_free(&three));
}

static void errors(MPI_Win win)
{
    int x = 7;
    int right = (rank + 1) % size;
    CHECK_CLASS(MPI_Put(&x, 1, MPI_INT, right, N, 1, MPI_INT, win), MPI_ERR_RMA_RANGE);
    CHECK_CLASS(MPI_Get(&x, 2, MPI_INT, right, N - 4, 2, MPI_INT, win), MPI_ERR_RMA_RANGE);
    CHECK_CLASS(MPI_Put(&x, 1, MPI_INT, right, -4, 1, MPI_INT, win), MPI_ERR_DISP);
    CHECK_CLASS(MPI_Put(&x, 1, MPI_INT, size, 0, 1, MPI_INT, win), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Put(&x, 1, MPI_INT, right, 0, 2, MPI_INT, win), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Put(NULL, 1, MPI_INT, right, 0, 1, MPI_INT, win), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Win_flush(size, win), MPI_ERR_RANK);
    MPI_OK(MPI_Put(&x, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, win));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    unsigned char *user = oxt_malloc(N);
    for (int round = 0; round < 6; round++) {
        /* Alternate the flavors, so a freed window's handle is reused by another kind. */
        MPI_Win win;
        unsigned char *mem;
        if (round % 2 == 0) {
            MPI_OK(MPI_Win_allocate(N, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
        } else {
            mem = user;
            MPI_OK(MPI_Win_create(user, N, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        }
        memset(mem, 0, N);
        MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        MPI_OK(MPI_Win_lock_all(0, win));
        if (round < 2)
            all_types(win, mem, (unsigned)round * 1000);
        else
            ring(win, mem, MPI_INT, 16, 4, 32, (unsigned)round * 1000);
        other_types(win, mem);
        errors(win);
        MPI_OK(MPI_Win_unlock_all(win));
        int x = 1;
        CHECK_CLASS(MPI_Put(&x, 1, MPI_INT, 0, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
        CHECK_CLASS(MPI_Get(&x, 1, MPI_INT, 0, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
        CHECK_CLASS(MPI_Win_flush(0, win), MPI_ERR_RMA_SYNC);
        MPI_OK(MPI_Win_free(&win));
    }
    free(user);
    MPI_Finalize();
    if (rank == 0)
        printf("rma_lock_all_put_get: ok\n");
    return 0;
}
