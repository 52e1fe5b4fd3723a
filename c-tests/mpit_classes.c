/* oxmpi-test: ranks=2,3,4 timeout=90 mpich=skip */
/* MPI_T performance variables of every class the standard defines (MPI 4.1 section 15.3.7),
   read with each class's rules:
   - STATE oxmpi_monitoring_state follows a started monitoring handle;
   - LEVEL p2p_unexpected_messages rises when messages arrive before their receives, falls after;
     HIGH/LOWWATERMARK keep the extremes while started, restart at reset, freeze at stop;
   - PERCENTAGE p2p_eager_fraction is a double in [0, 1], strictly inside after small and large sends;
   - TIMER p2p_wait_blocked_ns grows while a rank waits for a late message;
   - COUNTER clairvoyant_schedules_built / clairvoyant_cache_hits count forced-Clairvoyant reduces
     of 1 MiB; the OXMPI_CLV_SEGMENTS control variable changes the number of transfers they make
     (coll_monitoring_messages_count);
   - a persistent MPI_Bcast_init counts in coll_monitoring_o2a_count once per MPI_Start. */
#include "oxtest.h"
#include <time.h>

static MPI_T_pvar_session ses;

static MPI_T_pvar_handle pvar(const char *name, int cls, void *obj, int *count)
{
    int idx, n;
    MPI_T_pvar_handle h;
    T_OK(MPI_T_pvar_get_index(name, cls, &idx));
    int rc = MPI_T_pvar_handle_alloc(ses, idx, obj, &h, count ? count : &n);
    CHECK(rc == MPI_SUCCESS, "MPI_T_pvar_handle_alloc(%s) returned %d", name, rc);
    return h;
}

static unsigned long long get(MPI_T_pvar_handle h)
{
    unsigned long long v = 0;
    T_OK(MPI_T_pvar_read(ses, h, &v));
    return v;
}

static void set_cvar(const char *name, int v)
{
    int idx, n;
    MPI_T_cvar_handle h;
    T_OK(MPI_T_cvar_get_index(name, &idx));
    T_OK(MPI_T_cvar_handle_alloc(idx, NULL, &h, &n));
    T_OK(MPI_T_cvar_write(h, &v));
    T_OK(MPI_T_cvar_handle_free(&h));
}

/* Sum over all ranks of the collective messages sent during one forced-Clairvoyant reduce of
   `count` floats with `segments` segments (0 = automatic). */
