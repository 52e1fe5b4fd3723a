/* The workload of scripts/fault-inject.sh (not a c-test of its own: run.sh compiles only
 * the c-tests directory's top level). A seeded random sequence of point-to-point rings,
 * allreduces, RMA epochs and communicator dup/free, every result checked; the ranks of FI_VICTIMS ("rank:step,rank:step...",
 * empty: nobody) die at their step by FI_HOW (kill: SIGKILL, segv: SIGSEGV, exit: exit(3)
 * without MPI_Finalize).
 * FI_SURVIVE=1: the survivors recover (the ULFM pattern: agree on success after every step; on a
 * failure revoke, acknowledge, shrink, redo the step on the survivors) and each prints
 * "FI_DONE survivors=N" at the end. RMA steps use a window over the current communicator (made
 * again, lazily, after a shrink; the old one is left: freeing it is collective over the dead too):
 * fence epochs (put, accumulate, get) and lock/flush epochs (put, get, fetch-and-op).
 * Environment: FI_SEED, FI_STEPS, FI_VICTIMS, FI_HOW, FI_SURVIVE. */
#define _DEFAULT_SOURCE
#include "oxtest.h"
#include <signal.h>
#include <stdlib.h>
#include <string.h>

static long env(const char *name, long dflt)
{
    const char *e = getenv(name);
    return e && *e ? atol(e) : dflt;
}

static void die(const char *how)
{
    if (!strcmp(how, "segv"))
        raise(SIGSEGV);
    else if (!strcmp(how, "exit"))
        exit(3);
    raise(SIGKILL);
}

static int survive;

