/* oxmpi-test: ranks=1,2 */
/* Large-count (_c) datatype constructors with counts, block lengths, strides and displacements
   beyond 2^31-1: sizes, extents, true extents and envelopes/contents are exact 64-bit values
   (types are never materialised, so a 2^31+5 byte contiguous type is instant), the int queries
   answer MPI_UNDEFINED where the size does not fit an int, the int envelope query (which has no
   large-count output) refuses a large-count type as MPICH does, and a small type from a
   large-count constructor with a 2^20-element stride carries data between ranks. */
#include <string.h>
#include "oxtest.h"

#define G31 ((MPI_Count)1 << 31)
#define G32 ((MPI_Count)1 << 32)
#define G33 ((MPI_Count)1 << 33)

static void layout(MPI_Datatype t, MPI_Count size, MPI_Count lb, MPI_Count extent, MPI_Count tlb, MPI_Count textent, int line)
{
    MPI_Count s, l, e, tl, te;
    MPI_OK(MPI_Type_size_c(t, &s));
    MPI_OK(MPI_Type_get_extent_c(t, &l, &e));
    MPI_OK(MPI_Type_get_true_extent_c(t, &tl, &te));
    CHECK(s == size && l == lb && e == extent && tl == tlb && te == textent, "line %d: size %lld lb %lld extent %lld true lb %lld true extent %lld", line, (long long)s,
          (long long)l, (long long)e, (long long)tl, (long long)te);
    /* The int/MPI_Aint forms: MPI_Aint holds every bound; an int size that does not fit is MPI_UNDEFINED. */
    int is;
    MPI_Aint al, ae, atl, ate;
    MPI_OK(MPI_Type_size(t, &is));
    CHECK(is == (size > 2147483647 ? MPI_UNDEFINED : (int)size), "line %d: MPI_Type_size %d for size %lld", line, is, (long long)size);
    MPI_OK(MPI_Type_get_extent(t, &al, &ae));
    MPI_OK(MPI_Type_get_true_extent(t, &atl, &ate));
    CHECK(al == lb && ae == extent && atl == tlb && ate == textent, "line %d: MPI_Aint bounds differ", line);
}

/* Checks the large-count envelope: no addresses, `nc` large counts equal to `counts`, `ni` ints. */
static void envelope(MPI_Datatype t, int combiner, int ni, const int *ints, int nc, const MPI_Count *counts, int nd, int line)
{
    MPI_Count gi, ga, gc, gd;
    int comb;
    MPI_OK(MPI_Type_get_envelope_c(t, &gi, &ga, &gc, &gd, &comb));
    CHECK(comb == combiner && gi == ni && ga == 0 && gc == nc && gd == nd, "line %d: combiner %d ints %lld addrs %lld counts %lld types %lld", line, comb, (long long)gi,
          (long long)ga, (long long)gc, (long long)gd);
    int gotints[16];
    MPI_Aint addrs[1];
    MPI_Count got[16];
    MPI_Datatype types[4];
    MPI_OK(MPI_Type_get_contents_c(t, ni, 0, nc, nd, gotints, addrs, got, types));
    for (int i = 0; i < ni; i++)
        CHECK(gotints[i] == ints[i], "line %d: integer %d is %d, not %d", line, i, gotints[i], ints[i]);
    for (int i = 0; i < nc; i++)
        CHECK(got[i] == counts[i], "line %d: large count %d is %lld, not %lld", line, i, (long long)got[i], (long long)counts[i]);
    for (int i = 0; i < nd; i++) {
        int c2;
        MPI_Count a, b, c, d;
        MPI_OK(MPI_Type_get_envelope_c(types[i], &a, &b, &c, &d, &c2));
        if (c2 != MPI_COMBINER_NAMED)
            MPI_OK(MPI_Type_free(&types[i]));
    }
    /* The int envelope cannot describe large counts: MPICH and oxmpi fail it. */
    int i1, i2, i3, i4;
    CHECK(MPI_Type_get_envelope(t, &i1, &i2, &i3, &i4) != MPI_SUCCESS, "line %d: MPI_Type_get_envelope accepted a large-count type", line);
}

