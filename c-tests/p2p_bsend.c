/* oxmpi-test: ranks=2,4,8 */
/* MPI_Bsend with MPI_Buffer_attach/detach: buffer sized with MPI_BSEND_OVERHEAD, several
   outstanding buffered sends before the receiver posts anything, detach blocks until
   the buffered messages are delivered (buffer is scribbled after detach). */
#include "oxtest.h"

static const int sizes[] = {0, 8, 1000, 8192, 100000, 3, 65536, 1 << 20};
#define NS ((int)(sizeof sizes / sizeof sizes[0]))

int main(int argc, char **argv)
{
    int rank, size;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int peer = rank ^ 1;
    if (peer < size) {
        for (int round = 0; round < 3; round++) {
            if ((rank & 1) == 0) {
                /* sender */
                int bsize = 0;
                for (int i = 0; i < NS; i++) {
                    int ps = 0;
                    MPI_OK(MPI_Pack_size(sizes[i], MPI_BYTE, MPI_COMM_WORLD, &ps));
                    bsize += ps + MPI_BSEND_OVERHEAD;
                }
                bsize += 64; /* slack for alignment */
                char *bbuf = oxt_malloc((size_t)bsize);
                MPI_OK(MPI_Buffer_attach(bbuf, bsize));
                for (int i = 0; i < NS; i++) {
                    unsigned char *m = oxt_malloc((size_t)sizes[i]);
                    oxt_fill(m, (size_t)sizes[i], (unsigned)(round * 50 + i));
                    MPI_OK(MPI_Bsend(m, sizes[i], MPI_BYTE, peer, i, MPI_COMM_WORLD));
                    memset(m, 0xEE, (size_t)sizes[i]); /* Bsend copied it */
                    free(m);
                }
                int go = round;
                MPI_OK(MPI_Send(&go, 1, MPI_INT, peer, 1000, MPI_COMM_WORLD));
                void *addr = NULL;
                int dsize = -1;
                MPI_OK(MPI_Buffer_detach(&addr, &dsize));
                CHECK(addr == bbuf, "detach returned %p, attached %p", addr, (void *)bbuf);
                CHECK(dsize == bsize, "detach returned size %d, attached %d", dsize, bsize);
                memset(bbuf, 0xDD, (size_t)bsize);
                free(bbuf);
                int ack = -1;
                MPI_OK(MPI_Recv(&ack, 1, MPI_INT, peer, 1001, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                CHECK(ack == round, "ack %d", ack);
            } else {
                /* receiver: only starts receiving the data after the "go" message,
                   which the sender sends after all its Bsends returned */
                int go = -1;
                MPI_OK(MPI_Recv(&go, 1, MPI_INT, peer, 1000, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                CHECK(go == round, "go %d", go);
                unsigned char *r = oxt_malloc(1 << 20);
                for (int i = NS - 1; i >= 0; i--) { /* reverse order: tags differ */
                    MPI_Status st;
                    MPI_OK(MPI_Recv(r, 1 << 20, MPI_BYTE, peer, i, MPI_COMM_WORLD, &st));
                    CHECK_STATUS(st, peer, i, MPI_BYTE, sizes[i]);
                    long bad = oxt_verify(r, (size_t)sizes[i], (unsigned)(round * 50 + i));
                    CHECK(bad < 0, "round %d size %d: byte %ld wrong", round, sizes[i], bad);
                }
                free(r);
                MPI_OK(MPI_Send(&go, 1, MPI_INT, peer, 1001, MPI_COMM_WORLD));
            }
        }
        /* Ibsend + wait, then detach */
        if ((rank & 1) == 0) {
            int bsize = 10 * (100 * (int)sizeof(int) + MPI_BSEND_OVERHEAD);
            char *bbuf = oxt_malloc((size_t)bsize);
            MPI_OK(MPI_Buffer_attach(bbuf, bsize));
            int data[10][100];
            MPI_Request req[10];
            for (int k = 0; k < 10; k++) {
                for (int j = 0; j < 100; j++)
                    data[k][j] = k * 1000 + j;
                MPI_OK(MPI_Ibsend(data[k], 100, MPI_INT, peer, 5, MPI_COMM_WORLD, &req[k]));
            }
            MPI_OK(MPI_Waitall(10, req, MPI_STATUSES_IGNORE));
            void *addr;
            int dsize;
            MPI_OK(MPI_Buffer_detach(&addr, &dsize));
            CHECK(dsize == bsize, "detach size %d", dsize);
            free(bbuf);
        } else {
            int data[100];
            for (int k = 0; k < 10; k++) {
                MPI_OK(MPI_Recv(data, 100, MPI_INT, peer, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                for (int j = 0; j < 100; j++)
                    CHECK(data[j] == k * 1000 + j, "Ibsend message %d element %d = %d", k, j, data[j]);
            }
        }
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Finalize());
    return 0;
}
