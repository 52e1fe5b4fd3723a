/* oxmpi-test: ranks=2,3,4 timeout=120 */
/* Point-to-point with non-contiguous derived types on one or both sides, between rank pairs
   (2k, 2k+1): vector, indexed, struct, resized and subarray types (all with a signature of n ints,
   so any two can be paired) sent into each other and into/from contiguous ints, below and above the
   eager size and above 64 KiB, blocking and nonblocking; probe then typed receive, matched probe,
   MPI_ANY_SOURCE, truncation (MPI_ERR_TRUNCATE), persistent typed send/receive started 3 times,
   MPI_Sendrecv_replace with a vector. Every byte of the receive buffer is checked, the gaps too:
   the expected image is built with MPI_Pack/MPI_Unpack into a buffer with the same fill. */
#include "oxtest.h"
#include <string.h>

#define FILL 0xEE

typedef struct {
    const char *name;
    MPI_Datatype t;
    int ints; /* ints per element */
    MPI_Aint extent, true_lb, true_extent;
} tdesc;

static tdesc types[7];
static int ntypes;

static void add(const char *name, MPI_Datatype t)
{
    tdesc *d = &types[ntypes++];
    int size;
    MPI_Aint lb;
    MPI_OK(MPI_Type_commit(&t));
    d->name = name;
    d->t = t;
    MPI_OK(MPI_Type_size(t, &size));
    d->ints = size / (int)sizeof(int);
    MPI_OK(MPI_Type_get_extent(t, &lb, &d->extent));
    MPI_OK(MPI_Type_get_true_extent(t, &d->true_lb, &d->true_extent));
    CHECK(lb == 0 && d->true_lb >= 0, "type %s: lb %ld true lb %ld", name, (long)lb, (long)d->true_lb);
}

static void make_types(void)
{
    MPI_Datatype t, inner;
    /* vector: 4 blocks of 3 ints, stride 5: 12 ints */
    MPI_OK(MPI_Type_vector(4, 3, 5, MPI_INT, &t));
    add("vector", t);
    /* indexed: blocks of 1, 2, 3 ints at 0, 3, 7: 6 ints */
    {
        int bl[3] = {1, 2, 3}, dp[3] = {0, 3, 7};
        MPI_OK(MPI_Type_indexed(3, bl, dp, MPI_INT, &t));
        add("indexed", t);
    }
    /* struct: an int at 0 and a contiguous pair of ints at byte 12: 3 ints, extent 20 */
    {
        int bl[2] = {1, 1};
        MPI_Aint dp[2] = {0, 12};
        MPI_Datatype ty[2];
        MPI_OK(MPI_Type_contiguous(2, MPI_INT, &inner));
        ty[0] = MPI_INT;
        ty[1] = inner;
        MPI_OK(MPI_Type_create_struct(2, bl, dp, ty, &t));
        MPI_OK(MPI_Type_free(&inner));
        add("struct", t);
    }
    /* resized: every other int of 3, extent 5 ints: 2 ints */
    MPI_OK(MPI_Type_vector(2, 1, 2, MPI_INT, &inner));
    MPI_OK(MPI_Type_create_resized(inner, 0, 5 * sizeof(int), &t));
    MPI_OK(MPI_Type_free(&inner));
    add("resized", t);
    /* subarray: 3x5 ints at (1, 2) of a 4x8 array: 15 ints */
    {
        int sizes[2] = {4, 8}, sub[2] = {3, 5}, st[2] = {1, 2};
        MPI_OK(MPI_Type_create_subarray(2, sizes, sub, st, MPI_ORDER_C, MPI_INT, &t));
        add("subarray", t);
    }
    types[ntypes].name = "int";
    types[ntypes].t = MPI_INT;
    types[ntypes].ints = 1;
    types[ntypes].extent = sizeof(int);
    types[ntypes].true_lb = 0;
    types[ntypes].true_extent = sizeof(int);
    ntypes++;
}

