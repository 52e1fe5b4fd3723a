/* oxmpi-test: ranks=2,4,8,12 */
/* MPI_Isend/MPI_Irecv: many outstanding requests of mixed sizes in both directions,
   receives posted in reverse tag order, completed with MPI_Waitall. */
#include "oxtest.h"

#define NM 24

static int msize(int i) { return (i % 4 == 3) ? (256 << 10) + i : (i * 997) % 20000; }

int main(int argc, char **argv)
{
    int rank, size;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int peer = rank ^ 1;
    if (peer < size) {
        for (int rep = 0; rep < 3; rep++) {
            unsigned char *sb[NM], *rb[NM];
            MPI_Request req[2 * NM];
            MPI_Status st[2 * NM];
            for (int i = 0; i < NM; i++) {
                sb[i] = oxt_malloc((size_t)msize(i));
                rb[i] = oxt_malloc((size_t)msize(i));
                oxt_fill(sb[i], (size_t)msize(i), (unsigned)(rank * 1000 + rep * 100 + i));
            }
            /* even ranks post receives first, odd ranks sends first */
            for (int half = 0; half < 2; half++) {
                if ((half == 0) == ((rank & 1) == 0)) {
                    for (int i = NM - 1; i >= 0; i--)
                        MPI_OK(MPI_Irecv(rb[i], msize(i), MPI_BYTE, peer, i, MPI_COMM_WORLD, &req[i]));
                } else {
                    for (int i = 0; i < NM; i++)
                        MPI_OK(MPI_Isend(sb[i], msize(i), MPI_BYTE, peer, i, MPI_COMM_WORLD, &req[NM + i]));
                }
            }
            MPI_OK(MPI_Waitall(2 * NM, req, st));
            for (int i = 0; i < 2 * NM; i++)
                CHECK(req[i] == MPI_REQUEST_NULL, "request %d not freed by Waitall", i);
            for (int i = 0; i < NM; i++) {
                CHECK_STATUS(st[i], peer, i, MPI_BYTE, msize(i));
                long bad = oxt_verify(rb[i], (size_t)msize(i), (unsigned)(peer * 1000 + rep * 100 + i));
                CHECK(bad < 0, "rep %d message %d (size %d): byte %ld wrong", rep, i, msize(i), bad);
                free(sb[i]);
                free(rb[i]);
            }
        }
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Finalize());
    return 0;
}
