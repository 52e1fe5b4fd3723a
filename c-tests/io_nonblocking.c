/* oxmpi-test: ranks=1,2,4 timeout=120 env=- env=OXMPI_IO_THREADS=1 */
/* Nonblocking data access (MPI 4.1 sections 14.4.2-14.4.4) as requests that complete later:
 * many outstanding iwrite_at/iread_at on three files, mixed with MPI_Isend/MPI_Irecv in one
 * MPI_Waitall, MPI_Waitany, MPI_Testsome and MPI_Waitsome; counts from MPI_Get_count and
 * MPI_Get_elements(_c); individual file pointers moved at the call (MPI_File_get_position before
 * completion), the shared pointer taken at the call; strided filetypes (data sieving) on the
 * nonblocking path (io_nonblocking_datarep: conversion); the nonblocking collectives; short
 * reads at the end of the file; MPI_Request_free then MPI_File_close (which waits); MPI_Cancel
 * (an I/O request may not be cancelled: then its data is there); errors at the call
 * (MPI_ERR_READ_ONLY/MPI_ERR_ACCESS, MPI_ERR_ARG) leaving the request untouched; the _c forms.
 * Every file is deleted. */
#include "oxtest.h"
#include <unistd.h>

#define NF 3       /* files */
#define K 8        /* requests per file and rank */
#define M 4096     /* ints per request */

static int rank, size;

static int value(int f, int r, int k, int i) { return ((f * 64 + r) * K + k) * 1000003 + i; }

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int pid = getpid();
    MPI_OK(MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD));
    char name[NF][256];
    MPI_File fh[NF];
    for (int f = 0; f < NF; f++) {
        snprintf(name[f], sizeof name[f], "/tmp/oxmpi-io_nonblocking-%d-%d", pid, f);
        MPI_OK(MPI_File_open(MPI_COMM_WORLD, name[f], MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh[f]));
    }
    int *out = malloc(sizeof(int) * NF * K * M), *in = malloc(sizeof(int) * NF * K * M);
    for (int f = 0; f < NF; f++)
        for (int k = 0; k < K; k++)
            for (int i = 0; i < M; i++)
                out[(f * K + k) * M + i] = value(f, rank, k, i);
    const int NR = NF * K + 2;
    MPI_Request reqs[NF * K + 2];
    MPI_Status sts[NF * K + 2];
    int token = rank + 100, got_token = -1;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
