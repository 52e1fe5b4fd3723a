/* oxmpi-test: ranks=1,2,3,4,5 timeout=60 mpich=skip env=- env=OXMPI_MONITORING=1 */
/* MPI_T monitoring variables (Open MPI's names): rank i sends i+1 messages of 100 bytes to rank
   i+1, and the per-peer arrays read exactly that; a bcast shows in the collective arrays and the
   o2a counter, not in the point-to-point ones; reading on a split communicator; MPI_T error paths
   (not initialised, bad index, wrong class, handle of another session, read-only variables,
   double start, string truncation). */
#include "oxtest.h"
#include <unistd.h>

static int pvar(const char *name, int cls)
{
    int i = -1;
    T_OK(MPI_T_pvar_get_index(name, cls, &i));
    return i;
}

int main(int argc, char **argv)
{
    int provided, rank, size, n, i, count;
    MPI_T_pvar_session s, s2;
    MPI_T_pvar_handle pc, pb, cc, o2a, sub;
    unsigned long long v[64], b[64], cv[64], cv2[64], one;
    char buf[100];

    /* Before MPI_T_init_thread nothing works; finalize without init fails. */
    T_ERR(MPI_T_pvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    T_ERR(MPI_T_finalize(), MPI_T_ERR_NOT_INITIALIZED);
    /* MPI_T before MPI_Init, reference counted. */
    T_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    T_OK(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided));
    T_OK(MPI_T_pvar_get_num(&n));
    CHECK(n >= 15, "%d pvars", n);
    T_OK(MPI_T_finalize());
    T_OK(MPI_T_pvar_get_num(&n));

    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));

    /* Lookups: the class must match. */
    T_ERR(MPI_T_pvar_get_index("pml_monitoring_messages_count", MPI_T_PVAR_CLASS_COUNTER, &i), MPI_T_ERR_INVALID_NAME);
    T_ERR(MPI_T_pvar_get_index("no_such_variable", MPI_T_PVAR_CLASS_SIZE, &i), MPI_T_ERR_INVALID_NAME);
    T_ERR(MPI_T_pvar_get_info(n, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL), MPI_T_ERR_INVALID_INDEX);
    T_ERR(MPI_T_pvar_get_info(-1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL), MPI_T_ERR_INVALID_INDEX);
    {
        int idx = pvar("coll_monitoring_a2a_count", MPI_T_PVAR_CLASS_COUNTER), len, cls, dt, bind, ro, cont, at;
        MPI_Datatype d;
        /* length query, then truncation: 4 characters and the NUL, len = 5 */
        len = 0;
        T_OK(MPI_T_pvar_get_info(idx, NULL, &len, NULL, &cls, &d, NULL, NULL, NULL, &bind, &ro, &cont, &at));
        CHECK(len == (int)strlen("coll_monitoring_a2a_count") + 1, "len %d", len);
        CHECK(cls == MPI_T_PVAR_CLASS_COUNTER && d == MPI_UNSIGNED_LONG_LONG && bind == MPI_T_BIND_MPI_COMM, "info");
        len = 5;
        memset(buf, 'x', sizeof buf);
        T_OK(MPI_T_pvar_get_info(idx, buf, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
        CHECK(len == 5 && strcmp(buf, "coll") == 0, "truncated to '%s' len %d", buf, len);
        len = sizeof buf;
        T_OK(MPI_T_pvar_get_info(idx, buf, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
        CHECK(len == (int)strlen(buf) + 1 && strcmp(buf, "coll_monitoring_a2a_count") == 0, "name '%s'", buf);
        dt = 0;
        (void)dt;
    }

    T_OK(MPI_T_pvar_session_create(&s));
    T_OK(MPI_T_pvar_session_create(&s2));
    {
        MPI_Comm w = MPI_COMM_WORLD;
        T_OK(MPI_T_pvar_handle_alloc(s, pvar("pml_monitoring_messages_count", MPI_T_PVAR_CLASS_SIZE), &w, &pc, &count));
        CHECK(count == size, "count %d", count);
        T_OK(MPI_T_pvar_handle_alloc(s, pvar("pml_monitoring_messages_size", MPI_T_PVAR_CLASS_SIZE), &w, &pb, &count));
        T_OK(MPI_T_pvar_handle_alloc(s, pvar("coll_monitoring_messages_count", MPI_T_PVAR_CLASS_SIZE), &w, &cc, &count));
        T_OK(MPI_T_pvar_handle_alloc(s, pvar("coll_monitoring_o2a_count", MPI_T_PVAR_CLASS_COUNTER), &w, &o2a, &count));
        CHECK(count == 1, "o2a count %d", count);
    }
    /* Errors on handles: other session, ALL_HANDLES read, read-only write and reset. */
    T_ERR(MPI_T_pvar_read(s2, pc, v), MPI_T_ERR_INVALID_HANDLE);
    T_ERR(MPI_T_pvar_read(s, MPI_T_PVAR_ALL_HANDLES, v), MPI_T_ERR_INVALID_HANDLE);
    T_ERR(MPI_T_pvar_write(s, pc, v), MPI_T_ERR_PVAR_NO_WRITE);
    T_ERR(MPI_T_pvar_reset(s, pc), MPI_T_ERR_PVAR_NO_WRITE);
    T_ERR(MPI_T_pvar_readreset(s, pc, v), MPI_T_ERR_PVAR_NO_WRITE);
    T_ERR(MPI_T_pvar_stop(s, pc), MPI_T_ERR_PVAR_NO_STARTSTOP);

    T_OK(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES));
    T_ERR(MPI_T_pvar_start(s, pc), MPI_T_ERR_PVAR_NO_STARTSTOP);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    /* The pattern: rank i sends i+1 messages of 100 bytes to rank i+1. */
    memset(buf, rank, sizeof buf);
    if (rank + 1 < size)
        for (i = 0; i <= rank; i++)
            MPI_OK(MPI_Send(buf, 100, MPI_BYTE, rank + 1, 7, MPI_COMM_WORLD));
    if (rank > 0)
        for (i = 0; i < rank; i++)
            MPI_OK(MPI_Recv(buf, 100, MPI_BYTE, rank - 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    T_OK(MPI_T_pvar_read(s, pc, v));
    T_OK(MPI_T_pvar_read(s, pb, b));
    for (i = 0; i < size; i++) {
        unsigned long long want = (i == rank + 1) ? (unsigned long long)rank + 1 : 0;
        CHECK(v[i] == want, "messages to %d: %llu, expected %llu", i, v[i], want);
        CHECK(b[i] == 100 * want, "bytes to %d: %llu, expected %llu", i, b[i], 100 * want);
    }

    /* A bcast: in the collective arrays and the o2a counter of the root, not in p2p. */
    T_OK(MPI_T_pvar_read(s, cc, cv));
    T_OK(MPI_T_pvar_read(s, o2a, &one));
    CHECK(one == 0, "o2a before the bcast: %llu", one);
    MPI_OK(MPI_Bcast(buf, 100, MPI_BYTE, 0, MPI_COMM_WORLD));
    T_OK(MPI_T_pvar_read(s, cc, cv2));
    T_OK(MPI_T_pvar_read(s, o2a, &one));
    CHECK(one == (rank == 0 ? 1u : 0u), "o2a after the bcast: %llu", one);
    {
        unsigned long long mine = 0, all = 0;
        for (i = 0; i < size; i++)
            mine += cv2[i] - cv[i];
        if (rank == 0 && size > 1)
            CHECK(mine > 0, "the root sent no collective message");
        T_OK(MPI_T_pvar_read(s, pc, b));
        for (i = 0; i < size; i++)
            CHECK(b[i] == v[i], "p2p to %d changed by the bcast: %llu -> %llu", i, v[i], b[i]);
        MPI_OK(MPI_Allreduce(&mine, &all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
        CHECK(all >= (unsigned long long)size - 1, "bcast of %d ranks sent %llu messages", size, all);
    }
    /* o2a is a counter: reset, readreset */
    T_OK(MPI_T_pvar_readreset(s, o2a, &one));
    T_OK(MPI_T_pvar_read(s, o2a, &one));
    CHECK(one == 0, "o2a after readreset: %llu", one);

    /* Stop: the values freeze. */
    T_OK(MPI_T_pvar_stop(s, MPI_T_PVAR_ALL_HANDLES));
    T_ERR(MPI_T_pvar_stop(s, pc), MPI_T_ERR_PVAR_NO_STARTSTOP);
    if (rank + 1 < size)
        MPI_OK(MPI_Send(buf, 1, MPI_BYTE, rank + 1, 8, MPI_COMM_WORLD));
    if (rank > 0)
        MPI_OK(MPI_Recv(buf, 1, MPI_BYTE, rank - 1, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    T_OK(MPI_T_pvar_read(s, pc, b));
    for (i = 0; i < size; i++)
        CHECK(b[i] == v[i], "stopped handle changed: to %d %llu -> %llu", i, v[i], b[i]);

    /* On a split communicator: indexed by its ranks, values of those members. */
    {
        MPI_Comm half;
        int hs, hr, *members;
        MPI_Group wg, hg;
        MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half));
        MPI_OK(MPI_Comm_size(half, &hs));
        MPI_OK(MPI_Comm_rank(half, &hr));
        T_OK(MPI_T_pvar_handle_alloc(s, pvar("pml_monitoring_messages_count", MPI_T_PVAR_CLASS_SIZE), &half, &sub, &count));
        CHECK(count == hs, "count %d on a communicator of %d", count, hs);
        T_OK(MPI_T_pvar_start(s, sub));
        T_OK(MPI_T_pvar_read(s, sub, cv));
        T_OK(MPI_T_pvar_start(s, pc));
        T_OK(MPI_T_pvar_read(s, pc, v));
        members = malloc(sizeof(int) * hs);
        for (i = 0; i < hs; i++)
            members[i] = i;
        MPI_OK(MPI_Comm_group(half, &hg));
        MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
        {
            int *w = malloc(sizeof(int) * hs);
            MPI_OK(MPI_Group_translate_ranks(hg, hs, members, wg, w));
            for (i = 0; i < hs; i++)
                CHECK(cv[i] == v[w[i]], "member %d (world %d): %llu, world array says %llu", i, w[i], cv[i], v[w[i]]);
            free(w);
        }
        free(members);
        T_OK(MPI_T_pvar_stop(s, sub));
        T_OK(MPI_T_pvar_stop(s, pc));
        T_OK(MPI_T_pvar_handle_free(s, &sub));
        CHECK(sub == MPI_T_PVAR_HANDLE_NULL, "freed handle not nulled");
        MPI_OK(MPI_Group_free(&hg));
        MPI_OK(MPI_Group_free(&wg));
        MPI_OK(MPI_Comm_free(&half));
        (void)hr;
    }

    /* pml_monitoring_flush: write a name, stop: <name>.<rank>.prof in Open MPI's format, with
       this rank's point-to-point line to rank+1 (the counters are then reset). */
    {
        MPI_T_pvar_handle fh;
        long job = (long)getpid();
        char fname[200], path[260], line[512];
        FILE *f;
        int found = 0;
        MPI_OK(MPI_Bcast(&job, 1, MPI_LONG, 0, MPI_COMM_WORLD));
        snprintf(fname, sizeof fname, "/tmp/oxmpi_mpit_flush_%ld", job);
        T_OK(MPI_T_pvar_handle_alloc(s, pvar("pml_monitoring_flush", MPI_T_PVAR_CLASS_GENERIC), NULL, &fh, &count));
        T_OK(MPI_T_pvar_start(s, fh));
        T_OK(MPI_T_pvar_write(s, fh, fname));
        T_OK(MPI_T_pvar_stop(s, fh));
        snprintf(path, sizeof path, "%s.%d.prof", fname, rank);
        f = fopen(path, "r");
        CHECK(f != NULL, "no flush file %s", path);
        while (fgets(line, sizeof line, f)) {
            int me, peer;
            unsigned long long nb, nm;
            if (sscanf(line, "E\t%d\t%d\t%llu bytes\t%llu msgs sent", &me, &peer, &nb, &nm) == 4 && peer == rank + 1) {
                /* The 1-byte message went while no handle was started: recorded only if
                   monitoring is on for the whole run (OXMPI_MONITORING=1). */
                const char *env = getenv("OXMPI_MONITORING");
                unsigned long long extra = (env && strcmp(env, "1") == 0) ? 1 : 0;
                CHECK(me == rank && nm == (unsigned long long)rank + 1 + extra && nb == 100ull * (rank + 1) + extra, "flush line: %s", line);
                found = 1;
            }
        }
        fclose(f);
        remove(path);
        CHECK(found == (rank + 1 < size), "flush file without the line to rank %d", rank + 1);
        T_OK(MPI_T_pvar_handle_free(s, &fh));
    }

    T_OK(MPI_T_pvar_handle_free(s, &pc));
    T_ERR(MPI_T_pvar_read(s, pc, v), MPI_T_ERR_INVALID_HANDLE);
    T_OK(MPI_T_pvar_session_free(&s));
    T_ERR(MPI_T_pvar_read(s, pb, v), MPI_T_ERR_INVALID_SESSION);
    T_OK(MPI_T_pvar_session_free(&s2));
    T_OK(MPI_T_finalize());
    MPI_OK(MPI_Finalize());
    /* MPI_T outlives MPI */
    T_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    T_OK(MPI_T_finalize());
    if (rank == 0)
        printf("mpit_monitoring: OK\n");
    return 0;
}
