/* oxmpi-test: ranks=1,2,3,4,5,8 timeout=60 */
/* MPI_Allgather and MPI_Allgatherv: odd and zero counts, small (recursive doubling on power-of-two
   rank counts) and large (ring) messages, MPI_IN_PLACE, a contiguous send type against plain ints,
   a vector receive type, uneven counts with permuted displacements, the intercommunicator form
   (each group gets the other's data), the nonblocking, persistent and large-count forms, and
   argument errors. */
#include "oxcoll.h"

static int rank, size;

static int val(int r, int i) { return r * 100000 + i; }

/* MPI_Allgather of n ints through form f (0 blocking, 1 _c, 2 nonblocking, 3 persistent started
   several times with new data). */
static void allgather_ints(int n, int inplace, int f)
{
    int *s = oxt_malloc(sizeof(int) * (n + 1)), *r = oxt_malloc(sizeof(int) * ((size_t)n * size + 1));
    int starts = f == 3 ? 3 : 1;
    MPI_Request req;
    const void *sb = inplace ? MPI_IN_PLACE : s;
    if (f == 3)
        MPI_OK(MPI_Allgather_init(sb, n, MPI_INT, r, n, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
    /* MPICH 4.0.2 mishandles restarts of persistent collectives (a second start of a persistent
       scatter fails, of an allgather leaves blocks unwritten), so it gets one start. */
    for (int k = f == 3 && oxc_is_mpich() ? starts - 1 : 0; k < starts; k++) {
        for (int i = 0; i < n; i++)
            s[i] = val(rank, i) + k;
        for (int i = 0; i < n * size; i++)
            r[i] = -1;
        if (inplace)
            memcpy(r + (size_t)rank * n, s, sizeof(int) * n);
        switch (f) {
        case 0: MPI_OK(MPI_Allgather(sb, n, MPI_INT, r, n, MPI_INT, MPI_COMM_WORLD)); break;
        case 1: MPI_OK(MPI_Allgather_c(sb, n, MPI_INT, r, n, MPI_INT, MPI_COMM_WORLD)); break;
        case 2:
            MPI_OK(MPI_Iallgather(sb, n, MPI_INT, r, n, MPI_INT, MPI_COMM_WORLD, &req));
            MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
            break;
        case 3:
            MPI_OK(MPI_Start(&req));
            MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
            break;
        }
        for (int q = 0; q < size; q++)
            for (int i = 0; i < n; i++)
                CHECK(r[(size_t)q * n + i] == val(q, i) + k, "allgather n=%d inplace=%d form=%d start %d: [%d][%d] = %d", n, inplace, f,
                      k, q, i, r[(size_t)q * n + i]);
    }
    if (f == 3)
        MPI_OK(MPI_Request_free(&req));
    free(s);
    free(r);
}

/* Uneven counts (some zero) placed in reverse rank order with gaps, as ints or as a vector type
   of 2 ints with a hole (extent 3 ints) received from plain ints; optionally in place. */
static void allgatherv_case(int vec, int inplace, int f)
{
    int *counts = oxt_malloc(sizeof(int) * size), *displs = oxt_malloc(sizeof(int) * size);
    int at = 0, per = vec ? 2 : 1, ext = vec ? 3 : 1;
    /* MPICH 4.0.2 ignores the displacement of MPI_Allgatherv on one rank (it copies to the start
       of the receive buffer), so no gaps there. */
    int gap = size == 1 && oxc_is_mpich() ? 0 : 1;
    for (int q = size - 1; q >= 0; q--) {
        counts[q] = (q * 7 + 3) % 5;
        displs[q] = at + gap;
        at += counts[q] + gap;
    }
    MPI_Datatype rt = MPI_INT;
    if (vec) {
        MPI_OK(MPI_Type_vector(2, 1, 2, MPI_INT, &rt));
        MPI_OK(MPI_Type_commit(&rt));
    }
    int mine = counts[rank] * per, total = at * ext + 2;
    int *s = oxt_malloc(sizeof(int) * (mine + 1)), *r = oxt_malloc(sizeof(int) * total), *e = oxt_malloc(sizeof(int) * total);
    for (int i = 0; i < total; i++)
        e[i] = -1;
    for (int q = 0; q < size; q++)
        for (int k = 0; k < counts[q] * per; k++)
            e[displs[q] * ext + (vec ? (k / 2) * 3 + (k % 2) * 2 : k)] = val(q, k);
    for (int i = 0; i < mine; i++)
        s[i] = val(rank, i);
    for (int i = 0; i < total; i++)
        r[i] = -1;
    if (inplace)
        for (int k = 0; k < mine; k++) {
            int j = displs[rank] * ext + (vec ? (k / 2) * 3 + (k % 2) * 2 : k);
            r[j] = e[j];
        }
    const void *sb = inplace ? MPI_IN_PLACE : s;
    if (f == 0) {
        MPI_OK(MPI_Allgatherv(sb, mine, MPI_INT, r, counts, displs, rt, MPI_COMM_WORLD));
    } else {
        MPI_Count cc[16];
        MPI_Aint dd[16];
        for (int q = 0; q < size; q++) {
            cc[q] = counts[q];
            dd[q] = displs[q];
        }
        MPI_Request req;
        MPI_OK(MPI_Iallgatherv_c(sb, mine, MPI_INT, r, cc, dd, rt, MPI_COMM_WORLD, &req));
        MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    }
    for (int i = 0; i < total; i++)
        CHECK(r[i] == e[i], "allgatherv vec=%d inplace=%d form=%d: [%d] = %d, expected %d", vec, inplace, f, i, r[i], e[i]);
    if (vec)
        MPI_OK(MPI_Type_free(&rt));
    free(s);
    free(r);
    free(e);
    free(counts);
    free(displs);
}

/* A contiguous send type of 3 ints against plain ints; plain ints against a vector receive type
   (3 ints, stride 2, extent 5 ints), in place. */
static void derived_case(void)
{
    MPI_Datatype c3, v3;
    MPI_OK(MPI_Type_contiguous(3, MPI_INT, &c3));
    MPI_OK(MPI_Type_commit(&c3));
    MPI_OK(MPI_Type_vector(3, 1, 2, MPI_INT, &v3));
    MPI_OK(MPI_Type_commit(&v3));
    int s[3] = {val(rank, 0), val(rank, 1), val(rank, 2)};
    int *r = oxt_malloc(sizeof(int) * 3 * size);
    MPI_OK(MPI_Allgather(s, 1, c3, r, 3, MPI_INT, MPI_COMM_WORLD));
    for (int i = 0; i < 3 * size; i++)
        CHECK(r[i] == val(i / 3, i % 3), "contiguous send type: [%d] = %d", i, r[i]);
    int n = 5 * size + 1;
    int *rv = oxt_malloc(sizeof(int) * n);
    for (int i = 0; i < n; i++)
        rv[i] = -1;
    for (int k = 0; k < 3; k++)
        rv[5 * rank + 2 * k] = s[k];
    MPI_OK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rv, 1, v3, MPI_COMM_WORLD));
    for (int i = 0; i < n; i++) {
        int q = i / 5, o = i % 5;
        int e = q < size && o % 2 == 0 ? val(q, o / 2) : -1;
        CHECK(rv[i] == e, "vector receive type in place: [%d] = %d, expected %d", i, rv[i], e);
    }
    MPI_OK(MPI_Type_free(&c3));
    MPI_OK(MPI_Type_free(&v3));
    free(r);
    free(rv);
}

