/* oxmpi-test: ranks=2,3,4,8 timeout=300 mpich=skip */
/* oxmpi-test: env=OXMPI_REDUCE_ALGORITHM=clairvoyant,OXMPI_CLV_REPLAN=1 */
/* oxmpi-test: env=OXMPI_REDUCE_ALGORITHM=clairvoyant,OXMPI_CLV_REPLAN=0 */
/* oxmpi-test: env=OXMPI_REDUCE_ALGORITHM=arrival,OXMPI_CLV_REPLAN=0 */
/* Live re-planning of Clairvoyant MPI_Reduce (issue 21, item 2). Every rank tells oxmpi it is
   about to arrive (MPIX_Pap_expect 0 s), then one or two of them compute for 15 to 45 ms more:
   the schedule built for "everyone at once" is stale, and the watchdog declares the missing
   ranks late, the others take the call over with a new schedule, and the late ones follow the
   re-plans they missed when they come (sometimes a second re-plan, when the second late rank is
   later than the first re-plan expected). The sum must stay exact for every root (late or not,
   in place or not) and odd counts, and a plain MAX too. With OXMPI_CLV_REPLAN=1 (the default)
   the MPI_T counter clairvoyant_takeovers must show that calls were taken over; with 0 that none
   was. */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include "oxtest.h"
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ITERS 10

static void nap(long us)
{
    if (us > 0) {
        struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
        nanosleep(&ts, NULL);
    }
}

static int val(int r, long i, int it) { return (r + 1) * (int)((i * 7 + it) % 1009) - 5 * r; }

/* The MPI_T counter clairvoyant_takeovers, started now (a counter that is not continuous counts
   only while its handle is started). */
static MPI_T_pvar_session ses;
static MPI_T_pvar_handle h;

static void start_takeovers(void)
{
    int idx, n;
    T_OK(MPI_T_pvar_session_create(&ses));
    T_OK(MPI_T_pvar_get_index("clairvoyant_takeovers", MPI_T_PVAR_CLASS_COUNTER, &idx));
    T_OK(MPI_T_pvar_handle_alloc(ses, idx, NULL, &h, &n));
    T_OK(MPI_T_pvar_start(ses, h));
}

static unsigned long long takeovers(void)
{
    unsigned long long v = 0;
    T_OK(MPI_T_pvar_read(ses, h, &v));
    T_OK(MPI_T_pvar_stop(ses, h));
    T_OK(MPI_T_pvar_handle_free(ses, &h));
    T_OK(MPI_T_pvar_session_free(&ses));
    return v;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init(&argc, &argv);
    T_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    const char *env = getenv("OXMPI_CLV_REPLAN");
    int replan_on = !(env && strcmp(env, "0") == 0);
    start_takeovers();
    for (int it = 0; it < ITERS; it++) {
        int count = 150001 + 37 * it; /* about 600 KB: 9 segments */
        int root = (it * 3 + 1) % n;
        int late1 = it % n, late2 = n >= 4 && it % 3 == 0 ? (it + 2) % n : -1;
        int in_place = it % 2 == 1 && rank == root;
        int *s = oxt_malloc(sizeof(int) * (size_t)count), *r = oxt_malloc(sizeof(int) * (size_t)count);
        for (long i = 0; i < count; i++) {
            s[i] = val(rank, i, it);
            r[i] = in_place ? s[i] : -7;
        }
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        MPI_OK(MPIX_Pap_expect(MPI_COMM_WORLD, 0.0));
        nap(rank == late1 ? 15000 : rank == late2 ? 45000 : 0);
        MPI_Op op = it % 4 == 3 ? MPI_MAX : MPI_SUM;
        MPI_OK(MPI_Reduce(in_place ? MPI_IN_PLACE : s, r, count, MPI_INT, op, root, MPI_COMM_WORLD));
        if (rank == root)
            for (long i = 0; i < count; i++) {
                long want = op == MPI_SUM ? 0 : val(0, i, it);
                for (int q = 0; q < n; q++)
                    want = op == MPI_SUM ? want + val(q, i, it) : (val(q, i, it) > want ? val(q, i, it) : want);
                if (r[i] != want) {
                    CHECK(0, "iteration %d (root %d, late %d and %d, %s, count %d): element %ld is %d, expected %ld", it, root, late1, late2, in_place ? "in place" : "not in place", count, i, r[i], want);
                    break;
                }
            }
        else
            for (long i = 0; i < count; i++)
                if (r[i] != -7) {
                    CHECK(0, "iteration %d: a non-root's receive buffer changed", it);
                    break;
                }
        free(s);
        free(r);
    }
    unsigned long long mine = takeovers(), most = 0;
    MPI_OK(MPI_Allreduce(&mine, &most, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD));
    if (replan_on)
        CHECK(most > 0, "no call was taken over in %d iterations with ranks 15 to 45 ms later than they said", ITERS);
    else
        CHECK(most == 0, "OXMPI_CLV_REPLAN=0, yet %llu calls were taken over", most);
    T_OK(MPI_T_finalize());
    MPI_Finalize();
    if (rank == 0)
        printf("pap_replan: OK (%llu takeovers at most per process)\n", most);
    return 0;
}
