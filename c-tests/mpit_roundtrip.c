/* oxmpi-test: ranks=1,2 timeout=60 mpich=skip */
/* MPI_T round trips in whatever ABI the program was built for (MPICH's, Open MPI 4.1's through
   c-tests/run.sh --ompi-abi, the MPI-5 standard's through --mpi-abi), hard-coding no value: every
   verbosity, binding, scope and pvar class the library returns is one of this mpi.h's constants
   and goes back in (MPI_T_pvar_get_index with the class read finds the same variable); every
   datatype returned is a usable predefined datatype; every variable can be allocated (bound to
   MPI_COMM_WORLD when it binds a communicator), read, and freed; MPI_T_PVAR_ALL_HANDLES starts
   and stops a session; categories enumerate; error codes are this mpi.h's; under MPI 4 headers,
   the event functions (no events are defined) report this mpi.h's codes. */
#include "oxtest.h"

static int in_set(int v, const int *set, int n)
{
    int i;
    for (i = 0; i < n; i++)
        if (set[i] == v)
            return 1;
    return 0;
}

static const int verbosities[] = {MPI_T_VERBOSITY_USER_BASIC,   MPI_T_VERBOSITY_USER_DETAIL,
                                  MPI_T_VERBOSITY_USER_ALL,     MPI_T_VERBOSITY_TUNER_BASIC,
                                  MPI_T_VERBOSITY_TUNER_DETAIL, MPI_T_VERBOSITY_TUNER_ALL,
                                  MPI_T_VERBOSITY_MPIDEV_BASIC, MPI_T_VERBOSITY_MPIDEV_DETAIL,
                                  MPI_T_VERBOSITY_MPIDEV_ALL};
static const int binds[] = {MPI_T_BIND_NO_OBJECT,   MPI_T_BIND_MPI_COMM,       MPI_T_BIND_MPI_DATATYPE,
                            MPI_T_BIND_MPI_ERRHANDLER, MPI_T_BIND_MPI_FILE,    MPI_T_BIND_MPI_GROUP,
                            MPI_T_BIND_MPI_OP,      MPI_T_BIND_MPI_REQUEST,    MPI_T_BIND_MPI_WIN,
                            MPI_T_BIND_MPI_MESSAGE, MPI_T_BIND_MPI_INFO};
static const int scopes[] = {MPI_T_SCOPE_CONSTANT, MPI_T_SCOPE_READONLY, MPI_T_SCOPE_LOCAL, MPI_T_SCOPE_GROUP,
                             MPI_T_SCOPE_GROUP_EQ, MPI_T_SCOPE_ALL,      MPI_T_SCOPE_ALL_EQ};
static const int classes[] = {MPI_T_PVAR_CLASS_STATE,         MPI_T_PVAR_CLASS_LEVEL,
                              MPI_T_PVAR_CLASS_SIZE,          MPI_T_PVAR_CLASS_PERCENTAGE,
                              MPI_T_PVAR_CLASS_HIGHWATERMARK, MPI_T_PVAR_CLASS_LOWWATERMARK,
                              MPI_T_PVAR_CLASS_COUNTER,       MPI_T_PVAR_CLASS_AGGREGATE,
                              MPI_T_PVAR_CLASS_TIMER,         MPI_T_PVAR_CLASS_GENERIC};
#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* A predefined datatype the library returned: usable, and one a buffer can be sized from. */
static int type_size(MPI_Datatype dt, const char *what)
{
    int sz = -1;
    CHECK(dt != MPI_DATATYPE_NULL, "%s: MPI_DATATYPE_NULL", what);
    MPI_OK(MPI_Type_size(dt, &sz));
    CHECK(sz > 0 && sz <= 16, "%s: datatype of %d bytes", what, sz);
    CHECK(dt == MPI_INT || dt == MPI_UNSIGNED || dt == MPI_UNSIGNED_LONG || dt == MPI_UNSIGNED_LONG_LONG ||
              dt == MPI_COUNT || dt == MPI_DOUBLE || dt == MPI_CHAR,
          "%s: a datatype MPI_T does not allow", what);
    return sz;
}

static void check_enum(MPI_T_enum e, const char *what)
{
    int num = -1, nl = 0, k;
    char name[256];
    if (e == MPI_T_ENUM_NULL)
        return;
    T_OK(MPI_T_enum_get_info(e, &num, NULL, &nl));
    CHECK(num > 0 && nl > 1, "%s: enumeration of %d items, name length %d", what, num, nl);
    for (k = 0; k < num; k++) {
        int v, l = sizeof name;
        T_OK(MPI_T_enum_get_item(e, k, &v, name, &l));
        CHECK(l > 1, "%s: item %d unnamed", what, k);
    }
    T_ERR(MPI_T_enum_get_item(e, num, NULL, NULL, NULL), MPI_T_ERR_INVALID_ITEM);
}

