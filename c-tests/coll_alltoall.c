/* oxmpi-test: ranks=1,2,3,4,5,8,12 timeout=90 */
/* oxmpi-test: env=- env=OXMPI_ALLTOALL_ALGORITHM=shared env=OXMPI_ALLTOALL_ALGORITHM=peer_copy */
/* MPI_Alltoall in its six forms (blocking, _c, I, I_c, _init started several times, _init_c)
   with block sizes that select every algorithm automatically (tiny blocks on 8 ranks: Bruck;
   large blocks: single-copy linear or pairwise), odd and zero counts, MPI_IN_PLACE, a strided
   derived send type against contiguous receives, an intercommunicator between the even and odd
   ranks, and argument errors under MPI_ERRORS_RETURN. */
#include "oxcoll.h"

static int rank, size;
/* how many times persistent forms are started (in place: once, a second run transposes back) */
static int starts = 2;

/* Element i of the block that rank `from` sends to rank `to`. */
static int val(int from, int to, int i) { return from * 1000003 + to * 7919 + i; }

/* form: 0 blocking, 1 _c, 2 I, 3 I_c, 4 _init, 5 _init_c. */
static void call(int form, const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, MPI_Comm comm)
{
    MPI_Request req;
    switch (form) {
    case 0: MPI_OK(MPI_Alltoall(s, sc, st, r, rc, rt, comm)); return;
    case 1: MPI_OK(MPI_Alltoall_c(s, sc, st, r, rc, rt, comm)); return;
    case 2: MPI_OK(MPI_Ialltoall(s, sc, st, r, rc, rt, comm, &req)); break;
    case 3: MPI_OK(MPI_Ialltoall_c(s, sc, st, r, rc, rt, comm, &req)); break;
    case 4: MPI_OK(MPI_Alltoall_init(s, sc, st, r, rc, rt, comm, MPI_INFO_NULL, &req)); break;
    default: MPI_OK(MPI_Alltoall_init_c(s, sc, st, r, rc, rt, comm, MPI_INFO_NULL, &req)); break;
    }
    if (form >= 4) {
        /* started again: the next run must give the same result */
        for (int k = 0; k < starts; k++) {
            MPI_OK(MPI_Start(&req));
            MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        }
        MPI_OK(MPI_Request_free(&req));
    } else {
        MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    }
}

static void intra(int form, int n, int inplace)
{
    int *s = oxt_malloc(sizeof(int) * (size_t)n * size), *r = oxt_malloc(sizeof(int) * (size_t)n * size);
    for (int j = 0; j < size; j++)
        for (int i = 0; i < n; i++) {
            s[j * n + i] = val(rank, j, i);
            r[j * n + i] = -1;
        }
    if (inplace) {
        memcpy(r, s, sizeof(int) * (size_t)n * size);
        starts = 1;
        call(form, MPI_IN_PLACE, -5, MPI_DATATYPE_NULL, r, n, MPI_INT, MPI_COMM_WORLD);
        starts = 2;
    } else {
        call(form, s, n, MPI_INT, r, n, MPI_INT, MPI_COMM_WORLD);
    }
    for (int j = 0; j < size; j++)
        for (int i = 0; i < n; i++)
            CHECK(r[j * n + i] == val(j, rank, i), "form %d n=%d inplace=%d: block %d [%d] = %d, expected %d", form, n, inplace, j, i, r[j * n + i], val(j, rank, i));
    free(s);
    free(r);
}

/* Send with a vector type (every other int of a doubled buffer), receive contiguous ints. */
static void derived(int n)
{
    MPI_Datatype vec;
    MPI_OK(MPI_Type_vector(n, 1, 2, MPI_INT, &vec));
    MPI_Datatype vecr;
    MPI_OK(MPI_Type_create_resized(vec, 0, (MPI_Aint)sizeof(int) * 2 * n, &vecr));
    MPI_OK(MPI_Type_commit(&vecr));
    int *s = oxt_malloc(sizeof(int) * 2 * (size_t)n * size), *r = oxt_malloc(sizeof(int) * (size_t)n * size);
    for (int j = 0; j < size; j++)
        for (int i = 0; i < n; i++) {
            s[2 * (j * n + i)] = val(rank, j, i);
            s[2 * (j * n + i) + 1] = -9;
            r[j * n + i] = -1;
        }
    MPI_OK(MPI_Alltoall(s, 1, vecr, r, n, MPI_INT, MPI_COMM_WORLD));
    for (int j = 0; j < size; j++)
        for (int i = 0; i < n; i++)
            CHECK(r[j * n + i] == val(j, rank, i), "derived n=%d: block %d [%d] = %d", n, j, i, r[j * n + i]);
    /* and back: contiguous send, strided receive (holes untouched) */
    for (int k = 0; k < 2 * n * size; k++)
        s[k] = -9;
    for (int j = 0; j < size; j++)
        for (int i = 0; i < n; i++)
            r[j * n + i] = val(rank, j, i);
    MPI_Request req;
    MPI_OK(MPI_Ialltoall(r, n, MPI_INT, s, 1, vecr, MPI_COMM_WORLD, &req));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int j = 0; j < size; j++)
        for (int i = 0; i < n; i++) {
            CHECK(s[2 * (j * n + i)] == val(j, rank, i), "derived recv n=%d: block %d [%d]", n, j, i);
            CHECK(s[2 * (j * n + i) + 1] == -9, "derived recv n=%d: hole written", n);
        }
    MPI_OK(MPI_Type_free(&vec));
    MPI_OK(MPI_Type_free(&vecr));
    free(s);
    free(r);
}

