/* Work-farm demo: an exact integer Riemann sum, S = sum of i^3 for i in [0, N), cut into
   sub-intervals of P points that the farm computes. The closed form (N(N-1)/2)^2 (mod 2^64, as
   the sum wraps) checks the result, with every item delivered once and items reassigned if and
   only if a rank was lost; exit status 1 otherwise. Prints the result, the items each rank computed and how
   many items were reassigned after a rank was lost.

   mpiexec -n 5 demo_integrate [farm options] [--items M] [--points P] [--sleep-us U] [--cpu]
           [--quiet] [--die-rank R --die-after K]
   mpiexec -n 1 demo_integrate --config FILE [options]: seed 001's start-up, the server spawns the
           other nodes FILE asks for (wf_start in workfarm.h); ranks are those of the farm.
   Farm options (workfarm.h): --threads N, --fanout K, --tree "0:1,2;1:3,4", --tree-file F; also
   read from WORKFARM_ARGS. --sleep-us adds a sleep to every item (a long Calculate step during
   which the progress thread idles); --cpu prints each rank's progress-thread CPU time;
   --die-rank R --die-after K makes rank R kill itself with SIGKILL after computing K items. */
#define _GNU_SOURCE
#include "workfarm.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct span {
    uint64_t a, b; /* points [a, b) */
} span;

typedef struct demo {
    uint64_t items, points, next, total;
    long sleep_us;
    int die_rank, die_after, rank;
    long done; /* items computed on this rank (atomic) */
} demo;

static int d_input(void *user, void **item)
{
    demo *d = user;
    if (d->next >= d->items)
        return 0;
    span *s = malloc(sizeof *s);
    s->a = d->next * d->points;
    s->b = s->a + d->points;
    d->next++;
    *item = s;
    return 1;
}

static void *d_calculate(void *user, const void *item)
{
    demo *d = user;
    const span *s = item;
    uint64_t sum = 0;
    for (uint64_t i = s->a; i < s->b; i++) {
        sum += i * i * i;
        __asm__ volatile("" : "+r"(sum)); /* keep the loop a loop (no closed form by the compiler) */
    }
    if (d->sleep_us > 0) {
        struct timespec ts = {d->sleep_us / 1000000, (d->sleep_us % 1000000) * 1000};
        nanosleep(&ts, NULL);
    }
    long n = __atomic_add_fetch(&d->done, 1, __ATOMIC_RELAXED);
    if (d->rank == d->die_rank && n == d->die_after)
        raise(SIGKILL); /* a worker lost mid-run */
    uint64_t *r = malloc(sizeof *r);
    *r = sum;
    return r;
}

static void d_output(void *user, const void *item, void *result)
{
    demo *d = user;
    (void)item;
    d->total += *(uint64_t *)result;
}

static size_t pack_bytes(const void *obj, void *buf, size_t cap, size_t n)
{
    if (n <= cap)
        memcpy(buf, obj, n);
    return n;
}

static size_t d_pack_item(void *user, const void *item, void *buf, size_t cap)
{
    (void)user;
    return pack_bytes(item, buf, cap, sizeof(span));
}

static void *d_unpack_item(void *user, const void *buf, size_t len)
{
    (void)user;
    (void)len;
    span *s = malloc(sizeof *s);
    memcpy(s, buf, sizeof *s);
    return s;
}

static size_t d_pack_result(void *user, const void *result, void *buf, size_t cap)
{
    (void)user;
    return pack_bytes(result, buf, cap, sizeof(uint64_t));
}

static void *d_unpack_result(void *user, const void *buf, size_t len)
{
    (void)user;
    (void)len;
    uint64_t *r = malloc(sizeof *r);
    memcpy(r, buf, sizeof *r);
    return r;
}

static int num_arg(const char *opt, const char *val, long lo, long *out)
{
    char *end;
    if (!val) {
        fprintf(stderr, "demo_integrate: %s needs a value\n", opt);
        return -1;
    }
    long v = strtol(val, &end, 10);
    if (end == val || *end || v < lo) {
        fprintf(stderr, "demo_integrate: %s needs an integer >= %ld, got '%s'\n", opt, lo, val);
        return -1;
    }
    *out = v;
    return 0;
}

#ifndef WF_DEMO_SLEEP_US_DEFAULT
#define WF_DEMO_SLEEP_US_DEFAULT 0
#endif
#ifndef WF_DEMO_QUIET_DEFAULT
#define WF_DEMO_QUIET_DEFAULT 0
#endif
/* --die-rank / --die-after defaults (c-tests workfarm_kill_*: the runner passes no arguments) */
#ifndef WF_DEMO_DIE_RANK_DEFAULT
#define WF_DEMO_DIE_RANK_DEFAULT -1
#endif
#ifndef WF_DEMO_DIE_AFTER_DEFAULT
#define WF_DEMO_DIE_AFTER_DEFAULT 0
#endif

/* WF_DEMO_CONFIG_DEFAULT: a configuration file in this file's directory, used without --config
   (c-tests workfarm_spawn*: the runner passes no arguments) */