/* Intercommunicator between even and odd ranks: each group gets the other group's data. */
static void inter_case(void)
{
    int parity = rank % 2, lrank = rank / 2, ne = (size + 1) / 2, no = size / 2;
    int other = parity ? ne : no;
    MPI_Comm half, inter;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, parity, rank, &half));
    MPI_OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - parity, 7, &inter));
    int s[8], r[5 * 8], rc[8], rd[8];
    for (int i = 0; i < 8; i++)
        s[i] = val(rank, i);
    for (int i = 0; i < 40; i++)
        r[i] = -1;
    MPI_OK(MPI_Allgather(s, 5, MPI_INT, r, 5, MPI_INT, inter));
    for (int q = 0; q < other; q++)
        for (int i = 0; i < 5; i++)
            CHECK(r[5 * q + i] == val(2 * q + 1 - parity, i), "inter allgather: [%d][%d] = %d", q, i, r[5 * q + i]);
    /* allgatherv: remote rank q sends q+1 ints, placed in reverse order */
    int at = 0;
    for (int q = other - 1; q >= 0; q--) {
        rc[q] = q + 1;
        rd[q] = at;
        at += q + 1;
    }
    for (int i = 0; i < 40; i++)
        r[i] = -1;
    MPI_Request req;
    MPI_OK(MPI_Allgatherv_init(s, lrank + 1, MPI_INT, r, rc, rd, MPI_INT, inter, MPI_INFO_NULL, &req));
    MPI_OK(MPI_Start(&req));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Request_free(&req));
    for (int q = 0; q < other; q++)
        for (int i = 0; i <= q; i++)
            CHECK(r[rd[q] + i] == val(2 * q + 1 - parity, i), "inter allgatherv: [%d][%d] = %d", q, i, r[rd[q] + i]);
    MPI_OK(MPI_Comm_free(&inter));
    MPI_OK(MPI_Comm_free(&half));
}

static void errors(void)
{
    int s[4] = {0}, r[4 * 8];
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    CHECK_CLASS(MPI_Allgather(s, -1, MPI_INT, r, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Allgather(s, 1, MPI_INT, r, 1, MPI_DATATYPE_NULL, MPI_COMM_WORLD), MPI_ERR_TYPE);
    int one = 1, zero = 0, neg = -1;
    CHECK_CLASS(MPI_Allgatherv(s, 1, MPI_INT, r, &neg, &zero, MPI_INT, MPI_COMM_SELF), MPI_ERR_COUNT);
    /* MPICH 4.0.2 does not check the arrays (it crashes on NULL). */
    if (!oxc_is_mpich()) {
        CHECK_CLASS(MPI_Allgatherv(s, 1, MPI_INT, r, NULL, &zero, MPI_INT, MPI_COMM_SELF), MPI_ERR_ARG);
        CHECK_CLASS(MPI_Allgatherv(s, 1, MPI_INT, r, &one, NULL, MPI_INT, MPI_COMM_SELF), MPI_ERR_ARG);
    }
    CHECK_CLASS(MPI_Allgather(s, 3, MPI_INT, r, 2, MPI_INT, MPI_COMM_SELF), MPI_ERR_TRUNCATE);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int ns[] = {0, 1, 7, 3001};
    for (int k = 0; k < 4; k++)
        for (int inplace = 0; inplace < 2; inplace++)
            allgather_ints(ns[k], inplace, 0);
    for (int f = 1; f < 4; f++)
        for (int k = 1; k < 4; k++)
            allgather_ints(ns[k], (f + k) % 2, f);
    for (int f = 0; f < 2; f++) {
        allgatherv_case(0, f, f);
        allgatherv_case(1, 1 - f, f);
    }
    derived_case();
    if (size >= 2)
        inter_case();
    errors();
    MPI_Finalize();
    return 0;
}