static void inter(int form, int n)
{
    int parity = rank % 2;
    MPI_Comm half, ic;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, parity, rank, &half));
    MPI_OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - parity, 7, &ic));
    int lrank, rsize;
    MPI_OK(MPI_Comm_rank(ic, &lrank));
    MPI_OK(MPI_Comm_remote_size(ic, &rsize));
    int *s = oxt_malloc(sizeof(int) * (size_t)n * rsize), *r = oxt_malloc(sizeof(int) * (size_t)n * rsize);
    for (int j = 0; j < rsize; j++)
        for (int i = 0; i < n; i++) {
            s[j * n + i] = val(rank, 2 * j + 1 - parity, i);
            r[j * n + i] = -1;
        }
    call(form, s, n, MPI_INT, r, n, MPI_INT, ic);
    for (int j = 0; j < rsize; j++)
        for (int i = 0; i < n; i++)
            CHECK(r[j * n + i] == val(2 * j + 1 - parity, rank, i), "inter form %d n=%d: block %d [%d] = %d", form, n, j, i, r[j * n + i]);
    free(s);
    free(r);
    MPI_OK(MPI_Comm_free(&ic));
    MPI_OK(MPI_Comm_free(&half));
}

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    const int ns[] = {0, 1, 3, 37, 2049, 9000};
    for (int form = 0; form < 6; form++)
        for (unsigned k = 0; k < sizeof ns / sizeof ns[0]; k++)
            intra(form, ns[k], 0);
    for (int form = 0; form < 6; form++) {
        intra(form, 5, 1);
        intra(form, 3000, 1);
    }
    derived(1);
    derived(7);
    derived(3000);
    if (size >= 2)
        for (int form = 0; form < 6; form++) {
            inter(form, 3);
            inter(form, 4000);
        }

    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int *a = oxt_malloc(sizeof(int) * size), *b = oxt_malloc(sizeof(int) * size);
    CHECK_CLASS(MPI_Alltoall(a, -1, MPI_INT, b, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Alltoall(a, 1, MPI_INT, b, -1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Alltoall(a, 1, MPI_DATATYPE_NULL, b, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Alltoall(a, 1, MPI_INT, b, 1, MPI_DATATYPE_NULL, MPI_COMM_WORLD), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Alltoall(a, 1, MPI_INT, b, 1, MPI_INT, MPI_COMM_NULL), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Ialltoall(a, 1, MPI_INT, b, 1, MPI_INT, MPI_COMM_NULL, &(MPI_Request){0}), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Alltoall(a, 1, MPI_INT, a, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    MPI_OK(MPI_Alltoall(a, 0, MPI_INT, b, 0, MPI_INT, MPI_COMM_WORLD));
    /* MPI_IN_PLACE where the standard does not allow it, a NULL receive buffer (MPICH 4.0.2
       crashes on these instead of returning an error) */
    if (!oxc_is_mpich()) {
        CHECK_CLASS(MPI_Alltoall(a, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_BUFFER);
        CHECK_CLASS(MPI_Alltoall(a, 1, MPI_INT, NULL, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_BUFFER);
        if (size >= 2) {
            MPI_Comm half, ic;
            MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half));
            MPI_OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - rank % 2, 7, &ic));
            MPI_OK(MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN));
            CHECK_CLASS(MPI_Alltoall(MPI_IN_PLACE, 1, MPI_INT, b, 1, MPI_INT, ic), MPI_ERR_BUFFER);
            int one[8] = {1, 1, 1, 1, 1, 1, 1, 1}, dis[8] = {0, 1, 2, 3, 4, 5, 6, 7};
            CHECK_CLASS(MPI_Alltoallv(MPI_IN_PLACE, one, dis, MPI_INT, b, one, dis, MPI_INT, ic), MPI_ERR_BUFFER);
            MPI_OK(MPI_Comm_free(&ic));
            MPI_OK(MPI_Comm_free(&half));
        }
    }
    free(a);
    free(b);
    MPI_OK(MPI_Finalize());
    return 0;
}