/* One step of kind `op` on `c`; returns MPI_SUCCESS or the first error (results checked). */
static int step(MPI_Comm c, int op, int it, MPI_Win *winp, int **winbufp)
{
    int rank, size, rc;
    if ((op == 2 || op == 4) && *winp == MPI_WIN_NULL) {
        if ((rc = MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, c, winbufp, winp)) != MPI_SUCCESS)
            return rc;
        if (survive) /* a non-fatal handler makes the job survive failures */
            MPI_Win_set_errhandler(*winp, MPI_ERRORS_RETURN);
        memset(*winbufp, 0, 4 * sizeof(int));
        if ((rc = MPI_Barrier(c)) != MPI_SUCCESS) /* zeroed everywhere before any access */
            return rc;
    }
    MPI_Win win = *winp;
    int *winbuf = *winbufp;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    if (op == 0) {
        int out = it * 1000 + rank, in = -1;
        rc = MPI_Sendrecv(&out, 1, MPI_INT, right, it & 0x7fff, &in, 1, MPI_INT, left, it & 0x7fff, c, MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS)
            CHECK(in == it * 1000 + left, "step %d ring: got %d, expected %d", it, in, it * 1000 + left);
        return rc;
    }
    if (op == 1) {
        long v = rank + it, sum = -1;
        rc = MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, c);
        long want = (long)size * (size - 1) / 2 + (long)size * it;
        if (rc == MPI_SUCCESS)
            CHECK(sum == want, "step %d allreduce: got %ld, expected %ld", it, sum, want);
        return rc;
    }
    if (op == 2) {
        /* Fence epochs: a ring of puts, accumulates onto rank 0, then gets of what the left
         * neighbour received. */
        int v = it * 1000 + rank, got = -1;
        if (rank == 0)
            winbuf[1] = 0;
        if ((rc = MPI_Win_fence(0, win)) != MPI_SUCCESS)
            return rc;
        int one = rank + 1;
        if ((rc = MPI_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, win)) != MPI_SUCCESS ||
            (rc = MPI_Accumulate(&one, 1, MPI_INT, 0, 1, 1, MPI_INT, MPI_SUM, win)) != MPI_SUCCESS)
            return rc;
        if ((rc = MPI_Win_fence(0, win)) != MPI_SUCCESS)
            return rc;
        CHECK(winbuf[0] == it * 1000 + left, "step %d put: got %d, expected %d", it, winbuf[0], it * 1000 + left);
        if (rank == 0)
            CHECK(winbuf[1] == size * (size + 1) / 2, "step %d accumulate: got %d, expected %d", it, winbuf[1],
                  size * (size + 1) / 2);
        if ((rc = MPI_Get(&got, 1, MPI_INT, left, 0, 1, MPI_INT, win)) != MPI_SUCCESS)
            return rc;
        if ((rc = MPI_Win_fence(0, win)) != MPI_SUCCESS)
            return rc;
        int ll = (left + size - 1) % size;
        CHECK(got == it * 1000 + ll, "step %d get: got %d, expected %d", it, got, it * 1000 + ll);
        return MPI_SUCCESS;
    }
    if (op == 4) {
        /* Passive target: a put to the right neighbour's slot (only this rank writes it), flushed
         * and read back; an exclusive-lock fetch-and-add on rank 0's counter. */
        int v = it * 1000 + rank, got = -1, one = 1, old = -1;
        if ((rc = MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win)) != MPI_SUCCESS)
            return rc;
        if ((rc = MPI_Put(&v, 1, MPI_INT, right, 2, 1, MPI_INT, win)) == MPI_SUCCESS &&
            (rc = MPI_Win_flush(right, win)) == MPI_SUCCESS &&
            (rc = MPI_Get(&got, 1, MPI_INT, right, 2, 1, MPI_INT, win)) == MPI_SUCCESS)
            rc = MPI_Win_flush(right, win);
        int urc = MPI_Win_unlock(right, win);
        if (rc == MPI_SUCCESS)
            rc = urc;
        if (rc != MPI_SUCCESS)
            return rc;
        CHECK(got == v, "step %d lock/put/get: got %d, expected %d", it, got, v);
        if ((rc = MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win)) != MPI_SUCCESS)
            return rc;
        rc = MPI_Fetch_and_op(&one, &old, MPI_INT, 0, 3, MPI_SUM, win);
        urc = MPI_Win_unlock(0, win);
        if (rc == MPI_SUCCESS)
            rc = urc;
        if (rc == MPI_SUCCESS)
            CHECK(old >= 0, "step %d fetch_and_op: counter %d", it, old);
        return rc;
    }
    MPI_Comm d;
    if ((rc = MPI_Comm_dup(c, &d)) != MPI_SUCCESS)
        return rc;
    MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN);
    int out = it, in = -1;
    rc = MPI_Sendrecv(&out, 1, MPI_INT, right, 1, &in, 1, MPI_INT, left, 1, d, MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS)
        CHECK(in == it, "step %d dup: got %d, expected %d", it, in, it);
    MPI_Comm_free(&d);
    return rc;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int wrank;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    uint64_t seed = (uint64_t)env("FI_SEED", 1);
    long steps = env("FI_STEPS", 200), kill_at = -1;
    /* This rank's step of death, if FI_VICTIMS names it. */
    for (const char *v = getenv("FI_VICTIMS"); v && *v;) {
        char *end;
        long r = strtol(v, &end, 10);
        if (*end != ':')
            break;
        long at = strtol(end + 1, &end, 10);
        if (r == wrank)
            kill_at = at;
        v = *end == ',' ? end + 1 : end;
    }
    survive = env("FI_SURVIVE", 0) != 0;
    const char *how = getenv("FI_HOW") ? getenv("FI_HOW") : "kill";
    MPI_Comm c = MPI_COMM_WORLD;
    if (survive)
        MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int *winbuf = NULL;
    MPI_Win win = MPI_WIN_NULL;
    for (long it = 0; it < steps; it++) {
        int op = (int)(oxt_rand(&seed) % 5);
        if (it == kill_at)
            die(how);
        for (;;) {
            int rc = step(c, op, (int)it, &win, &winbuf);
            if (!survive) {
                MPI_OK(rc);
                break;
            }
            /* A rank whose step failed revokes, so that no survivor stays blocked in the step;
             * then everybody learns whether it worked everywhere. */
            int ok = rc == MPI_SUCCESS;
            if (!ok)
                MPIX_Comm_revoke(c);
            int arc = MPIX_Comm_agree(c, &ok);
            if (arc == MPI_SUCCESS && ok)
                break;
            MPIX_Comm_revoke(c);
            MPIX_Comm_failure_ack(c);
            MPI_Comm s;
            MPI_OK(MPIX_Comm_shrink(c, &s));
            MPI_OK(MPI_Comm_set_errhandler(s, MPI_ERRORS_RETURN));
            if (c != MPI_COMM_WORLD)
                MPI_Comm_free(&c);
            c = s;
            win = MPI_WIN_NULL; /* left behind: see the header */
        }
    }
    if (win != MPI_WIN_NULL)
        MPI_OK(MPI_Win_free(&win));
    if (survive) {
        int n;
        MPI_Comm_size(c, &n);
        printf("FI_DONE survivors=%d\n", n);
        fflush(stdout);
        if (c != MPI_COMM_WORLD)
            MPI_Comm_free(&c);
    }
    MPI_Finalize();
    return 0;
}