static char *default_config(void)
{
#ifdef WF_DEMO_CONFIG_DEFAULT
    static char path[4096];
    const char *here = __FILE__, *slash = strrchr(here, '/');
    snprintf(path, sizeof path, "%.*s%s", slash ? (int)(slash - here + 1) : 0, here, WF_DEMO_CONFIG_DEFAULT);
    return path;
#else
    return NULL;
#endif
}

int main(int argc, char **argv)
{
    int provided, rank, size, quiet = WF_DEMO_QUIET_DEFAULT, cpu = 0;
    demo d;
    memset(&d, 0, sizeof d);
    d.items = 400;
    d.points = 20000;
    d.die_rank = WF_DEMO_DIE_RANK_DEFAULT;
    d.die_after = WF_DEMO_DIE_AFTER_DEFAULT;
    d.sleep_us = WF_DEMO_SLEEP_US_DEFAULT;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (provided < MPI_THREAD_MULTIPLE) {
        if (rank == 0)
            fprintf(stderr, "demo_integrate: MPI_THREAD_MULTIPLE not provided\n");
        MPI_Finalize();
        return 2;
    }

    wf_config cfg;
    char err[256];
    MPI_Comm comm;
    if (wf_start(&argc, argv, default_config(), &comm, &cfg, err, sizeof err)) {
        if (rank == 0)
            fprintf(stderr, "demo_integrate: %s\n", err);
        MPI_Finalize();
        return 2;
    }
    /* the farm's ranks (spawned nodes included) */
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    d.rank = rank;
    int bad = 0;
    for (int i = 1; i < argc && !bad; i++) {
        long v = 0;
        const char *o = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(o, "--quiet")) {
            quiet = 1;
            continue;
        }
        if (!strcmp(o, "--cpu")) {
            cpu = 1;
            continue;
        }
        if (!strcmp(o, "--items"))
            bad = num_arg(o, val, 1, &v) || !(d.items = (uint64_t)v);
        else if (!strcmp(o, "--points"))
            bad = num_arg(o, val, 1, &v) || !(d.points = (uint64_t)v);
        else if (!strcmp(o, "--sleep-us"))
            bad = num_arg(o, val, 0, &d.sleep_us);
        else if (!strcmp(o, "--die-rank"))
            bad = num_arg(o, val, 1, &v) || (d.die_rank = (int)v) < 0;
        else if (!strcmp(o, "--die-after"))
            bad = num_arg(o, val, 1, &v) || (d.die_after = (int)v) < 0;
        else {
            fprintf(stderr, "demo_integrate: unknown option '%s'\n", o);
            bad = 1;
        }
        i++;
    }
    if (bad) {
        wf_config_free(&cfg);
        MPI_Comm_free(&comm);
        MPI_Finalize();
        return 2;
    }

    cfg.quiet = quiet;
    wf_ops ops = {&d,           d_input,         d_calculate, d_output, d_pack_item, d_unpack_item,
                  d_pack_result, d_unpack_result, NULL,        NULL};
    wf_stats st;
    int rc = wf_run(comm, &cfg, &ops, &st);
    int status = 0;
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "demo_integrate: wf_run failed on rank %d (%d)\n", rank, rc);
        status = 1;
    } else if (rank == 0) {
        uint64_t n = d.items * d.points;
        unsigned __int128 tri = (unsigned __int128)n * (n ? n - 1 : 0) / 2;
        uint64_t expect = (uint64_t)tri * (uint64_t)tri;
        long sum = 0;
        for (int r = 0; r < size; r++)
            sum += st.per_rank[r];
        /* items are reassigned exactly when a rank was lost (killed or simulated) */
        int lost = (cfg.simulate_loss >= 1 && cfg.simulate_loss < size) || (d.die_rank >= 1 && d.die_rank < size);
        int ok = d.total == expect && st.items == (long)d.items && sum == st.items &&
                 (lost ? st.reassigned > 0 : st.reassigned == 0);
        if (!quiet || !ok) {
            FILE *o = ok ? stdout : stderr;
            fprintf(o, "%sresult: %llu expected: %llu items: %ld of %llu\n", ok ? "" : "TEST FAILED ",
                    (unsigned long long)d.total, (unsigned long long)expect, st.items, (unsigned long long)d.items);
            for (int r = 0; r < size; r++)
                fprintf(o, "rank %d: %ld items\n", r, st.per_rank[r]);
            fprintf(o, "reassigned: %ld\n", st.reassigned);
            fprintf(o, "time: %.3f s\n", st.wall);
        }
        status = !ok;
        wf_stats_free(&st);
    }
    if (rc == MPI_SUCCESS && cpu)
        printf("progress-cpu rank %d: %.3f ms of %.3f ms wall (%.2f%%)\n", rank, st.progress_cpu * 1e3,
               st.wall * 1e3, 100.0 * st.progress_cpu / st.wall);
    fflush(stdout);
    wf_config_free(&cfg);
    MPI_Comm_free(&comm);
    MPI_Finalize();
    return status;
}