#define AT(f, k) ((MPI_Offset)(((k) * size + rank) * M) * (MPI_Offset)sizeof(int))

    /* 1. NF*K writes outstanding at once, with a ring exchange, in one MPI_Waitall. */
    MPI_OK(MPI_Irecv(&got_token, 1, MPI_INT, left, 5, MPI_COMM_WORLD, &reqs[0]));
    for (int f = 0; f < NF; f++)
        for (int k = 0; k < K; k++)
            MPI_OK(MPI_File_iwrite_at(fh[f], AT(f, k), &out[(f * K + k) * M], M, MPI_INT, &reqs[1 + f * K + k]));
    MPI_OK(MPI_Isend(&token, 1, MPI_INT, right, 5, MPI_COMM_WORLD, &reqs[NR - 1]));
    MPI_OK(MPI_Waitall(NR, reqs, sts));
    CHECK(got_token == left + 100, "token %d from rank %d", got_token, left);
    for (int j = 1; j < NR - 1; j++) {
        int n = -1;
        MPI_OK(MPI_Get_count(&sts[j], MPI_INT, &n));
        CHECK(n == M, "iwrite_at %d: count %d, expected %d", j, n, M);
        CHECK(reqs[j] == MPI_REQUEST_NULL, "request %d not freed by MPI_Waitall", j);
    }
    for (int f = 0; f < NF; f++)
        MPI_OK(MPI_File_sync(fh[f]));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int f = 0; f < NF; f++)
        MPI_OK(MPI_File_sync(fh[f]));

    /* 2. Read them back (the left neighbour's blocks), completed one by one with MPI_Waitany. */
    memset(in, 0xff, sizeof(int) * NF * K * M);
    got_token = -1;
    MPI_OK(MPI_Irecv(&got_token, 1, MPI_INT, left, 6, MPI_COMM_WORLD, &reqs[0]));
    for (int f = 0; f < NF; f++)
        for (int k = 0; k < K; k++) {
            MPI_Offset at = (MPI_Offset)((k * size + left) * M) * (MPI_Offset)sizeof(int);
            MPI_OK(MPI_File_iread_at(fh[f], at, &in[(f * K + k) * M], M, MPI_INT, &reqs[1 + f * K + k]));
        }
    MPI_OK(MPI_Isend(&token, 1, MPI_INT, right, 6, MPI_COMM_WORLD, &reqs[NR - 1]));
    int seen[NF * K + 2] = {0};
    for (int done = 0; done < NR; done++) {
        int idx = -1;
        MPI_Status st;
        MPI_OK(MPI_Waitany(NR, reqs, &idx, &st));
        CHECK(idx >= 0 && idx < NR && !seen[idx], "MPI_Waitany gave index %d", idx);
        seen[idx] = 1;
        if (idx > 0 && idx < NR - 1) {
            int n = -1, e = -1;
            MPI_OK(MPI_Get_count(&st, MPI_INT, &n));
            MPI_OK(MPI_Get_elements(&st, MPI_INT, &e));
            CHECK(n == M && e == M, "iread_at %d: count %d elements %d, expected %d", idx, n, e, M);
        }
    }
    CHECK(got_token == left + 100, "token %d", got_token);
    for (int f = 0; f < NF; f++)
        for (int k = 0; k < K; k++)
            for (int i = 0; i < M; i++)
                CHECK(in[(f * K + k) * M + i] == value(f, left, k, i), "file %d block %d [%d] = %d, expected %d", f, k, i,
                      in[(f * K + k) * M + i], value(f, left, k, i));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    /* 3. Individual file pointers through a strided view (every size-th int is this rank's):
     * the pointer moves at the call; MPI_Testsome and MPI_Waitsome complete. */
    MPI_Datatype vec, ft;
    MPI_OK(MPI_Type_vector(M, 1, size, MPI_INT, &vec));
    MPI_OK(MPI_Type_create_resized(vec, 0, (MPI_Aint)M * size * sizeof(int), &ft));
    MPI_OK(MPI_Type_commit(&ft));
    MPI_OK(MPI_File_set_view(fh[1], rank * sizeof(int), MPI_INT, ft, "native", MPI_INFO_NULL));
    for (int k = 0; k < K; k++)
        MPI_OK(MPI_File_iwrite(fh[1], &out[k * M], M, MPI_INT, &reqs[k]));
    MPI_Offset pos = -1;
    MPI_OK(MPI_File_get_position(fh[1], &pos));
    CHECK(pos == (MPI_Offset)K * M, "position %lld after %d iwrites of %d ints", (long long)pos, K, M);
    int left_to_do = K, outcount, idxs[NF * K + 2];
    while (left_to_do > 0) {
        MPI_OK(MPI_Testsome(K, reqs, &outcount, idxs, sts));
        CHECK(outcount != MPI_UNDEFINED, "MPI_Testsome: no active request while %d remain", left_to_do);
        for (int j = 0; j < outcount; j++) {
            int n = -1;
            MPI_OK(MPI_Get_count(&sts[j], MPI_INT, &n));
            CHECK(n == M, "iwrite %d: count %d", idxs[j], n);
        }
        left_to_do -= outcount;
    }
    MPI_OK(MPI_File_sync(fh[1]));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_File_sync(fh[1]));
    MPI_OK(MPI_File_seek(fh[1], 0, MPI_SEEK_SET));
    memset(in, 0xff, sizeof(int) * K * M);
    for (int k = 0; k < K; k++)
        MPI_OK(MPI_File_iread(fh[1], &in[k * M], M, MPI_INT, &reqs[k]));
    left_to_do = K;
    while (left_to_do > 0) {
        MPI_OK(MPI_Waitsome(K, reqs, &outcount, idxs, sts));
        CHECK(outcount != MPI_UNDEFINED && outcount > 0, "MPI_Waitsome outcount %d", outcount);
        left_to_do -= outcount;
    }
    for (int i = 0; i < K * M; i++)
        CHECK(in[i] == out[i], "strided iread [%d] = %d, expected %d", i, in[i], out[i]);
    /* The ranks' ints interleave in the file: rank r's j-th is at int j*size + r. */
    MPI_OK(MPI_File_set_view(fh[1], 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    int probe[2];
    MPI_OK(MPI_File_read_at(fh[1], (MPI_Offset)(3 * size + rank) * sizeof(int), probe, 1, MPI_INT, MPI_STATUS_IGNORE));
    CHECK(probe[0] == out[3], "int %d of the file is %d, expected %d", 3 * size + rank, probe[0], out[3]);

    /* 4. The shared file pointer is taken at the call: every rank's piece lands once. */
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_File_set_view(fh[2], 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    MPI_Request r2[2];
    int mine[2][16];
    for (int j = 0; j < 2; j++)
        for (int i = 0; i < 16; i++)
            mine[j][i] = (rank * 2 + j) * 100 + i;
    MPI_OK(MPI_File_iwrite_shared(fh[2], mine[0], 16, MPI_INT, &r2[0]));
    MPI_OK(MPI_File_iwrite_shared(fh[2], mine[1], 16, MPI_INT, &r2[1]));
    MPI_OK(MPI_Waitall(2, r2, sts));
    MPI_OK(MPI_File_sync(fh[2]));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_File_sync(fh[2]));
    MPI_OK(MPI_File_get_position_shared(fh[2], &pos));
    CHECK(pos == 32 * size, "shared position %lld, expected %d", (long long)pos, 32 * size);
    int *all = malloc(sizeof(int) * 32 * size), *hits = calloc(2 * size, sizeof(int));
    MPI_OK(MPI_File_read_at(fh[2], 0, all, 32 * size, MPI_INT, MPI_STATUS_IGNORE));
    for (int c = 0; c < 2 * size; c++) {
        int who = all[c * 16] / 100;
        CHECK(who >= 0 && who < 2 * size, "chunk %d starts with %d", c, all[c * 16]);
        hits[who]++;
        for (int i = 0; i < 16; i++)
            CHECK(all[c * 16 + i] == who * 100 + i, "chunk %d [%d] = %d", c, i, all[c * 16 + i]);
    }
    for (int c = 0; c < 2 * size; c++)
        CHECK(hits[c] == 1, "piece %d landed %d times", c, hits[c]);
    /* iread_shared: the pieces of all ranks, each once. */
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_File_seek_shared(fh[2], 0, MPI_SEEK_SET));
    int back[16];
    MPI_OK(MPI_File_iread_shared(fh[2], back, 16, MPI_INT, &r2[0]));
    MPI_OK(MPI_Wait(&r2[0], &sts[0]));
    int n = -1;
    MPI_OK(MPI_Get_count(&sts[0], MPI_INT, &n));
    CHECK(n == 16, "iread_shared count %d", n);
    CHECK(back[0] % 100 == 0 && back[15] == back[0] + 15, "iread_shared got %d..%d", back[0], back[15]);

    /* 5. A short read at the end of the file. */
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Offset fsize = 0;
    MPI_OK(MPI_File_get_size(fh[2], &fsize));
    MPI_OK(MPI_File_iread_at(fh[2], fsize / 4 - 5, back, 16, MPI_INT, &r2[0]));
    MPI_OK(MPI_Wait(&r2[0], &sts[0]));
    MPI_OK(MPI_Get_count(&sts[0], MPI_INT, &n));
    CHECK(n == 5, "short iread_at count %d, expected 5", n);

    /* 6. The nonblocking collectives with point-to-point in one MPI_Waitall; the _c forms. */
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_File_set_view(fh[0], 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    got_token = -1;
    MPI_OK(MPI_Irecv(&got_token, 1, MPI_INT, left, 7, MPI_COMM_WORLD, &reqs[0]));
    MPI_OK(MPI_File_iwrite_at_all(fh[0], (MPI_Offset)rank * M, out, M, MPI_INT, &reqs[1]));
    MPI_OK(MPI_File_seek(fh[0], (MPI_Offset)(size + rank) * M, MPI_SEEK_SET));
    MPI_OK(MPI_File_iwrite_all(fh[0], &out[M], M, MPI_INT, &reqs[2]));
    MPI_OK(MPI_Isend(&token, 1, MPI_INT, right, 7, MPI_COMM_WORLD, &reqs[3]));
    MPI_OK(MPI_Waitall(4, reqs, sts));
    MPI_OK(MPI_Get_count(&sts[2], MPI_INT, &n));
    CHECK(n == M, "iwrite_all count %d", n);
    MPI_OK(MPI_File_sync(fh[0]));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_File_sync(fh[0]));
    memset(in, 0xff, sizeof(int) * 2 * M);
    MPI_OK(MPI_File_iread_at_all(fh[0], (MPI_Offset)left * M, in, M, MPI_INT, &reqs[0]));
    MPI_OK(MPI_File_seek(fh[0], (MPI_Offset)(size + left) * M, MPI_SEEK_SET));
    MPI_OK(MPI_File_iread_all(fh[0], &in[M], M, MPI_INT, &reqs[1]));
    MPI_OK(MPI_Waitall(2, reqs, sts));
    for (int i = 0; i < 2 * M; i++)
        CHECK(in[i] == value(0, left, i / M, i % M), "collective iread [%d] = %d", i, in[i]);
    MPI_Count cn = -1;
    MPI_OK(MPI_File_iread_at_c(fh[0], (MPI_Offset)left * M, in, (MPI_Count)M, MPI_INT, &reqs[0]));
    MPI_OK(MPI_Wait(&reqs[0], &sts[0]));
    MPI_OK(MPI_Get_elements_c(&sts[0], MPI_INT, &cn));
    CHECK(cn == M, "iread_at_c elements %lld", (long long)cn);
    MPI_OK(MPI_Get_count_c(&sts[0], MPI_INT, &cn));
    CHECK(cn == M, "iread_at_c count %lld", (long long)cn);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_File_iwrite_at_c(fh[0], (MPI_Offset)rank * M, out, (MPI_Count)M, MPI_INT, &reqs[0]));
    MPI_OK(MPI_Wait(&reqs[0], &sts[0]));
    MPI_OK(MPI_Get_count_c(&sts[0], MPI_INT, &cn));
    CHECK(cn == M, "iwrite_at_c count %lld", (long long)cn);

    /* 7. MPI_Cancel of an I/O request: if it was not cancelled, its data is there. */
    MPI_OK(MPI_File_iread_at(fh[0], (MPI_Offset)rank * M, in, M, MPI_INT, &reqs[0]));
    MPI_OK(MPI_Cancel(&reqs[0]));
    MPI_OK(MPI_Wait(&reqs[0], &sts[0]));
    int cancelled = -1;
    MPI_OK(MPI_Test_cancelled(&sts[0], &cancelled));
    if (!cancelled)
        for (int i = 0; i < M; i++)
            CHECK(in[i] == out[i], "after a failed cancel [%d] = %d", i, in[i]);

    /* 8. Errors at the call: the request stays untouched. */
    MPI_Request untouched = MPI_REQUEST_NULL;
    int rc = MPI_File_iread_at(fh[0], -1, in, 1, MPI_INT, &untouched);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ARG, "iread_at at offset -1: class %d, expected MPI_ERR_ARG", cls);
    CHECK(untouched == MPI_REQUEST_NULL, "failed iread_at set the request");
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_File ro, wo;
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, name[0], MPI_MODE_RDONLY, MPI_INFO_NULL, &ro));
    rc = MPI_File_iwrite_at(ro, 0, out, 1, MPI_INT, &untouched);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_READ_ONLY || cls == MPI_ERR_ACCESS, "iwrite_at on a read-only file: class %d", cls);
    CHECK(untouched == MPI_REQUEST_NULL, "failed iwrite set the request");
    MPI_OK(MPI_File_close(&ro));
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, name[0], MPI_MODE_WRONLY, MPI_INFO_NULL, &wo));
    rc = MPI_File_iread(wo, in, 1, MPI_INT, &untouched);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ACCESS, "iread on a write-only file: class %d, expected MPI_ERR_ACCESS", cls);
    CHECK(untouched == MPI_REQUEST_NULL, "failed iread set the request");

    /* 9. MPI_Request_free, then close: the data is in the file once MPI_File_close returns. */
    MPI_OK(MPI_File_iwrite_at(wo, (MPI_Offset)(2 * size + rank) * M * sizeof(int), &out[(K + 2) * M], M, MPI_INT, &reqs[0]));
    MPI_OK(MPI_Request_free(&reqs[0]));
    CHECK(reqs[0] == MPI_REQUEST_NULL, "MPI_Request_free left the handle");
    MPI_OK(MPI_File_close(&wo));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_File_set_view(fh[0], 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    MPI_OK(MPI_File_read_at(fh[0], (MPI_Offset)(2 * size + left) * M * sizeof(int), in, M, MPI_INT, MPI_STATUS_IGNORE));
    for (int i = 0; i < M; i++)
        CHECK(in[i] == value(1, left, 2, i), "freed iwrite's data [%d] = %d", i, in[i]);

    for (int f = 0; f < NF; f++)
        MPI_OK(MPI_File_close(&fh[f]));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        for (int f = 0; f < NF; f++)
            MPI_OK(MPI_File_delete(name[f], MPI_INFO_NULL));
    MPI_OK(MPI_Type_free(&ft));
    MPI_OK(MPI_Type_free(&vec));
    free(out);
    free(in);
    free(all);
    free(hits);
    MPI_OK(MPI_Finalize());
    return 0;
}
