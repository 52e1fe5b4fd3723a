/* oxmpi-test: ranks=2,4 */
/* Receives whose type signature does not match the message (MPI 4.1 sections 3.2.5, 3.3 and
   5.1.11): bytes that are not a whole number of the receive type's elements (MPI_Get_count gives
   MPI_UNDEFINED, MPI_Get_elements the basic elements there are, only the received bytes are
   stored, with derived and non-contiguous receive types too), and messages longer than the
   receive buffer (MPI_ERR_TRUNCATE from every kind of receive: MPI_Recv, MPI_Sendrecv, MPI_Mrecv,
   persistent, MPI_Waitany, MPI_Test; eager and large messages into non-contiguous types; nothing
   stored outside the buffer's typemap, though what the buffer holds is not defined; the sender's
   operation succeeds; communication goes on).
   Even ranks send (all nonblocking), odd ranks receive. */
#include "oxtest.h"

#define BIG (1 << 18) /* ints: 1 MiB, above every eager limit */
#define FILL 0x5a5a5a5a

enum { T_BYTES = 1, T_CONTIG, T_VECTOR, T_HALF, T_TRUNC_VEC, T_TRUNC, T_SENDRECV, T_MRECV, T_PERSIST,
       T_PERSIST_OK, T_WAITANY, T_TEST, T_BIG_VEC, T_BIG_SSEND, T_ZERO, T_REPLACE, T_IMRECV, T_STRUCT,
       T_LAST, NTAGS };

static int *src, *dst;

static void fill_dst(size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = FILL;
}

/* dst[i] for i in [from, to) still holds the fill. */
static void untouched(size_t from, size_t to, const char *what)
{
    for (size_t i = from; i < to; i++)
        CHECK(dst[i] == FILL, "%s: int %zu written (0x%x) outside what was received", what, i, dst[i]);
}

static int count_of(MPI_Status *st, MPI_Datatype t)
{
    int n = -7;
    MPI_OK(MPI_Get_count(st, t, &n));
    return n;
}

static int elements_of(MPI_Status *st, MPI_Datatype t)
{
    int n = -7;
    MPI_OK(MPI_Get_elements(st, t, &n));
    return n;
}

static void sender(int peer)
{
    MPI_Request r[NTAGS];
    int k = 0;
    MPI_OK(MPI_Isend(src, 6, MPI_BYTE, peer, T_BYTES, MPI_COMM_WORLD, &r[k++]));
    MPI_OK(MPI_Isend(src, 3, MPI_INT, peer, T_CONTIG, MPI_COMM_WORLD, &r[k++]));
    MPI_OK(MPI_Isend(src, 3, MPI_INT, peer, T_VECTOR, MPI_COMM_WORLD, &r[k++]));
    MPI_OK(MPI_Isend(src, 6, MPI_BYTE, peer, T_HALF, MPI_COMM_WORLD, &r[k++]));
    MPI_OK(MPI_Isend(src, 5, MPI_INT, peer, T_TRUNC_VEC, MPI_COMM_WORLD, &r[k++]));
    MPI_OK(MPI_Isend(src, 10, MPI_INT, peer, T_TRUNC, MPI_COMM_WORLD, &r[k++]));
    MPI_OK(MPI_Isend(src, 4, MPI_INT, peer, T_SENDRECV, MPI_COMM_WORLD, &r[k++]));
    MPI_OK(MPI_Isend(src, 6, MPI_BYTE, peer, T_MRECV, MPI_COMM_WORLD, &r[k++]));
    MPI_OK(MPI_Isend(src, 4, MPI_INT, peer, T_PERSIST, MPI_COMM_WORLD, &r[k++]));
    MPI_OK(MPI_Isend(src, 2, MPI_INT, peer, T_PERSIST_OK, MPI_COMM_WORLD, &r[k++]));
    MPI_OK(MPI_Isend(src, 3, MPI_INT, peer, T_WAITANY, MPI_COMM_WORLD, &r[k++]));
    MPI_OK(MPI_Isend(src, 3, MPI_INT, peer, T_TEST, MPI_COMM_WORLD, &r[k++]));
    MPI_OK(MPI_Isend(src, BIG, MPI_INT, peer, T_BIG_VEC, MPI_COMM_WORLD, &r[k++]));
    MPI_OK(MPI_Issend(src, BIG, MPI_INT, peer, T_BIG_SSEND, MPI_COMM_WORLD, &r[k++]));
    MPI_OK(MPI_Isend(src, 2, MPI_INT, peer, T_ZERO, MPI_COMM_WORLD, &r[k++]));
    MPI_OK(MPI_Isend(src, 3, MPI_INT, peer, T_REPLACE, MPI_COMM_WORLD, &r[k++]));
    MPI_OK(MPI_Isend(src, 2, MPI_INT, peer, T_IMRECV, MPI_COMM_WORLD, &r[k++]));
    MPI_OK(MPI_Isend(src, 4, MPI_INT, peer, T_STRUCT, MPI_COMM_WORLD, &r[k++]));
    MPI_OK(MPI_Isend(src, 4, MPI_INT, peer, T_LAST, MPI_COMM_WORLD, &r[k++]));
    /* A receiver's truncation is its error, not the sender's. */
    MPI_OK(MPI_Waitall(k, r, MPI_STATUSES_IGNORE));
}

