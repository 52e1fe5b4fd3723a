/* oxmpi-test: ranks=2,4,8,12 */
/* Non-overtaking: 1000 messages with the same tag arrive in order (mixed Send/Isend,
   specific and ANY_SOURCE receives); interleaved small and large (1 MiB) messages from
   one sender arrive in order. */
#include "oxtest.h"

#define N1 1000
#define N2 12
#define BIG (1 << 20)

static int is_big(int k) { return k % 3 == 1 || k == N2 - 1; }

int main(int argc, char **argv)
{
    int rank, size;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int peer = rank ^ 1;
    if (peer < size) {
        if ((rank & 1) == 0) {
            MPI_Request *req = oxt_malloc(sizeof(MPI_Request) * N1);
            int *vals = oxt_malloc(sizeof(int) * N1);
            for (int i = 0; i < N1; i++) {
                vals[i] = i;
                req[i] = MPI_REQUEST_NULL;
                if (i % 4 == 3)
                    MPI_OK(MPI_Send(&vals[i], 1, MPI_INT, peer, 7, MPI_COMM_WORLD));
                else
                    MPI_OK(MPI_Isend(&vals[i], 1, MPI_INT, peer, 7, MPI_COMM_WORLD, &req[i]));
            }
            MPI_OK(MPI_Waitall(N1, req, MPI_STATUSES_IGNORE));
            free(req);
            free(vals);

            /* interleaved small/large, all nonblocking, same tag */
            unsigned char *bufs[N2];
            MPI_Request r2[N2];
            for (int k = 0; k < N2; k++) {
                int n = is_big(k) ? BIG : 16;
                bufs[k] = oxt_malloc((size_t)n);
                oxt_fill(bufs[k], (size_t)n, (unsigned)k);
                memcpy(bufs[k], &k, sizeof k); /* sequence number in the first bytes */
                MPI_OK(MPI_Isend(bufs[k], n, MPI_BYTE, peer, 8, MPI_COMM_WORLD, &r2[k]));
            }
            MPI_OK(MPI_Waitall(N2, r2, MPI_STATUSES_IGNORE));
            for (int k = 0; k < N2; k++)
                free(bufs[k]);
        } else {
            for (int i = 0; i < N1; i++) {
                int v = -1;
                MPI_Status st;
                MPI_OK(MPI_Recv(&v, 1, MPI_INT, (i % 2) ? MPI_ANY_SOURCE : peer, (i % 3) ? 7 : MPI_ANY_TAG,
                                MPI_COMM_WORLD, &st));
                CHECK(v == i, "message %d arrived as number %d (overtaking)", v, i);
                CHECK(st.MPI_SOURCE == peer, "source %d", st.MPI_SOURCE);
            }
            unsigned char *b = oxt_malloc(BIG);
            for (int k = 0; k < N2; k++) {
                MPI_Status st;
                int n = -1, seq = -1;
                /* post-receive with a slow start for some messages, so that both
                   expected and unexpected paths are exercised */
                if (k == 4) {
                    double t0 = MPI_Wtime();
                    while (MPI_Wtime() - t0 < 0.02)
                        ;
                }
                MPI_OK(MPI_Recv(b, BIG, MPI_BYTE, peer, 8, MPI_COMM_WORLD, &st));
                MPI_OK(MPI_Get_count(&st, MPI_BYTE, &n));
                memcpy(&seq, b, sizeof seq);
                CHECK(seq == k, "interleaved: message %d arrived as number %d", seq, k);
                CHECK(n == (is_big(k) ? BIG : 16), "interleaved message %d: %d bytes", k, n);
                /* the rest of the payload (after the sequence number) is the fill pattern */
                for (int j = (int)sizeof(int); j < n; j += 4099)
                    CHECK(b[j] == oxt_pat((unsigned)k, (size_t)j), "interleaved message %d byte %d wrong", k, j);
            }
            free(b);
        }
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Finalize());
    return 0;
}