static void transfer(int rank, int size)
{
    /* vector_c: 3 blocks of 4 doubles, 2^20 doubles apart (extent 16 MiB + 32 B, 96 B of data). */
    const MPI_Count stride = (MPI_Count)1 << 20;
    size_t span = (size_t)(2 * stride + 4) * sizeof(double), bytes = 25u << 20;
    MPI_Datatype v;
    MPI_OK(MPI_Type_vector_c(3, 4, stride, MPI_DOUBLE, &v));
    MPI_OK(MPI_Type_commit(&v));
    MPI_Count ext, lb;
    MPI_OK(MPI_Type_get_extent_c(v, &lb, &ext));
    CHECK(lb == 0 && (size_t)ext == span, "vector extent %lld", (long long)ext);
    double *big = oxt_malloc(bytes), packed[12], got[12];
    for (int b = 0; b < 3; b++)
        for (int k = 0; k < 4; k++)
            big[b * stride + k] = rank * 100 + b * 10 + k;
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    MPI_Request r;
    /* Typed send, contiguous receive. */
    MPI_OK(MPI_Irecv(got, 12, MPI_DOUBLE, from, 1, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Send(big, 1, v, to, 1, MPI_COMM_WORLD));
    MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    for (int i = 0; i < 12; i++)
        CHECK(got[i] == from * 100 + (i / 4) * 10 + i % 4, "element %d is %g", i, got[i]);
    /* Contiguous send, typed receive: only the three blocks change. */
    for (int i = 0; i < 12; i++)
        packed[i] = -(rank * 1000 + i);
    memset(big, 0, bytes);
    MPI_OK(MPI_Irecv(big, 1, v, from, 2, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Send(packed, 12, MPI_DOUBLE, to, 2, MPI_COMM_WORLD));
    MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    for (int b = 0; b < 3; b++) {
        for (int k = 0; k < 4; k++)
            CHECK(big[b * stride + k] == -(from * 1000 + b * 4 + k), "block %d element %d is %g", b, k, big[b * stride + k]);
        CHECK(big[b * stride + 4] == 0 && (b == 0 || big[b * stride - 1] == 0), "bytes around block %d were written", b);
    }
    free(big);
    MPI_OK(MPI_Type_free(&v));
}

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    int rank, size;
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MPI_Datatype t, u;

    /* contiguous_c of 2^31+5 bytes, and 3 of those (3 * 2^31 + 15 bytes): built and committed instantly. */
    MPI_OK(MPI_Type_contiguous_c(G31 + 5, MPI_BYTE, &t));
    MPI_OK(MPI_Type_commit(&t));
    layout(t, G31 + 5, 0, G31 + 5, 0, G31 + 5, __LINE__);
    envelope(t, MPI_COMBINER_CONTIGUOUS, 0, NULL, 1, (MPI_Count[]){G31 + 5}, 1, __LINE__);
    MPI_OK(MPI_Type_contiguous_c(3, t, &u));
    MPI_OK(MPI_Type_commit(&u));
    layout(u, 3 * (G31 + 5), 0, 3 * (G31 + 5), 0, 3 * (G31 + 5), __LINE__);
    MPI_OK(MPI_Type_free(&u));
    MPI_OK(MPI_Type_free(&t));

    /* vector_c with a stride of 2^32 ints (2^34 bytes). */
    MPI_OK(MPI_Type_vector_c(3, 2, G32, MPI_INT, &t));
    layout(t, 24, 0, 2 * 4 * G32 + 8, 0, 2 * 4 * G32 + 8, __LINE__);
    envelope(t, MPI_COMBINER_VECTOR, 0, NULL, 3, (MPI_Count[]){3, 2, G32}, 1, __LINE__);
    MPI_OK(MPI_Type_free(&t));

    /* hvector_c: block length above 2^31, byte stride 2^33. */
    MPI_OK(MPI_Type_create_hvector_c(2, G31 + 1, G33, MPI_BYTE, &t));
    layout(t, 2 * (G31 + 1), 0, G33 + G31 + 1, 0, G33 + G31 + 1, __LINE__);
    envelope(t, MPI_COMBINER_HVECTOR, 0, NULL, 3, (MPI_Count[]){2, G31 + 1, G33}, 1, __LINE__);
    MPI_OK(MPI_Type_free(&t));

    /* hindexed_c with a displacement above 2^33 and a block of 2^31 bytes. */
    {
        MPI_Count bl[2] = {4, G31}, d[2] = {0, G33 + 16};
        MPI_OK(MPI_Type_create_hindexed_c(2, bl, d, MPI_BYTE, &t));
        layout(t, G31 + 4, 0, G33 + 16 + G31, 0, G33 + 16 + G31, __LINE__);
        envelope(t, MPI_COMBINER_HINDEXED, 0, NULL, 5, (MPI_Count[]){2, 4, G31, 0, G33 + 16}, 1, __LINE__);
        MPI_OK(MPI_Type_free(&t));
    }

    /* indexed_c / indexed_block_c: displacements of 2^31+1 ints. */
    {
        MPI_Count bl[2] = {1, 2}, d[2] = {G31 + 1, 0};
        MPI_OK(MPI_Type_indexed_c(2, bl, d, MPI_INT, &t));
        layout(t, 12, 0, 4 * (G31 + 1) + 4, 0, 4 * (G31 + 1) + 4, __LINE__);
        envelope(t, MPI_COMBINER_INDEXED, 0, NULL, 5, (MPI_Count[]){2, 1, 2, G31 + 1, 0}, 1, __LINE__);
        MPI_OK(MPI_Type_free(&t));
        MPI_OK(MPI_Type_create_indexed_block_c(2, 1, d, MPI_INT, &t));
        layout(t, 8, 0, 4 * (G31 + 1) + 4, 0, 4 * (G31 + 1) + 4, __LINE__);
        envelope(t, MPI_COMBINER_INDEXED_BLOCK, 0, NULL, 4, (MPI_Count[]){2, 1, G31 + 1, 0}, 1, __LINE__);
        MPI_OK(MPI_Type_free(&t));
        MPI_Count bd[2] = {G33, 8};
        MPI_OK(MPI_Type_create_hindexed_block_c(2, 2, bd, MPI_INT, &t));
        layout(t, 16, 8, G33, 8, G33, __LINE__);
        envelope(t, MPI_COMBINER_HINDEXED_BLOCK, 0, NULL, 4, (MPI_Count[]){2, 2, G33, 8}, 1, __LINE__);
        MPI_OK(MPI_Type_free(&t));
    }

    /* struct_c: a double, then 2^31+3 chars at 2^33; the extent is padded to the double's alignment. */
    {
        MPI_Count bl[2] = {1, G31 + 3}, d[2] = {0, G33};
        MPI_Datatype ts[2] = {MPI_DOUBLE, MPI_CHAR};
        MPI_OK(MPI_Type_create_struct_c(2, bl, d, ts, &t));
        layout(t, 8 + G31 + 3, 0, G33 + G31 + 8, 0, G33 + G31 + 3, __LINE__);
        envelope(t, MPI_COMBINER_STRUCT, 0, NULL, 5, (MPI_Count[]){2, 1, G31 + 3, 0, G33}, 2, __LINE__);
        MPI_OK(MPI_Type_free(&t));
    }

    /* resized_c: lb -2^32, extent 2^33; three of them span 3 * 2^33. */
    MPI_OK(MPI_Type_create_resized_c(MPI_INT, -G32, G33, &t));
    layout(t, 4, -G32, G33, 0, 4, __LINE__);
    envelope(t, MPI_COMBINER_RESIZED, 0, NULL, 2, (MPI_Count[]){-G32, G33}, 1, __LINE__);
    MPI_OK(MPI_Type_contiguous_c(3, t, &u));
    layout(u, 12, -G32, 3 * G33, 0, 2 * G33 + 4, __LINE__);
    MPI_OK(MPI_Type_free(&u));
    MPI_OK(MPI_Type_free(&t));

    /* subarray_c: row 2^31 of a (2^31+10) x 4 byte array, columns 1..2. */
    {
        MPI_Count sz[2] = {G31 + 10, 4}, sub[2] = {1, 2}, st[2] = {G31, 1};
        MPI_OK(MPI_Type_create_subarray_c(2, sz, sub, st, MPI_ORDER_C, MPI_BYTE, &t));
        layout(t, 2, 0, 4 * (G31 + 10), 4 * G31 + 1, 2, __LINE__);
        envelope(t, MPI_COMBINER_SUBARRAY, 2, (int[]){2, MPI_ORDER_C}, 6, (MPI_Count[]){G31 + 10, 4, 1, 2, G31, 1}, 1, __LINE__);
        MPI_OK(MPI_Type_free(&t));
    }

    /* darray_c: 2^32 + 2 bytes block-distributed over the ranks. */
    {
        MPI_Count g[1] = {G32 + 2};
        int dist[1] = {MPI_DISTRIBUTE_BLOCK}, darg[1] = {MPI_DISTRIBUTE_DFLT_DARG}, ps[1] = {size};
        MPI_OK(MPI_Type_create_darray_c(size, rank, 1, g, dist, darg, ps, MPI_ORDER_C, MPI_BYTE, &t));
        MPI_Count mine = (G32 + 2) / size;
        layout(t, mine, 0, G32 + 2, rank * mine, mine, __LINE__);
        envelope(t, MPI_COMBINER_DARRAY, 7, (int[]){size, rank, 1, MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_DFLT_DARG, size, MPI_ORDER_C}, 1, g, 1, __LINE__);
        MPI_OK(MPI_Type_free(&t));
    }

    transfer(rank, size);
    MPI_Finalize();
    return 0;
}
