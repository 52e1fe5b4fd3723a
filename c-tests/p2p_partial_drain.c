/* oxmpi-test: ranks=2,3,5,9 timeout=120 */
/* Full rings and partial drains: every rank posts a window of small MPI_Isend (0 to 1000 bytes,
   five tags) to every other rank, more than a channel holds, so senders queue and wait for
   room; receivers then post their MPI_Irecv one at a time per source (an MPI_Irecv drains its
   source's channel only up to its match), in message order in even rounds and tag by tag in
   odd ones (the other tags' messages go unexpected first), and now and then sleep between two
   posts, longer than a spinning waiter lingers, so the blocked senders go to sleep on a ring
   that was drained only in part. Checks every byte; a lost wake-up shows as a hang. 9 ranks
   take the receivers' announcement-mask path (oxmpi's inbox). */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include "oxtest.h"
#include <time.h>

#define W 96
#define ROUNDS 12
#define NTAGS 5

static const int sizes[] = {0, 1, 8, 24, 25, 100, 1000};
#define NSIZES 7

static int msize(int k) { return sizes[k % NSIZES]; }
static unsigned char byte(int from, int to, int round, int k, int i) { return (unsigned char)(from * 31 + to * 7 + round * 5 + k * 3 + i); }

static void nap(int ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
    int rank, n;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &n));
    unsigned char *sbuf = malloc((size_t)n * W * 1000), *rbuf = malloc((size_t)W * 1000);
    MPI_Request *sreq = malloc(sizeof(MPI_Request) * (size_t)n * W), rreq[W];
    CHECK(sbuf && rbuf && sreq, "out of memory");
    int order[W];
    for (int round = 0; round < ROUNDS; round++) {
        int ns = 0;
        for (int d = 1; d < n; d++) {
            int to = (rank + d) % n;
            for (int k = 0; k < W; k++) {
                unsigned char *p = sbuf + ((size_t)to * W + k) * 1000;
                for (int i = 0; i < msize(k); i++)
                    p[i] = byte(rank, to, round, k, i);
                MPI_OK(MPI_Isend(p, msize(k), MPI_BYTE, to, k % NTAGS, MPI_COMM_WORLD, &sreq[ns++]));
            }
        }
        /* Message order, or tag by tag (within a tag, messages keep their order). */
        int m = 0;
        if (round % 2 == 0) {
            for (int k = 0; k < W; k++)
                order[m++] = k;
        } else {
            for (int t = NTAGS - 1; t >= 0; t--)
                for (int k = t; k < W; k += NTAGS)
                    order[m++] = k;
        }
        for (int d = 1; d < n; d++) {
            int from = (rank - d + n) % n;
            for (int j = 0; j < W; j++) {
                int k = order[j];
                memset(rbuf + (size_t)k * 1000, 0xee, 1000);
                MPI_OK(MPI_Irecv(rbuf + (size_t)k * 1000, 1000, MPI_BYTE, from, k % NTAGS, MPI_COMM_WORLD, &rreq[k]));
                /* In some rounds, a rank goes quiet now and then (past the 4 ms linger). */
                if ((round + rank) % 4 == 1 && j % 29 == 7)
                    nap(6);
            }
            MPI_Status st[W];
            MPI_OK(MPI_Waitall(W, rreq, st));
            for (int k = 0; k < W; k++) {
                int count = -1;
                MPI_OK(MPI_Get_count(&st[k], MPI_BYTE, &count));
                CHECK(st[k].MPI_SOURCE == from && st[k].MPI_TAG == k % NTAGS && count == msize(k),
                      "round %d: message %d from %d came as source %d tag %d with %d bytes (expected tag %d, %d bytes)",
                      round, k, from, st[k].MPI_SOURCE, st[k].MPI_TAG, count, k % NTAGS, msize(k));
                const unsigned char *p = rbuf + (size_t)k * 1000;
                for (int i = 0; i < count; i++)
                    CHECK(p[i] == byte(from, rank, round, k, i), "round %d: message %d from %d: byte %d is %d, expected %d", round, k,
                          from, i, p[i], byte(from, rank, round, k, i));
            }
        }
        MPI_OK(MPI_Waitall(ns, sreq, MPI_STATUSES_IGNORE));
    }
    free(sbuf);
    free(rbuf);
    free(sreq);
    MPI_OK(MPI_Finalize());
    if (rank == 0)
        printf("p2p_partial_drain: %d rounds of %d messages per pair passed\n", ROUNDS, W);
    return 0;
}
