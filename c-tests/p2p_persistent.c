/* oxmpi-test: ranks=2,4,8 */
/* Persistent requests: MPI_Send_init, MPI_Bsend_init, MPI_Ssend_init, MPI_Rsend_init and
   MPI_Recv_init, started with MPI_Start/MPI_Startall and reused several times; an
   inactive persistent request completes immediately with an empty status. */
#include "oxtest.h"

#define ITERS 6
#define NK 4 /* send kinds */
static const int msz[NK] = {100, 70000, 8, 300000}; /* bytes per kind */
static const char *kname[NK] = {"Send_init", "Bsend_init", "Ssend_init", "Rsend_init"};

int main(int argc, char **argv)
{
    int rank, size;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int peer = rank ^ 1;
    int active = peer < size, sender = (rank & 1) == 0;
    unsigned char *buf[NK];
    MPI_Request req[NK];
    char *bbuf = NULL;
    int bsize = msz[1] + MPI_BSEND_OVERHEAD + 64;

    for (int k = 0; k < NK; k++)
        buf[k] = oxt_malloc((size_t)msz[k]);
    if (active) {
        if (sender) {
            bbuf = oxt_malloc((size_t)bsize);
            MPI_OK(MPI_Buffer_attach(bbuf, bsize));
            MPI_OK(MPI_Send_init(buf[0], msz[0], MPI_BYTE, peer, 0, MPI_COMM_WORLD, &req[0]));
            MPI_OK(MPI_Bsend_init(buf[1], msz[1], MPI_BYTE, peer, 1, MPI_COMM_WORLD, &req[1]));
            MPI_OK(MPI_Ssend_init(buf[2], msz[2], MPI_BYTE, peer, 2, MPI_COMM_WORLD, &req[2]));
            MPI_OK(MPI_Rsend_init(buf[3], msz[3], MPI_BYTE, peer, 3, MPI_COMM_WORLD, &req[3]));
        } else {
            for (int k = 0; k < NK; k++)
                MPI_OK(MPI_Recv_init(buf[k], msz[k], MPI_BYTE, peer, k, MPI_COMM_WORLD, &req[k]));
        }
        for (int k = 0; k < NK; k++)
            CHECK(req[k] != MPI_REQUEST_NULL, "%s returned MPI_REQUEST_NULL", kname[k]);
    }

    for (int it = 0; it < ITERS; it++) {
        if (active && !sender) {
            for (int k = 0; k < NK; k++)
                memset(buf[k], 0, (size_t)msz[k]);
            if (it % 2)
                MPI_OK(MPI_Startall(NK, req));
            else
                for (int k = 0; k < NK; k++)
                    MPI_OK(MPI_Start(&req[k]));
        }
        /* the receives (incl. the one for Rsend_init) are posted before this barrier */
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        if (active && sender) {
            for (int k = 0; k < NK; k++)
                oxt_fill(buf[k], (size_t)msz[k], (unsigned)(it * 10 + k));
            if (it % 2 == 0)
                MPI_OK(MPI_Startall(NK, req));
            else
                for (int k = NK - 1; k >= 0; k--)
                    MPI_OK(MPI_Start(&req[k]));
        }
        if (active) {
            MPI_Status st[NK];
            MPI_OK(MPI_Waitall(NK, req, st));
            for (int k = 0; k < NK; k++)
                CHECK(req[k] != MPI_REQUEST_NULL, "iteration %d: Waitall freed persistent request %s", it,
                      kname[k]);
            if (!sender) {
                for (int k = 0; k < NK; k++) {
                    CHECK_STATUS(st[k], peer, k, MPI_BYTE, msz[k]);
                    long bad = oxt_verify(buf[k], (size_t)msz[k], (unsigned)(it * 10 + k));
                    CHECK(bad < 0, "iteration %d %s: byte %ld wrong", it, kname[k], bad);
                }
            }
            /* inactive persistent request: Wait returns at once with an empty status,
               Test gives flag = true */
            MPI_Status est;
            int flag = 0;
            MPI_OK(MPI_Wait(&req[0], &est));
            CHECK(req[0] != MPI_REQUEST_NULL, "Wait on an inactive persistent request freed it");
            if (!sender)
                CHECK_STATUS(est, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_BYTE, 0);
            MPI_OK(MPI_Test(&req[1], &flag, MPI_STATUS_IGNORE));
            CHECK(flag, "Test on an inactive persistent request gave flag=0");
        }
        /* the sender must not overwrite its buffers before the next round; Waitall did that */
    }
    if (active) {
        for (int k = 0; k < NK; k++) {
            MPI_OK(MPI_Request_free(&req[k]));
            CHECK(req[k] == MPI_REQUEST_NULL, "Request_free did not set MPI_REQUEST_NULL");
        }
        if (sender) {
            void *a;
            int s;
            MPI_OK(MPI_Buffer_detach(&a, &s));
            free(bbuf);
        }
    }
    for (int k = 0; k < NK; k++)
        free(buf[k]);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Finalize());
    return 0;
}
