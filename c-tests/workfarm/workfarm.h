/* workfarm: a threaded distributed work farm over MPI, after the design of seed 001 (J. Squyres'
   "fully generalized, threaded distributed work farm", 2001).

   Rank 0 of the communicator is the server: an Input thread produces work items, an Output stage
   (the thread that called wf_run) consumes results. Every rank runs `threads` Calculate threads.
   The ranks form a tree; on every rank a relay thread hands work to the local Calculate threads
   and to the children's subtrees (at most twice as many items as each can compute at once:
   pre-fetching), and sends results up to the parent in batches. One progress thread per rank is
   the only thread that calls MPI while the farm runs: the others post send events to its queue
   and it delivers received messages to the relay; it polls with MPI_Testsome and an adaptive
   back-off. MPI_Init_thread must have provided MPI_THREAD_MULTIPLE (the caller's thread and the
   progress thread both call MPI around start-up and shut-down).

   Failures: the farm's communicator has MPI_ERRORS_RETURN. When an operation with a child fails
   with MPIX_ERR_PROC_FAILED (or any other error: the child is then unreachable), the child's
   whole subtree is taken as dead and the items it held go back to the relay's queue for others;
   they are counted in wf_stats.reassigned. */
#ifndef WORKFARM_H
#define WORKFARM_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* MPICH's ULFM error class (value of MPICH's mpi.h), for headers that lack it. */
#ifndef MPIX_ERR_PROC_FAILED
#define MPIX_ERR_PROC_FAILED 101
#endif

/* The user's part. All functions get `user`. calculate, pack_* and unpack_* run on Calculate
   threads concurrently and must be thread-safe; input and output run on rank 0 only, each on one
   thread. Packing returns the number of bytes the object needs and writes it only if it fits in
   `cap` (the framework retries with a larger buffer). Items and results are freed with
   free_item/free_result (NULL: free()). */
typedef struct wf_ops {
    void *user;
    int (*input)(void *user, void **item);             /* 1: *item is the next item; 0: none left */
    void *(*calculate)(void *user, const void *item);  /* item -> result */
    void (*output)(void *user, const void *item, void *result);
    size_t (*pack_item)(void *user, const void *item, void *buf, size_t cap);
    void *(*unpack_item)(void *user, const void *buf, size_t len);
    size_t (*pack_result)(void *user, const void *result, void *buf, size_t cap);
    void *(*unpack_result)(void *user, const void *buf, size_t len);
    void (*free_item)(void *user, void *item);
    void (*free_result)(void *user, void *result);
} wf_ops;

typedef struct wf_config {
    int threads;   /* Calculate threads on this rank (>= 1) */
    int size;      /* number of ranks the tree covers (= communicator size) */
    int *parent;   /* parent[r] for every rank, -1 for rank 0; owned (wf_config_free) */
    int quiet;     /* no warnings on stderr */
    int simulate_loss; /* rank whose parent treats it as lost at a result batch after which it
                          still holds items (--simulate-loss R: the reassignment path without a
                          dead process; R keeps running and is told to stop); -1: none */
} wf_config;

typedef struct wf_stats {
    long items;          /* rank 0: results delivered to output */
    long reassigned;     /* rank 0: items handed out again after a subtree was lost (whole tree) */
    long *per_rank;      /* rank 0: items computed by each rank (size entries; owned) */
    long computed;       /* this rank: items its Calculate threads computed */
    double progress_cpu; /* this rank: CPU seconds of the progress thread */
    double wall;         /* this rank: seconds wf_run took */
    int dead_ranks;      /* this rank: children it lost (with their subtrees) */
} wf_stats;

/* Build a configuration for `size` ranks from command-line arguments; the options it knows are
   removed from argv. Options: --threads N, --fanout K (rank r's parent is (r-1)/K), --tree SPEC
   (SPEC: "P:C,C;P:C" - children C of P, ',' or '+' between children, ranks not named are children
   of 0), --tree-file FILE (the same syntax, newlines as ';', '#' comments), --simulate-loss R. The variable
   WORKFARM_ARGS (whitespace-separated options) is read first; the command line overrides it.
   Default: --fanout 2, --threads 2. Returns 0, or -1 with a message in err. No global state
   (safe when ranks are threads of one process). */
int wf_config_from_args(wf_config *cfg, int size, int *argc, char **argv, char *err, size_t errlen);
void wf_config_free(wf_config *cfg);

/* Start-up as seed 001 describes it. With --config FILE (or `config` non-NULL) the job's ranks are
   the server: it reads FILE (farm options as above, blank-separated, '#' comments, and --nodes N:
   the ranks of the tree, the server's included), spawns the N - (world size) other nodes with
   MPI_Comm_spawn (this program again, given the argument -child), merges them in after its own
   ranks (the server is rank 0) and hands every node its place in the tree. A node started with
   -child receives it. Without either, MPI_COMM_WORLD's ranks are the tree (mpiexec -n N) and the
   options come from argv and WORKFARM_ARGS (wf_config_from_args). The options used are removed
   from argv. On success *comm is the farm's communicator (free it with MPI_Comm_free) and cfg
   its configuration; -1 with a message in err otherwise. */
int wf_start(int *argc, char **argv, const char *config, MPI_Comm *comm, wf_config *cfg, char *err, size_t errlen);

/* Run the farm on comm (collective over comm). Returns MPI_SUCCESS or an MPI error code (stats
   are valid then). stats->per_rank must be freed with wf_stats_free. */
int wf_run(MPI_Comm comm, const wf_config *cfg, const wf_ops *ops, wf_stats *stats);
void wf_stats_free(wf_stats *stats);

#endif
