/* oxmpi-test: ranks=2,4,8,12 */
/* Stress: every rank sends a reproducible pseudo-random number of messages with random
   sizes (0..256 KiB), tags and destinations (including itself). Receivers use
   MPI_ANY_SOURCE/MPI_ANY_TAG and verify a checksum embedded in each message. After its
   data each rank sends every rank a DONE message carrying the number of messages it sent
   there (non-overtaking guarantees it arrives last); totals are then checked at rank 0.
   Only point-to-point and MPI_Barrier are used. */
#include "oxtest.h"

#define MAXBYTES (256 * 1024)
#define DONE_TAG 30000
#define HDR 4 /* ints: source, seq, length, checksum */

static uint32_t fnv(const unsigned char *p, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 16777619u;
    return h;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));

    uint64_t seed = 0x9E3779B97F4A7C15ULL ^ (uint64_t)(rank + 1) * 0x100000001B3ULL;
    for (int i = 0; i < 4; i++)
        oxt_rand(&seed);
    int nmsg = 20 + (int)(oxt_rand(&seed) % 80);

    MPI_Request *req = oxt_malloc(sizeof(MPI_Request) * (size_t)(nmsg + size));
    unsigned char **bufs = oxt_malloc(sizeof(unsigned char *) * (size_t)nmsg);
    int *sent_to = calloc((size_t)size, sizeof(int));
    int (*done_msg)[2] = oxt_malloc(sizeof(int[2]) * (size_t)size);
    long long bytes_sent = 0;

    for (int m = 0; m < nmsg; m++) {
        int dest = (int)(oxt_rand(&seed) % (uint64_t)size);
        int tag = (int)(oxt_rand(&seed) % 1000);
        uint64_t r = oxt_rand(&seed);
        /* mostly small, some large */
        int len = (r % 4 == 0) ? (int)(oxt_rand(&seed) % (MAXBYTES + 1)) : (int)(oxt_rand(&seed) % 2048);
        if (len < HDR * (int)sizeof(int))
            len = HDR * (int)sizeof(int);
        unsigned char *b = oxt_malloc((size_t)len);
        int *h = (int *)b;
        for (int j = HDR * (int)sizeof(int); j < len; j++)
            b[j] = (unsigned char)(oxt_rand(&seed) >> 56);
        h[0] = rank;
        h[1] = m;
        h[2] = len;
        h[3] = (int)fnv(b + HDR * sizeof(int), (size_t)len - HDR * sizeof(int));
        bufs[m] = b;
        sent_to[dest]++;
        bytes_sent += len;
        MPI_OK(MPI_Isend(b, len, MPI_BYTE, dest, tag, MPI_COMM_WORLD, &req[m]));
    }
    for (int d = 0; d < size; d++) {
        done_msg[d][0] = rank;
        done_msg[d][1] = sent_to[d];
        MPI_OK(MPI_Isend(done_msg[d], 2, MPI_INT, d, DONE_TAG, MPI_COMM_WORLD, &req[nmsg + d]));
    }

    /* receive until DONE from everybody */
    unsigned char *rb = oxt_malloc(MAXBYTES);
    int *got_from = calloc((size_t)size, sizeof(int));
    int *expect_from = oxt_malloc(sizeof(int) * (size_t)size);
    int *last_seq = oxt_malloc(sizeof(int) * (size_t)size);
    char *done = calloc((size_t)size, 1);
    for (int s = 0; s < size; s++)
        last_seq[s] = -1;
    int ndone = 0, nrecv = 0;
    long long bytes_recv = 0;
    while (ndone < size) {
        MPI_Status st;
        int n;
        MPI_OK(MPI_Recv(rb, MAXBYTES, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        MPI_OK(MPI_Get_count(&st, MPI_BYTE, &n));
        int src = st.MPI_SOURCE;
        CHECK(src >= 0 && src < size, "source %d", src);
        CHECK(!done[src], "message from %d after its DONE (overtaking)", src);
        if (st.MPI_TAG == DONE_TAG) {
            int *dm = (int *)rb;
            CHECK(n == 2 * (int)sizeof(int) && dm[0] == src, "bad DONE message from %d", src);
            expect_from[src] = dm[1];
            done[src] = 1;
            ndone++;
            continue;
        }
        int *h = (int *)rb;
        CHECK(n >= HDR * (int)sizeof(int), "message of %d bytes from %d is too short", n, src);
        CHECK(h[0] == src, "header source %d, status source %d", h[0], src);
        CHECK(h[2] == n, "header length %d, received %d bytes", h[2], n);
        CHECK(h[1] > last_seq[src], "from %d: seq %d after %d (overtaking)", src, h[1], last_seq[src]);
        last_seq[src] = h[1];
        uint32_t c = fnv(rb + HDR * sizeof(int), (size_t)n - HDR * sizeof(int));
        CHECK((int)c == h[3], "checksum mismatch on message %d from %d (%d bytes, tag %d)", h[1], src, n, st.MPI_TAG);
        got_from[src]++;
        nrecv++;
        bytes_recv += n;
    }
    for (int s = 0; s < size; s++)
        CHECK(got_from[s] == expect_from[s], "got %d messages from %d, it sent %d", got_from[s], s, expect_from[s]);
    MPI_OK(MPI_Waitall(nmsg + size, req, MPI_STATUSES_IGNORE));

    /* final totals at rank 0, after a barrier: a rank that finished early must not send its totals
       while rank 0 still receives with MPI_ANY_TAG (that would be a legitimate later message, not
       overtaking) */
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    long long mine[4] = {nmsg, nrecv, bytes_sent, bytes_recv};
    if (rank == 0) {
        long long tot[4] = {0, 0, 0, 0};
        for (int s = 0; s < size; s++) {
            long long in[4];
            if (s == 0)
                memcpy(in, mine, sizeof in);
            else
                MPI_OK(MPI_Recv(in, 4, MPI_LONG_LONG, s, DONE_TAG + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            for (int k = 0; k < 4; k++)
                tot[k] += in[k];
        }
        CHECK(tot[0] == tot[1], "total sent %lld messages, received %lld", tot[0], tot[1]);
        CHECK(tot[2] == tot[3], "total sent %lld bytes, received %lld", tot[2], tot[3]);
    } else {
        MPI_OK(MPI_Send(mine, 4, MPI_LONG_LONG, 0, DONE_TAG + 1, MPI_COMM_WORLD));
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    for (int m = 0; m < nmsg; m++)
        free(bufs[m]);
    free(bufs);
    free(req);
    free(sent_to);
    free(done_msg);
    free(rb);
    free(got_from);
    free(expect_from);
    free(last_seq);
    free(done);
    MPI_OK(MPI_Finalize());
    return 0;
}