static void receiver(int peer)
{
    MPI_Status st;
    MPI_Datatype contig2, vec, big_vec;
    MPI_Count cx;
    int rc, idx, flag;
    MPI_OK(MPI_Type_contiguous(2, MPI_INT, &contig2));
    MPI_OK(MPI_Type_commit(&contig2));
    /* ints at 0 and 2; extent 3 ints */
    MPI_OK(MPI_Type_vector(2, 1, 2, MPI_INT, &vec));
    MPI_OK(MPI_Type_commit(&vec));
    /* 1000 blocks of 2 ints every 4 ints: 2000 ints over 4000 */
    MPI_OK(MPI_Type_vector(1000, 2, 4, MPI_INT, &big_vec));
    MPI_OK(MPI_Type_commit(&big_vec));

    /* 6 bytes into ints: 1.5 elements; only the 6 bytes are stored. */
    fill_dst(8);
    MPI_OK(MPI_Recv(dst, 4, MPI_INT, peer, T_BYTES, MPI_COMM_WORLD, &st));
    CHECK(count_of(&st, MPI_INT) == MPI_UNDEFINED, "6 bytes as MPI_INT: count %d", count_of(&st, MPI_INT));
    CHECK(elements_of(&st, MPI_INT) == MPI_UNDEFINED, "6 bytes as MPI_INT: elements %d", elements_of(&st, MPI_INT));
    CHECK(count_of(&st, MPI_BYTE) == 6, "6 bytes as MPI_BYTE: count %d", count_of(&st, MPI_BYTE));
    MPI_OK(MPI_Get_elements_x(&st, MPI_INT, &cx));
    CHECK(cx == MPI_UNDEFINED, "6 bytes as MPI_INT: MPI_Get_elements_x %lld", (long long)cx);
    CHECK(memcmp(dst, src, 6) == 0, "6 bytes: data");
    CHECK(((unsigned char *)dst)[6] == 0x5a && ((unsigned char *)dst)[7] == 0x5a, "6 bytes: bytes 6-7 written");
    untouched(2, 8, "6 bytes");

    /* 3 ints into contiguous(2, MPI_INT): 1.5 elements of 2 ints, 3 basic elements. */
    fill_dst(8);
    MPI_OK(MPI_Recv(dst, 2, contig2, peer, T_CONTIG, MPI_COMM_WORLD, &st));
    CHECK(count_of(&st, contig2) == MPI_UNDEFINED, "3 ints as contig(2): count %d", count_of(&st, contig2));
    CHECK(elements_of(&st, contig2) == 3, "3 ints as contig(2): elements %d", elements_of(&st, contig2));
    MPI_OK(MPI_Get_elements_x(&st, contig2, &cx));
    CHECK(cx == 3, "3 ints as contig(2): MPI_Get_elements_x %lld", (long long)cx);
    CHECK(memcmp(dst, src, 12) == 0, "3 ints as contig(2): data");
    untouched(3, 8, "3 ints as contig(2)");

    /* 3 ints into a vector (ints 0, 2 | 3, 5): ints 0, 2, 3 stored, 1 and 4.. untouched. */
    fill_dst(8);
    MPI_OK(MPI_Recv(dst, 2, vec, peer, T_VECTOR, MPI_COMM_WORLD, &st));
    CHECK(count_of(&st, vec) == MPI_UNDEFINED, "3 ints as vector: count %d", count_of(&st, vec));
    CHECK(elements_of(&st, vec) == 3, "3 ints as vector: elements %d", elements_of(&st, vec));
    CHECK(dst[0] == src[0] && dst[2] == src[1] && dst[3] == src[2], "3 ints as vector: data %d %d %d", dst[0], dst[2],
          dst[3]);
    untouched(1, 2, "3 ints as vector");
    untouched(4, 8, "3 ints as vector");

    /* 6 bytes into contiguous(2, MPI_INT): not even whole basic elements. The standard does not
       say what MPI_Get_elements gives then: oxmpi MPI_UNDEFINED (as for a predefined type),
       MPICH 4.0.2 the whole basic elements (1). */
    fill_dst(8);
    MPI_OK(MPI_Recv(dst, 2, contig2, peer, T_HALF, MPI_COMM_WORLD, &st));
    CHECK(count_of(&st, contig2) == MPI_UNDEFINED, "6 bytes as contig(2): count %d", count_of(&st, contig2));
    idx = elements_of(&st, contig2);
    CHECK(idx == MPI_UNDEFINED || idx == 1, "6 bytes as contig(2): elements %d", idx);
    CHECK(memcmp(dst, src, 6) == 0, "6 bytes as contig(2): data");
    untouched(2, 8, "6 bytes as contig(2)");

    /* 5 ints into one vector element (2 ints): truncated. What the buffer then holds is not
       defined (MPICH stores nothing), but nothing is stored outside its typemap. */
    fill_dst(8);
    rc = MPI_Recv(dst, 1, vec, peer, T_TRUNC_VEC, MPI_COMM_WORLD, &st);
    CHECK_CLASS(rc, MPI_ERR_TRUNCATE);
    CHECK(st.MPI_SOURCE == peer && st.MPI_TAG == T_TRUNC_VEC, "truncated vector: status source %d tag %d",
          st.MPI_SOURCE, st.MPI_TAG);
    untouched(1, 2, "truncated vector");
    untouched(3, 8, "truncated vector");

    /* 10 ints into 4: truncated */
    fill_dst(16);
    rc = MPI_Recv(dst, 4, MPI_INT, peer, T_TRUNC, MPI_COMM_WORLD, &st);
    CHECK_CLASS(rc, MPI_ERR_TRUNCATE);
    untouched(4, 16, "truncated ints");

    /* MPI_Sendrecv's receive truncated */
    fill_dst(8);
    rc = MPI_Sendrecv(src, 1, MPI_INT, MPI_PROC_NULL, 0, dst, 2, MPI_INT, peer, T_SENDRECV, MPI_COMM_WORLD, &st);
    CHECK_CLASS(rc, MPI_ERR_TRUNCATE);
    untouched(2, 8, "truncated Sendrecv");

    /* matched probe: its status counts bytes; the matched receive truncates */
    MPI_Message msg;
    MPI_OK(MPI_Mprobe(peer, T_MRECV, MPI_COMM_WORLD, &msg, &st));
    CHECK(count_of(&st, MPI_INT) == MPI_UNDEFINED, "Mprobe of 6 bytes as MPI_INT: count %d", count_of(&st, MPI_INT));
    CHECK(count_of(&st, MPI_SHORT) == 3, "Mprobe of 6 bytes as MPI_SHORT: count %d", count_of(&st, MPI_SHORT));
    fill_dst(8);
    rc = MPI_Mrecv(dst, 1, MPI_INT, &msg, &st);
    CHECK_CLASS(rc, MPI_ERR_TRUNCATE);
    untouched(1, 8, "truncated Mrecv");

    /* persistent receive: truncated once, then fine */
    MPI_Request r;
    MPI_OK(MPI_Recv_init(dst, 2, MPI_INT, peer, MPI_ANY_TAG, MPI_COMM_WORLD, &r));
    fill_dst(8);
    MPI_OK(MPI_Start(&r));
    rc = MPI_Wait(&r, &st);
    CHECK_CLASS(rc, MPI_ERR_TRUNCATE);
    CHECK(r != MPI_REQUEST_NULL && st.MPI_TAG == T_PERSIST, "truncated persistent receive: request or tag %d",
          st.MPI_TAG);
    untouched(2, 8, "truncated persistent receive");
    MPI_OK(MPI_Start(&r));
    MPI_OK(MPI_Wait(&r, &st));
    CHECK(st.MPI_TAG == T_PERSIST_OK && count_of(&st, MPI_INT) == 2, "persistent receive after truncation");
    MPI_OK(MPI_Request_free(&r));

    /* Waitany and Test return the truncation as the call's error */
    fill_dst(8);
    MPI_OK(MPI_Irecv(dst, 1, MPI_INT, MPI_ANY_SOURCE, T_WAITANY, MPI_COMM_WORLD, &r));
    rc = MPI_Waitany(1, &r, &idx, &st);
    CHECK_CLASS(rc, MPI_ERR_TRUNCATE);
    CHECK(idx == 0 && r == MPI_REQUEST_NULL && st.MPI_SOURCE == peer, "truncated Waitany: index %d source %d", idx,
          st.MPI_SOURCE);
    untouched(1, 8, "truncated Waitany");
    MPI_OK(MPI_Irecv(dst, 2, MPI_INT, peer, T_TEST, MPI_COMM_WORLD, &r));
    do {
        rc = MPI_Test(&r, &flag, &st);
    } while (rc == MPI_SUCCESS && !flag);
    CHECK_CLASS(rc, MPI_ERR_TRUNCATE);
    CHECK(r == MPI_REQUEST_NULL, "truncated Test left the request");

    /* 1 MiB into a non-contiguous type of 2000 ints over 4000: truncated, nothing stored in the gaps
       or after it. */
    fill_dst(8192);
    rc = MPI_Recv(dst, 1, big_vec, peer, T_BIG_VEC, MPI_COMM_WORLD, &st);
    CHECK_CLASS(rc, MPI_ERR_TRUNCATE);
    for (int b = 0; b < 1000; b++)
        untouched(4 * b + 2, 4 * b + 4, "large truncated vector");
    untouched(4000, 8192, "large truncated vector");

    /* 1 MiB synchronous send into 1000 ints: truncated, and the sender completes */
    fill_dst(2048);
    rc = MPI_Recv(dst, 1000, MPI_INT, peer, T_BIG_SSEND, MPI_COMM_WORLD, &st);
    CHECK_CLASS(rc, MPI_ERR_TRUNCATE);
    untouched(1000, 2048, "large truncated synchronous message");

    /* a message into a zero-count receive */
    fill_dst(4);
    rc = MPI_Recv(dst, 0, MPI_INT, peer, T_ZERO, MPI_COMM_WORLD, &st);
    CHECK_CLASS(rc, MPI_ERR_TRUNCATE);
    untouched(0, 4, "zero-count receive");

    /* MPI_Sendrecv_replace's receive truncated */
    fill_dst(8);
    rc = MPI_Sendrecv_replace(dst, 2, MPI_INT, MPI_PROC_NULL, 0, peer, T_REPLACE, MPI_COMM_WORLD, &st);
    CHECK_CLASS(rc, MPI_ERR_TRUNCATE);
    untouched(2, 8, "truncated Sendrecv_replace");

    /* MPI_Imrecv truncated, reported by MPI_Wait */
    MPI_OK(MPI_Mprobe(peer, T_IMRECV, MPI_COMM_WORLD, &msg, &st));
    fill_dst(8);
    MPI_OK(MPI_Imrecv(dst, 1, MPI_INT, &msg, &r));
    rc = MPI_Wait(&r, &st);
    CHECK_CLASS(rc, MPI_ERR_TRUNCATE);
    untouched(1, 8, "truncated Imrecv");

    /* 4 ints (16 bytes) into a struct {int; gap; double} (size 12, extent 16): one whole element
       and the int of the next. (Bytes that end inside a basic element MPICH 4.0.2 reports as
       MPI_ERR_TRUNCATE; oxmpi stores them.) */
    MPI_Datatype st_type;
    int bl[2] = {1, 1};
    MPI_Aint disp[2] = {0, 8};
    MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
    MPI_OK(MPI_Type_create_struct(2, bl, disp, types, &st_type));
    MPI_OK(MPI_Type_commit(&st_type));
    fill_dst(12);
    MPI_OK(MPI_Recv(dst, 2, st_type, peer, T_STRUCT, MPI_COMM_WORLD, &st));
    CHECK(count_of(&st, st_type) == MPI_UNDEFINED, "16 bytes as struct: count %d", count_of(&st, st_type));
    CHECK(elements_of(&st, st_type) == 3, "16 bytes as struct: elements %d", elements_of(&st, st_type));
    CHECK(dst[0] == src[0] && memcmp(&dst[2], &src[1], 8) == 0 && dst[4] == src[3], "16 bytes as struct: data");
    untouched(1, 2, "16 bytes as struct");
    untouched(5, 12, "16 bytes as struct");
    MPI_OK(MPI_Type_free(&st_type));

    /* and communication goes on */
    fill_dst(8);
    MPI_OK(MPI_Recv(dst, 8, MPI_INT, peer, T_LAST, MPI_COMM_WORLD, &st));
    CHECK(count_of(&st, MPI_INT) == 4 && memcmp(dst, src, 16) == 0, "message after the mismatches");
    untouched(4, 8, "message after the mismatches");

    MPI_OK(MPI_Type_free(&contig2));
    MPI_OK(MPI_Type_free(&vec));
    MPI_OK(MPI_Type_free(&big_vec));
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    src = oxt_malloc(BIG * sizeof(int));
    dst = oxt_malloc(8192 * sizeof(int));
    for (int i = 0; i < BIG; i++)
        src[i] = 1000 + i;
    int peer = rank ^ 1;
    if (peer < size) {
        if ((rank & 1) == 0)
            sender(peer);
        else
            receiver(peer);
    }
    free(src);
    free(dst);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Finalize());
    return 0;
}
