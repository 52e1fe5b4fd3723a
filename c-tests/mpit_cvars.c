/* oxmpi-test: ranks=1,2,4,5 timeout=60 mpich=skip */
/* MPI_T control variables: enumerate them (name lookups round-trip, enums list their items),
   read the eager limit, refuse writes to constants, force the gather algorithm to "linear"
   through OXMPI_GATHER_ALGORITHM and see it applied (each non-root sends exactly one collective
   message, to the root: the monitoring arrays show the algorithm), categories. */
#include "oxtest.h"

static int find_item(MPI_T_enum e, const char *want)
{
    int num, i, value, len;
    char name[64];
    T_OK(MPI_T_enum_get_info(e, &num, NULL, NULL));
    for (i = 0; i < num; i++) {
        len = sizeof name;
        T_OK(MPI_T_enum_get_item(e, i, &value, name, &len));
        if (strcmp(name, want) == 0)
            return value;
    }
    T_ERR(MPI_T_enum_get_item(e, num, &value, name, &len), MPI_T_ERR_INVALID_ITEM);
    return -1;
}

int main(int argc, char **argv)
{
    int provided, rank, size, n, i, idx, count, v, ncat;
    char name[128], desc[512];
    MPI_T_cvar_handle h;
    MPI_T_enum e = MPI_T_ENUM_NULL;

    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    T_OK(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided));
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);

    T_OK(MPI_T_cvar_get_num(&n));
    CHECK(n >= 12, "%d cvars", n);
    for (i = 0; i < n; i++) {
        int nl = sizeof name, dl = sizeof desc, verb, bind, scope, back = -1;
        MPI_Datatype dt;
        MPI_T_enum en;
        T_OK(MPI_T_cvar_get_info(i, name, &nl, &verb, &dt, &en, desc, &dl, &bind, &scope));
        CHECK(nl == (int)strlen(name) + 1 && dl == (int)strlen(desc) + 1, "lengths of %s", name);
        CHECK(dt == MPI_INT && bind == MPI_T_BIND_NO_OBJECT, "%s: type or binding", name);
        T_OK(MPI_T_cvar_get_index(name, &back));
        CHECK(back == i, "get_index(%s) = %d, not %d", name, back, i);
        if (en != MPI_T_ENUM_NULL)
            CHECK(find_item(en, "auto") == 0 || strcmp(name, "OXMPI_WAIT") == 0, "%s has no auto", name);
    }
    T_ERR(MPI_T_cvar_get_info(n, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL), MPI_T_ERR_INVALID_INDEX);
    T_ERR(MPI_T_cvar_get_index("OXMPI_NO_SUCH", &idx), MPI_T_ERR_INVALID_NAME);

    /* The eager limit: readable, constant. */
    T_OK(MPI_T_cvar_get_index("OXMPI_EAGER_LIMIT", &idx));
    T_OK(MPI_T_cvar_handle_alloc(idx, NULL, &h, &count));
    CHECK(count == 1, "count %d", count);
    T_OK(MPI_T_cvar_read(h, &v));
    CHECK(v > 0, "eager limit %d", v);
    T_ERR(MPI_T_cvar_write(h, &v), MPI_T_ERR_CVAR_SET_NEVER);
    T_OK(MPI_T_cvar_handle_free(&h));
    CHECK(h == MPI_T_CVAR_HANDLE_NULL, "handle not nulled");

    /* Force the gather algorithm. */
    T_OK(MPI_T_cvar_get_index("OXMPI_GATHER_ALGORITHM", &idx));
    T_OK(MPI_T_cvar_get_info(idx, NULL, NULL, NULL, NULL, &e, NULL, NULL, NULL, NULL));
    CHECK(e != MPI_T_ENUM_NULL, "no enum");
    v = find_item(e, "linear");
    CHECK(v > 0, "no linear item");
    T_OK(MPI_T_cvar_handle_alloc(idx, NULL, &h, &count));
    {
        int bad = 1000, back;
        T_ERR(MPI_T_cvar_write(h, &bad), MPI_T_ERR_INVALID);
        T_OK(MPI_T_cvar_write(h, &v));
        T_OK(MPI_T_cvar_read(h, &back));
        CHECK(back == v, "read back %d, wrote %d", back, v);
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    {
        MPI_T_pvar_session s;
        MPI_T_pvar_handle ph;
        MPI_Comm w = MPI_COMM_WORLD;
        int pi, sendv = rank, *all = malloc(sizeof(int) * size);
        unsigned long long *a = malloc(sizeof(*a) * size), *b = malloc(sizeof(*b) * size);
        T_OK(MPI_T_pvar_get_index("coll_monitoring_messages_count", MPI_T_PVAR_CLASS_SIZE, &pi));
        T_OK(MPI_T_pvar_session_create(&s));
        T_OK(MPI_T_pvar_handle_alloc(s, pi, &w, &ph, &count));
        T_OK(MPI_T_pvar_start(s, ph));
        T_OK(MPI_T_pvar_read(s, ph, a));
        MPI_OK(MPI_Gather(&sendv, 1, MPI_INT, all, 1, MPI_INT, 0, MPI_COMM_WORLD));
        T_OK(MPI_T_pvar_read(s, ph, b));
        for (i = 0; i < size; i++) {
            unsigned long long want = (rank != 0 && i == 0) ? 1 : 0;
            CHECK(b[i] - a[i] == want, "linear gather: rank %d sent %llu messages to %d, expected %llu", rank, b[i] - a[i], i, want);
        }
        if (rank == 0)
            for (i = 0; i < size; i++)
                CHECK(all[i] == i, "gathered %d at %d", all[i], i);
        T_OK(MPI_T_pvar_stop(s, ph));
        T_OK(MPI_T_pvar_session_free(&s));
        free(all);
        free(a);
        free(b);
    }
    /* Back to auto once every rank is past the gather: the value is all-equal scope (and in
       threads mode one setting of the process, shared by its ranks). */
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    v = 0;
    T_OK(MPI_T_cvar_write(h, &v));
    T_OK(MPI_T_cvar_handle_free(&h));

    /* Categories list valid variables. */
    T_OK(MPI_T_category_get_num(&ncat));
    CHECK(ncat >= 1, "%d categories", ncat);
    for (i = 0; i < ncat; i++) {
        int nc, np, nsub, back, nl = sizeof name, ids[64], k;
        T_OK(MPI_T_category_get_info(i, name, &nl, NULL, NULL, &nc, &np, &nsub));
        T_OK(MPI_T_category_get_index(name, &back));
        CHECK(back == i, "category %s", name);
        T_OK(MPI_T_category_get_cvars(i, 64, ids));
        for (k = 0; k < nc && k < 64; k++)
            CHECK(ids[k] >= 0 && ids[k] < n, "cvar index %d", ids[k]);
    }
#if MPI_VERSION >= 4 /* events: not in Open MPI 4.1's mpi.h (c-tests/run.sh --ompi-abi) */
    T_OK(MPI_T_event_get_num(&v));
    CHECK(v == 0, "%d events", v);
#endif
    T_OK(MPI_T_finalize());
    MPI_OK(MPI_Finalize());
    if (rank == 0)
        printf("mpit_cvars: OK\n");
    return 0;
}