static unsigned long long clv_messages(int segments, float *in, float *out, int count, MPI_T_pvar_handle coll, int size)
{
    unsigned long long *a = oxt_malloc(sizeof *a * size), before = 0, after = 0, total;
    int i;
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    set_cvar("OXMPI_CLV_SEGMENTS", segments);
    /* The knob is process-wide in threads mode: every rank sets it before anyone reduces. */
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    T_OK(MPI_T_pvar_read(ses, coll, a));
    for (i = 0; i < size; i++)
        before += a[i];
    MPI_OK(MPI_Reduce(in, out, count, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD));
    T_OK(MPI_T_pvar_read(ses, coll, a));
    for (i = 0; i < size; i++)
        after += a[i];
    MPI_OK(MPI_Allreduce(&(unsigned long long){after - before}, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
    free(a);
    return total;
}

int main(int argc, char **argv)
{
    int provided, rank, size, n, i, cls, count, seen[10] = {0}, state;
    char name[128];
    MPI_Comm world = MPI_COMM_WORLD;

    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    T_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    T_OK(MPI_T_pvar_session_create(&ses));

    /* Every class from STATE (240) to GENERIC (249) has a variable. */
    T_OK(MPI_T_pvar_get_num(&n));
    for (i = 0; i < n; i++) {
        int nl = sizeof name, ro, cont, at, bind, verb;
        MPI_Datatype dt;
        MPI_T_enum e;
        T_OK(MPI_T_pvar_get_info(i, name, &nl, &verb, &cls, &dt, &e, NULL, NULL, &bind, &ro, &cont, &at));
        CHECK(cls >= MPI_T_PVAR_CLASS_STATE && cls <= MPI_T_PVAR_CLASS_GENERIC, "%s: class %d", name, cls);
        seen[cls - MPI_T_PVAR_CLASS_STATE] = 1;
        if (cls == MPI_T_PVAR_CLASS_STATE)
            CHECK(dt == MPI_INT && e != MPI_T_ENUM_NULL && cont, "%s: a state is a continuous enum int", name);
        if (cls == MPI_T_PVAR_CLASS_PERCENTAGE)
            CHECK(dt == MPI_DOUBLE, "%s: a percentage is a double", name);
    }
    for (i = 0; i < 10; i++)
        CHECK(seen[i], "no performance variable of class %d", MPI_T_PVAR_CLASS_STATE + i);

    /* STATE: recording while a monitoring handle is started. */
    {
        MPI_T_pvar_handle st = pvar("oxmpi_monitoring_state", MPI_T_PVAR_CLASS_STATE, NULL, NULL);
        MPI_T_pvar_handle mon = pvar("pml_monitoring_messages_count", MPI_T_PVAR_CLASS_SIZE, &world, NULL);
        T_ERR(MPI_T_pvar_start(ses, st), MPI_T_ERR_PVAR_NO_STARTSTOP);
        T_ERR(MPI_T_pvar_write(ses, st, &state), MPI_T_ERR_PVAR_NO_WRITE);
        T_OK(MPI_T_pvar_read(ses, st, &state));
        CHECK(state == 0, "monitoring state %d before any handle started", state);
        T_OK(MPI_T_pvar_start(ses, mon));
        T_OK(MPI_T_pvar_read(ses, st, &state));
        CHECK(state == 1, "monitoring state %d with a started handle", state);
        T_OK(MPI_T_pvar_stop(ses, mon));
        T_OK(MPI_T_pvar_read(ses, st, &state));
        CHECK(state == 0, "monitoring state %d after the stop", state);
        T_OK(MPI_T_pvar_handle_free(ses, &mon));
        T_OK(MPI_T_pvar_handle_free(ses, &st));
    }

    /* LEVEL and watermarks: rank 1 sends 5 messages rank 0 has not asked for, then one it has;
       channels are FIFO, so when that one arrives the 5 are in the unexpected queue. */
    {
        MPI_T_pvar_handle lvl = pvar("p2p_unexpected_messages", MPI_T_PVAR_CLASS_LEVEL, NULL, NULL);
        MPI_T_pvar_handle hi = pvar("p2p_unexpected_messages_highwatermark", MPI_T_PVAR_CLASS_HIGHWATERMARK, NULL, NULL);
        MPI_T_pvar_handle lo = pvar("p2p_unexpected_messages_lowwatermark", MPI_T_PVAR_CLASS_LOWWATERMARK, NULL, NULL);
        unsigned long long l0, l1, l2, h, lw, h2;
        int buf[5], go = 0;
        T_ERR(MPI_T_pvar_start(ses, lvl), MPI_T_ERR_PVAR_NO_STARTSTOP);
        T_OK(MPI_T_pvar_start(ses, hi));
        T_OK(MPI_T_pvar_start(ses, lo));
        l0 = get(lvl);
        CHECK(get(hi) >= l0 && get(lo) <= l0, "watermarks start at the level");
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        if (rank == 1) {
            for (i = 0; i < 5; i++)
                MPI_OK(MPI_Send(&i, 1, MPI_INT, 0, 7, MPI_COMM_WORLD));
            MPI_OK(MPI_Send(&go, 1, MPI_INT, 0, 8, MPI_COMM_WORLD));
        } else if (rank == 0) {
            MPI_OK(MPI_Recv(&go, 1, MPI_INT, 1, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            l1 = get(lvl);
            CHECK(l1 >= l0 + 5, "unexpected level %llu, was %llu, after 5 early messages", l1, l0);
            for (i = 0; i < 5; i++)
                MPI_OK(MPI_Recv(&buf[i], 1, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            l2 = get(lvl);
            CHECK(l2 + 5 <= l1 + (unsigned long long)size, "unexpected level %llu after the receives, was %llu", l2, l1);
            h = get(hi);
            CHECK(h >= l1, "high watermark %llu below the level seen %llu", h, l1);
            lw = get(lo);
            CHECK(lw <= l0 && lw <= l2, "low watermark %llu above a level seen (%llu, %llu)", lw, l0, l2);
            /* Watermarks are not atomic: readreset is refused; reset restarts at the level. */
            T_ERR(MPI_T_pvar_readreset(ses, hi, &h2), MPI_T_ERR_PVAR_NO_ATOMIC);
            T_OK(MPI_T_pvar_reset(ses, hi));
            h2 = get(hi);
            CHECK(h2 < h, "high watermark %llu after reset, was %llu", h2, h);
        }
        /* Stopped: the value stays. */
        T_OK(MPI_T_pvar_stop(ses, hi));
        h = get(hi);
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        CHECK(get(hi) == h, "a stopped watermark changed");
        T_OK(MPI_T_pvar_handle_free(ses, &lo));
        T_OK(MPI_T_pvar_handle_free(ses, &hi));
        T_OK(MPI_T_pvar_handle_free(ses, &lvl));
    }

    /* PERCENTAGE: a double fraction of eager sends. */
    {
        MPI_T_pvar_handle pc = pvar("p2p_eager_fraction", MPI_T_PVAR_CLASS_PERCENTAGE, NULL, NULL);
        double f;
        int big = 1 << 18;
        char *b = oxt_malloc(big);
        memset(b, 1, big);
        T_OK(MPI_T_pvar_read(ses, pc, &f));
        CHECK(f >= 0.0 && f <= 1.0, "eager fraction %g", f);
        if (rank < 2) {
            MPI_OK(MPI_Sendrecv_replace(b, 16, MPI_CHAR, 1 - rank, 3, 1 - rank, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            MPI_OK(MPI_Sendrecv_replace(b, big, MPI_CHAR, 1 - rank, 4, 1 - rank, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            T_OK(MPI_T_pvar_read(ses, pc, &f));
            CHECK(f > 0.0 && f < 1.0, "eager fraction %g after an eager and a rendezvous send", f);
        }
        free(b);
        T_OK(MPI_T_pvar_handle_free(ses, &pc));
    }

    /* TIMER: rank 0 waits for a message rank 1 sends 20 ms late. */
    {
        MPI_T_pvar_handle tm = pvar("p2p_wait_blocked_ns", MPI_T_PVAR_CLASS_TIMER, NULL, NULL);
        unsigned long long t0, t1;
        int x = 0;
        CHECK(get(tm) == 0, "a timer starts at 0");
        T_OK(MPI_T_pvar_start(ses, tm));
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        t0 = get(tm);
        if (rank == 1) {
            struct timespec late = {0, 20 * 1000 * 1000};
            nanosleep(&late, NULL);
            MPI_OK(MPI_Send(&x, 1, MPI_INT, 0, 9, MPI_COMM_WORLD));
        } else if (rank == 0) {
            MPI_OK(MPI_Recv(&x, 1, MPI_INT, 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            t1 = get(tm);
            CHECK(t1 > t0, "blocked time %llu did not grow from %llu over a blocking receive", t1, t0);
        }
        T_OK(MPI_T_pvar_stop(ses, tm));
        t1 = get(tm);
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        CHECK(get(tm) == t1, "a stopped timer changed");
        T_OK(MPI_T_pvar_readreset(ses, tm, &t0));
        CHECK(get(tm) == 0, "timer not reset by readreset");
        T_OK(MPI_T_pvar_handle_free(ses, &tm));
    }

    /* COUNTER: forced Clairvoyant reduces of 1 MiB; the segment cvar changes the transfers. */
    {
        MPI_T_pvar_handle built = pvar("clairvoyant_schedules_built", MPI_T_PVAR_CLASS_COUNTER, NULL, NULL);
        MPI_T_pvar_handle hits = pvar("clairvoyant_cache_hits", MPI_T_PVAR_CLASS_COUNTER, NULL, NULL);
        MPI_T_pvar_handle bns = pvar("clairvoyant_build_ns", MPI_T_PVAR_CLASS_TIMER, NULL, NULL);
        MPI_T_pvar_handle err = pvar("clairvoyant_prediction_error_ns", MPI_T_PVAR_CLASS_LEVEL, NULL, NULL);
        MPI_T_pvar_handle coll = pvar("coll_monitoring_messages_count", MPI_T_PVAR_CLASS_SIZE, &world, &count);
        int nf = 1 << 18, idx, k, algo = -1;
        float *in = oxt_malloc(sizeof(float) * nf), *out = oxt_malloc(sizeof(float) * nf);
        unsigned long long m1, m16;
        MPI_T_cvar_handle ch;
        MPI_T_enum e;
        for (i = 0; i < nf; i++)
            in[i] = (float)(rank + i % 7);
        CHECK(count == size, "coll_monitoring_messages_count has %d elements on %d ranks", count, size);
        /* OXMPI_REDUCE_ALGORITHM lists clairvoyant. */
        T_OK(MPI_T_cvar_get_index("OXMPI_REDUCE_ALGORITHM", &idx));
        T_OK(MPI_T_cvar_get_info(idx, NULL, NULL, NULL, NULL, &e, NULL, NULL, NULL, NULL));
        T_OK(MPI_T_enum_get_info(e, &k, NULL, NULL));
        for (i = 0; i < k; i++) {
            int v, nl = sizeof name;
            T_OK(MPI_T_enum_get_item(e, i, &v, name, &nl));
            if (strcmp(name, "clairvoyant") == 0)
                algo = v;
        }
        CHECK(algo > 0, "OXMPI_REDUCE_ALGORITHM has no clairvoyant item");
        T_OK(MPI_T_cvar_handle_alloc(idx, NULL, &ch, &k));
        T_OK(MPI_T_cvar_write(ch, &algo));
        T_OK(MPI_T_pvar_start(ses, built));
        T_OK(MPI_T_pvar_start(ses, hits));
        T_OK(MPI_T_pvar_start(ses, bns));
        T_OK(MPI_T_pvar_start(ses, coll));
        /* The schedule counters are per process (threads mode: all ranks share the cache), so
           every rank starts its handles before any rank builds. */
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        for (k = 0; k < 3; k++)
            MPI_OK(MPI_Reduce(in, out, nf, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD));
        if (rank == 0)
            for (i = 0; i < nf; i++)
                CHECK(out[i] == (float)(size * (size - 1) / 2 + size * (i % 7)), "reduce result at %d", i);
        CHECK(get(built) + get(hits) >= 3, "%llu schedules built and %llu cache hits for 3 reduces", get(built), get(hits));
        CHECK(get(built) >= 1, "no schedule built");
        CHECK(get(bns) > 0, "schedules built in 0 ns");
        (void)get(err);
        /* Segments: N segments take at least N transfers per non-root rank. */
        m1 = clv_messages(1, in, out, nf, coll, size);
        m16 = clv_messages(16, in, out, nf, coll, size);
        CHECK(m16 >= 16ull * (size - 1), "%llu messages with 16 segments on %d ranks", m16, size);
        CHECK(m16 > m1, "%llu messages with 16 segments, %llu with 1", m16, m1);
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        set_cvar("OXMPI_CLV_SEGMENTS", 0);
        algo = 0;
        T_OK(MPI_T_cvar_write(ch, &algo));
        T_OK(MPI_T_cvar_handle_free(&ch));
        T_OK(MPI_T_pvar_stop(ses, coll));
        T_OK(MPI_T_pvar_handle_free(ses, &coll));
        T_OK(MPI_T_pvar_handle_free(ses, &err));
        T_OK(MPI_T_pvar_handle_free(ses, &bns));
        T_OK(MPI_T_pvar_handle_free(ses, &hits));
        T_OK(MPI_T_pvar_handle_free(ses, &built));
        free(in);
        free(out);
    }

#if MPI_VERSION >= 4 /* MPI_Bcast_init: not in Open MPI 4.1's mpi.h (c-tests/run.sh --ompi-abi) */
    /* A persistent bcast counts once per start (at the root). */
    {
        MPI_T_pvar_handle o2a;
        MPI_Request req;
        int v = 0, k;
        unsigned long long c;
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        o2a = pvar("coll_monitoring_o2a_count", MPI_T_PVAR_CLASS_COUNTER, &world, NULL);
        T_OK(MPI_T_pvar_start(ses, o2a));
        MPI_OK(MPI_Bcast_init(&v, 1, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
        CHECK(get(o2a) == 0, "a persistent bcast counted at its creation");
        for (k = 0; k < 3; k++) {
            MPI_OK(MPI_Start(&req));
            MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        }
        c = get(o2a);
        CHECK(c == (rank == 0 ? 3u : 0u), "rank %d: persistent bcast started 3 times counted %llu", rank, c);
        MPI_OK(MPI_Request_free(&req));
        T_OK(MPI_T_pvar_stop(ses, o2a));
        T_OK(MPI_T_pvar_handle_free(ses, &o2a));
    }
#endif

    T_OK(MPI_T_pvar_session_free(&ses));
    T_OK(MPI_T_finalize());
    MPI_OK(MPI_Finalize());
    if (rank == 0)
        printf("mpit_classes: OK\n");
    return 0;
}