int main(int argc, char **argv)
{
    int provided, rank, n, i, ncat, tried = 0;
    char name[256];
    unsigned char buf[64 * 16];
    MPI_Comm world = MPI_COMM_WORLD;
    MPI_T_pvar_session ses;

    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    T_OK(MPI_T_init_thread(MPI_THREAD_SERIALIZED, &provided));
    CHECK(provided == MPI_THREAD_SINGLE || provided == MPI_THREAD_FUNNELED || provided == MPI_THREAD_SERIALIZED ||
              provided == MPI_THREAD_MULTIPLE,
          "provided %d is no thread level", provided);

    /* Control variables. */
    T_OK(MPI_T_cvar_get_num(&n));
    CHECK(n > 0, "no control variables");
    for (i = 0; i < n; i++) {
        int nl = sizeof name, verb, bind, scope, back = -1, count = -1;
        MPI_Datatype dt;
        MPI_T_enum e;
        MPI_T_cvar_handle h = MPI_T_CVAR_HANDLE_NULL;
        T_OK(MPI_T_cvar_get_info(i, name, &nl, &verb, &dt, &e, NULL, NULL, &bind, &scope));
        CHECK(in_set(verb, verbosities, N(verbosities)), "cvar %s: verbosity %d", name, verb);
        CHECK(in_set(bind, binds, N(binds)), "cvar %s: binding %d", name, bind);
        CHECK(in_set(scope, scopes, N(scopes)), "cvar %s: scope %d", name, scope);
        T_OK(MPI_T_cvar_get_index(name, &back));
        CHECK(back == i, "cvar %s: index %d back as %d", name, i, back);
        check_enum(e, name);
        if (type_size(dt, name) <= 8 && (bind == MPI_T_BIND_NO_OBJECT || bind == MPI_T_BIND_MPI_COMM)) {
            T_OK(MPI_T_cvar_handle_alloc(i, bind == MPI_T_BIND_MPI_COMM ? (void *)&world : NULL, &h, &count));
            CHECK(h != MPI_T_CVAR_HANDLE_NULL && count > 0, "cvar %s: handle", name);
            if (count <= 64 && dt != MPI_CHAR)
                T_OK(MPI_T_cvar_read(h, buf));
            T_OK(MPI_T_cvar_handle_free(&h));
            CHECK(h == MPI_T_CVAR_HANDLE_NULL, "cvar %s: freed handle not nulled", name);
        }
    }
    T_ERR(MPI_T_cvar_get_info(n, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL), MPI_T_ERR_INVALID_INDEX);
    T_ERR(MPI_T_cvar_get_index("no such control variable", &i), MPI_T_ERR_INVALID_NAME);

    /* Performance variables, all in one session. */
    T_OK(MPI_T_pvar_session_create(&ses));
    CHECK(ses != MPI_T_PVAR_SESSION_NULL, "session");
    T_OK(MPI_T_pvar_get_num(&n));
    CHECK(n > 0, "no performance variables");
    for (i = 0; i < n; i++) {
        int nl = sizeof name, verb, cls, bind, ro, cont, at, back = -1, count = -1, sz;
        MPI_Datatype dt;
        MPI_T_enum e;
        MPI_T_pvar_handle h = MPI_T_PVAR_HANDLE_NULL;
        T_OK(MPI_T_pvar_get_info(i, name, &nl, &verb, &cls, &dt, &e, NULL, NULL, &bind, &ro, &cont, &at));
        CHECK(in_set(verb, verbosities, N(verbosities)), "pvar %s: verbosity %d", name, verb);
        CHECK(in_set(cls, classes, N(classes)), "pvar %s: class %d", name, cls);
        CHECK(in_set(bind, binds, N(binds)), "pvar %s: binding %d", name, bind);
        T_OK(MPI_T_pvar_get_index(name, cls, &back));
        CHECK(back == i, "pvar %s: index %d back as %d (class %d)", name, i, back, cls);
        check_enum(e, name);
        sz = type_size(dt, name);
        if (bind != MPI_T_BIND_NO_OBJECT && bind != MPI_T_BIND_MPI_COMM)
            continue;
        T_OK(MPI_T_pvar_handle_alloc(ses, i, bind == MPI_T_BIND_MPI_COMM ? (void *)&world : NULL, &h, &count));
        CHECK(h != MPI_T_PVAR_HANDLE_NULL && h != MPI_T_PVAR_ALL_HANDLES, "pvar %s: handle", name);
        CHECK(count >= 0, "pvar %s: count %d", name, count);
        tried++;
        if (count > 0 && (size_t)count * (size_t)sz <= sizeof buf && dt != MPI_CHAR)
            T_OK(MPI_T_pvar_read(ses, h, buf));
        /* A handle of this session: MPI_T_PVAR_ALL_HANDLES reaches it, a NULL one is invalid. */
        T_ERR(MPI_T_pvar_read(ses, MPI_T_PVAR_HANDLE_NULL, buf), MPI_T_ERR_INVALID_HANDLE);
        T_OK(MPI_T_pvar_handle_free(ses, &h));
        CHECK(h == MPI_T_PVAR_HANDLE_NULL, "pvar %s: freed handle not nulled", name);
    }
    CHECK(tried > 0, "no performance variable could be allocated");
    T_ERR(MPI_T_pvar_get_info(n, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
          MPI_T_ERR_INVALID_INDEX);
    T_ERR(MPI_T_pvar_get_index("no such performance variable", MPI_T_PVAR_CLASS_COUNTER, &i), MPI_T_ERR_INVALID_NAME);
    /* Every handle at once: an empty session starts and stops. */
    T_OK(MPI_T_pvar_start(ses, MPI_T_PVAR_ALL_HANDLES));
    T_OK(MPI_T_pvar_stop(ses, MPI_T_PVAR_ALL_HANDLES));
    T_OK(MPI_T_pvar_session_free(&ses));
    CHECK(ses == MPI_T_PVAR_SESSION_NULL, "freed session not nulled");
    T_ERR(MPI_T_pvar_start(MPI_T_PVAR_SESSION_NULL, MPI_T_PVAR_ALL_HANDLES), MPI_T_ERR_INVALID_SESSION);

    /* Categories. */
    T_OK(MPI_T_category_get_num(&ncat));
    CHECK(ncat > 0, "no categories");
    T_OK(MPI_T_cvar_get_num(&n));
    for (i = 0; i < ncat; i++) {
        int nc, np, nsub, back = -1, nl = sizeof name, ids[256], k, npv;
        T_OK(MPI_T_category_get_info(i, name, &nl, NULL, NULL, &nc, &np, &nsub));
        T_OK(MPI_T_category_get_index(name, &back));
        CHECK(back == i, "category %s: index %d back as %d", name, i, back);
        T_OK(MPI_T_category_get_cvars(i, 256, ids));
        for (k = 0; k < nc && k < 256; k++)
            CHECK(ids[k] >= 0 && ids[k] < n, "category %s: cvar index %d", name, ids[k]);
        T_OK(MPI_T_pvar_get_num(&npv));
        T_OK(MPI_T_category_get_pvars(i, 256, ids));
        for (k = 0; k < np && k < 256; k++)
            CHECK(ids[k] >= 0 && ids[k] < npv, "category %s: pvar index %d", name, ids[k]);
        T_OK(MPI_T_category_get_categories(i, 256, ids));
        for (k = 0; k < nsub && k < 256; k++)
            CHECK(ids[k] >= 0 && ids[k] < ncat, "category %s: subcategory %d", name, ids[k]);
    }
    T_ERR(MPI_T_category_get_info(ncat, NULL, NULL, NULL, NULL, NULL, NULL, NULL), MPI_T_ERR_INVALID_INDEX);
    T_OK(MPI_T_category_changed(&n));

#if MPI_VERSION >= 4
    /* Events and sources (MPI 4.0): oxmpi defines none; the calls that would register the
       program's callbacks report the registration invalid. */
    {
        int ne = -1, ns = -1;
        MPI_T_event_registration reg = (MPI_T_event_registration)&ne;
        T_OK(MPI_T_event_get_num(&ne));
        CHECK(ne == 0, "%d events", ne);
        T_OK(MPI_T_source_get_num(&ns));
        CHECK(ns == 0, "%d sources", ns);
        T_ERR(MPI_T_event_handle_alloc(0, NULL, MPI_INFO_NULL, &reg), MPI_T_ERR_INVALID_INDEX);
        T_ERR(MPI_T_event_register_callback(reg, MPI_T_CB_REQUIRE_NONE, MPI_INFO_NULL, NULL, NULL),
              MPI_T_ERR_INVALID_HANDLE);
        T_ERR(MPI_T_event_set_dropped_handler(reg, NULL), MPI_T_ERR_INVALID_HANDLE);
        T_ERR(MPI_T_event_handle_free(reg, NULL, NULL), MPI_T_ERR_INVALID_HANDLE);
        T_ERR(MPI_T_event_get_index("no such event", &ne), MPI_T_ERR_INVALID_NAME);
    }
#endif

    T_OK(MPI_T_finalize());
    MPI_OK(MPI_Finalize());
    if (rank == 0)
        printf("mpit_roundtrip: OK\n");
    return 0;
}
