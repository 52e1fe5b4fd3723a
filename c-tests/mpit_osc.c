/* oxmpi-test: ranks=1,2,3,4 timeout=60 mpich=skip */
/* One-sided traffic in Open MPI's osc monitoring variables: rank i puts 100 bytes into rank
   i+1's window and gets 40 bytes from rank i-1; osc_monitoring_messages_sent_{count,size} and
   recv_{count,size} show exactly that, and the point-to-point arrays stay empty. */
#include "oxtest.h"

static MPI_T_pvar_handle handle(MPI_T_pvar_session s, const char *name)
{
    int i = -1, count = 0;
    MPI_T_pvar_handle h;
    MPI_Comm world = MPI_COMM_WORLD;
    T_OK(MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_SIZE, &i));
    T_OK(MPI_T_pvar_handle_alloc(s, i, &world, &h, &count));
    T_OK(MPI_T_pvar_start(s, h));
    return h;
}

int main(int argc, char **argv)
{
    int provided, rank, size;
    MPI_T_pvar_session s;
    unsigned long long v[4][64];
    const char *names[4] = {"osc_monitoring_messages_sent_count", "osc_monitoring_messages_sent_size",
                            "osc_monitoring_messages_recv_count", "osc_monitoring_messages_recv_size"};
    MPI_T_pvar_handle h[4], p2p;
    MPI_OK(MPI_Init(&argc, &argv));
    T_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(size <= 64, "at most 64 ranks");
    T_OK(MPI_T_pvar_session_create(&s));
    for (int k = 0; k < 4; k++)
        h[k] = handle(s, names[k]);
    p2p = handle(s, "pml_monitoring_messages_count");

    char *base;
    MPI_Win win;
    MPI_OK(MPI_Win_allocate(256, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    char out[100], in[40];
    memset(out, rank, sizeof out);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_OK(MPI_Win_fence(0, win));
    MPI_OK(MPI_Put(out, 100, MPI_CHAR, right, 0, 100, MPI_CHAR, win));
    MPI_OK(MPI_Win_fence(0, win));
    MPI_OK(MPI_Get(in, 40, MPI_CHAR, left, 100, 40, MPI_CHAR, win));
    MPI_OK(MPI_Win_fence(0, win));

    for (int k = 0; k < 4; k++) {
        T_OK(MPI_T_pvar_stop(s, h[k]));
        T_OK(MPI_T_pvar_read(s, h[k], v[k]));
    }
    for (int p = 0; p < size; p++) {
        unsigned long long sc = p == right, ss = p == right ? 100 : 0, rc = p == left, rs = p == left ? 40 : 0;
        if (right == left) { /* one or two ranks: the same peer both ways */
            sc = p == right;
            rc = p == left;
        }
        CHECK(v[0][p] == sc && v[1][p] == ss, "sent to %d: %llu messages, %llu bytes (expected %llu, %llu)", p, v[0][p], v[1][p], sc, ss);
        CHECK(v[2][p] == rc && v[3][p] == rs, "received from %d: %llu messages, %llu bytes (expected %llu, %llu)", p, v[2][p], v[3][p], rc, rs);
    }
    unsigned long long pv[64];
    T_OK(MPI_T_pvar_stop(s, p2p));
    T_OK(MPI_T_pvar_read(s, p2p, pv));
    for (int p = 0; p < size; p++)
        CHECK(pv[p] == 0, "one-sided traffic counted as point-to-point (peer %d: %llu)", p, pv[p]);
    MPI_OK(MPI_Win_free(&win));
    T_OK(MPI_T_pvar_session_free(&s));
    T_OK(MPI_T_finalize());
    MPI_OK(MPI_Finalize());
    if (rank == 0)
        printf("mpit_osc: OK\n");
    return 0;
}