/* Bytes `count` elements of d span from the buffer address. */
static size_t span(const tdesc *d, int count)
{
    return count == 0 ? 0 : (size_t)((count - 1) * d->extent + d->true_lb + d->true_extent);
}

static void *send_image(const tdesc *d, int count, unsigned seed)
{
    size_t n = span(d, count);
    void *b = oxt_malloc(n);
    oxt_fill(b, n, seed);
    return b;
}

static void *recv_image(const tdesc *d, int count)
{
    size_t n = span(d, count);
    void *b = oxt_malloc(n);
    memset(b, FILL, n);
    return b;
}

/* Checks that `got` (count elements of r) is what receiving `scount` elements of s filled with
   `seed` gives, gaps untouched. */
static void verify(const tdesc *r, int count, const void *got, const tdesc *s, int scount, unsigned seed, const char *what)
{
    void *src = send_image(s, scount, seed), *ref = recv_image(r, count);
    int psize, pos = 0;
    MPI_OK(MPI_Pack_size(scount, s->t, MPI_COMM_WORLD, &psize));
    char *stream = oxt_malloc(psize);
    MPI_OK(MPI_Pack(src, scount, s->t, stream, psize, &pos, MPI_COMM_WORLD));
    int upos = 0;
    MPI_OK(MPI_Unpack(stream, pos, &upos, ref, count, r->t, MPI_COMM_WORLD));
    size_t n = span(r, count);
    for (size_t i = 0; i < n; i++)
        CHECK(((const unsigned char *)got)[i] == ((unsigned char *)ref)[i], "%s: %s x%d -> %s x%d: byte %zu is %d, expected %d", what, s->name, scount,
              r->name, count, i, ((const unsigned char *)got)[i], ((unsigned char *)ref)[i]);
    free(src);
    free(ref);
    free(stream);
}

static void check_count(MPI_Status *st, int ints)
{
    int n;
    MPI_OK(MPI_Get_count(st, MPI_INT, &n));
    CHECK(n == ints, "received %d ints, expected %d", n, ints);
}

int main(int argc, char **argv)
{
    int rank, size, peer;
    /* Total ints per message: below the eager size, above it, and above 64 KiB (multiples of 60,
       which every type's int count divides). */
    const int totals[] = {60, 1500, 6000, 60000};
    const int ntotals = 4;
    MPI_Status st;

    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    make_types();
    peer = rank ^ 1;
    if (peer >= size) {
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        for (int i = 0; i < ntypes - 1; i++)
            MPI_OK(MPI_Type_free(&types[i].t));
        MPI_OK(MPI_Finalize());
        return 0;
    }
    int even = rank % 2 == 0;

    /* Every pair of types, every size, both directions; blocking and nonblocking in turn. */
    int tag = 0;
    for (int k = 0; k < ntotals; k++)
        for (int a = 0; a < ntypes; a++)
            for (int b = 0; b < ntypes; b++) {
                int nonblocking = (a + b + k) % 2;
                for (int dir = 0; dir < 2; dir++, tag++) {
                    int sender = (dir == 0) == even;
                    const tdesc *s = &types[a], *r = &types[b];
                    int sc = totals[k] / s->ints, rc = totals[k] / r->ints;
                    unsigned seed = (unsigned)(tag * 7 + rank / 2);
                    if (sender) {
                        void *buf = send_image(s, sc, seed);
                        if (nonblocking) {
                            MPI_Request q;
                            MPI_OK(MPI_Isend(buf, sc, s->t, peer, tag, MPI_COMM_WORLD, &q));
                            MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
                        } else {
                            MPI_OK(MPI_Send(buf, sc, s->t, peer, tag, MPI_COMM_WORLD));
                        }
                        free(buf);
                    } else {
                        void *buf = recv_image(r, rc);
                        if (nonblocking) {
                            MPI_Request q;
                            MPI_OK(MPI_Irecv(buf, rc, r->t, peer, tag, MPI_COMM_WORLD, &q));
                            MPI_OK(MPI_Wait(&q, &st));
                        } else {
                            MPI_OK(MPI_Recv(buf, rc, r->t, peer, tag, MPI_COMM_WORLD, &st));
                        }
                        check_count(&st, totals[k]);
                        int n = -1;
                        MPI_OK(MPI_Get_count(&st, r->t, &n));
                        CHECK(n == rc, "count %d of %s, expected %d", n, r->name, rc);
                        verify(r, rc, buf, s, sc, (unsigned)(tag * 7 + peer / 2), nonblocking ? "isend/irecv" : "send/recv");
                        free(buf);
                    }
                }
            }

    /* A vector of long blocks (16 KiB, the rendezvous reads them one by one rather than through a
       covering range) into every type whose int count divides it, and back. */
    {
        MPI_Datatype big;
        MPI_OK(MPI_Type_vector(3, 4096, 5000, MPI_INT, &big));
        add("bigvector", big);
        tdesc *bv = &types[--ntypes];
        int total = 2 * bv->ints;
        for (int b = 0; b < ntypes; b++) {
            if (total % types[b].ints != 0)
                continue;
            for (int dir = 0; dir < 2; dir++, tag++) {
                const tdesc *s = dir ? &types[b] : bv, *r = dir ? bv : &types[b];
                int sc = total / s->ints, rc = total / r->ints;
                if (even) {
                    void *buf = send_image(s, sc, (unsigned)tag);
                    MPI_OK(MPI_Send(buf, sc, s->t, peer, tag, MPI_COMM_WORLD));
                    free(buf);
                } else {
                    void *buf = recv_image(r, rc);
                    MPI_OK(MPI_Recv(buf, rc, r->t, peer, tag, MPI_COMM_WORLD, &st));
                    check_count(&st, total);
                    verify(r, rc, buf, s, sc, (unsigned)tag, "long blocks");
                    free(buf);
                }
            }
        }
        MPI_OK(MPI_Type_free(&bv->t));
    }

    const tdesc *vec = &types[0], *idx = &types[1], *sub = &types[4];
    /* Probe, then a typed receive of the probed size; matched probe; any source. */
    for (int k = 0; k < ntotals; k++) {
        int total = totals[k];
        unsigned seed = 1000u + (unsigned)k;
        if (even) {
            void *buf = send_image(vec, total / vec->ints, seed);
            MPI_OK(MPI_Send(buf, total / vec->ints, vec->t, peer, 7, MPI_COMM_WORLD));
            MPI_OK(MPI_Send(buf, total / vec->ints, vec->t, peer, 8, MPI_COMM_WORLD));
            MPI_OK(MPI_Send(buf, total / vec->ints, vec->t, peer, 9, MPI_COMM_WORLD));
            free(buf);
        } else {
            int n;
            MPI_OK(MPI_Probe(peer, 7, MPI_COMM_WORLD, &st));
            MPI_OK(MPI_Get_count(&st, MPI_INT, &n));
            CHECK(n == total, "probed %d ints, expected %d", n, total);
            int rc = n / idx->ints;
            void *got = recv_image(idx, rc);
            MPI_OK(MPI_Recv(got, rc, idx->t, peer, 7, MPI_COMM_WORLD, &st));
            verify(idx, rc, got, vec, total / vec->ints, (unsigned)seed, "probe+recv");
            free(got);

            MPI_Message m;
            MPI_OK(MPI_Mprobe(peer, 8, MPI_COMM_WORLD, &m, &st));
            rc = total / sub->ints;
            got = recv_image(sub, rc);
            MPI_OK(MPI_Mrecv(got, rc, sub->t, &m, &st));
            check_count(&st, total);
            verify(sub, rc, got, vec, total / vec->ints, seed, "mprobe+mrecv");
            free(got);

            rc = total / types[2].ints;
            got = recv_image(&types[2], rc);
            MPI_OK(MPI_Recv(got, rc, types[2].t, MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, &st));
            CHECK(st.MPI_SOURCE == peer, "source %d", st.MPI_SOURCE);
            verify(&types[2], rc, got, vec, total / vec->ints, seed, "any source");
            free(got);
        }
    }

    /* Truncation: a typed receive too small for the message. */
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    for (int k = 0; k < ntotals; k++) {
        int total = totals[k];
        if (even) {
            void *buf = send_image(sub, total / sub->ints, 5);
            MPI_OK(MPI_Send(buf, total / sub->ints, sub->t, peer, 10, MPI_COMM_WORLD));
            free(buf);
        } else {
            int rc = total / vec->ints - 1;
            void *got = recv_image(vec, rc);
            int rc2 = MPI_Recv(got, rc, vec->t, peer, 10, MPI_COMM_WORLD, &st);
            CHECK_CLASS(rc2, MPI_ERR_TRUNCATE);
            free(got);
        }
    }
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));

    /* Persistent typed send and receive, started 3 times with new contents each time. */
    for (int k = 0; k < ntotals; k++) {
        int total = totals[k];
        const tdesc *s = &types[3], *r = vec;
        int sc = total / s->ints, rc = total / r->ints;
        MPI_Request q;
        if (even) {
            void *buf = oxt_malloc(span(s, sc));
            MPI_OK(MPI_Send_init(buf, sc, s->t, peer, 11, MPI_COMM_WORLD, &q));
            for (int it = 0; it < 3; it++) {
                oxt_fill(buf, span(s, sc), 2000u + (unsigned)(k * 3 + it));
                MPI_OK(MPI_Start(&q));
                MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
            }
            MPI_OK(MPI_Request_free(&q));
            free(buf);
        } else {
            void *buf = oxt_malloc(span(r, rc));
            MPI_OK(MPI_Recv_init(buf, rc, r->t, peer, 11, MPI_COMM_WORLD, &q));
            for (int it = 0; it < 3; it++) {
                memset(buf, FILL, span(r, rc));
                MPI_OK(MPI_Start(&q));
                MPI_OK(MPI_Wait(&q, &st));
                check_count(&st, total);
                verify(r, rc, buf, s, sc, 2000u + (unsigned)(k * 3 + it), "persistent");
            }
            MPI_OK(MPI_Request_free(&q));
            free(buf);
        }
    }

    /* MPI_Sendrecv_replace with a vector: each side sends its vector and gets the peer's. */
    for (int k = 0; k < ntotals; k++) {
        int c = totals[k] / vec->ints;
        void *buf = send_image(vec, c, 3000u + (unsigned)rank);
        MPI_OK(MPI_Sendrecv_replace(buf, c, vec->t, peer, 12, peer, 12, MPI_COMM_WORLD, &st));
        check_count(&st, totals[k]);
        /* Gaps keep this rank's own fill; the data is the peer's. */
        void *ref = send_image(vec, c, 3000u + (unsigned)rank);
        void *peer_img = send_image(vec, c, 3000u + (unsigned)peer);
        int psize, pos = 0, upos = 0;
        MPI_OK(MPI_Pack_size(c, vec->t, MPI_COMM_WORLD, &psize));
        char *stream = oxt_malloc(psize);
        MPI_OK(MPI_Pack(peer_img, c, vec->t, stream, psize, &pos, MPI_COMM_WORLD));
        MPI_OK(MPI_Unpack(stream, pos, &upos, ref, c, vec->t, MPI_COMM_WORLD));
        CHECK(memcmp(buf, ref, span(vec, c)) == 0, "sendrecv_replace of %d vectors", c);
        free(buf);
        free(ref);
        free(peer_img);
        free(stream);
    }

    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < ntypes - 1; i++)
        MPI_OK(MPI_Type_free(&types[i].t));
    MPI_OK(MPI_Finalize());
    return 0;
}
