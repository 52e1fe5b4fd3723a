/* oxmpi-test: ranks=2,4,8 */
/* MPI_THREAD_MULTIPLE: 4 threads per rank each exchange 200 messages on their own tag
   with the same thread of the peer rank; then 4 threads receive with MPI_ANY_TAG while
   the peer's 4 threads send (each receiver sees every sender thread's messages in order,
   and every message arrives exactly once). */
#define _POSIX_C_SOURCE 200809L
#include "oxtest.h"
#include <pthread.h>

#define NT 4
#define NMSG 200
#define BIGN 65536

static int peer;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static unsigned char seen[NT][NMSG];

struct msg {
    int thread, seq;
    unsigned char pad[8];
};

static void *pairwise(void *arg)
{
    int t = (int)(intptr_t)arg;
    unsigned char *big = oxt_malloc(BIGN), *bigr = oxt_malloc(BIGN);
    for (int i = 0; i < NMSG; i++) {
        MPI_Request r;
        MPI_Status st;
        if (i % 50 == 49) { /* now and then a large message */
            oxt_fill(big, BIGN, (unsigned)(t * 1000 + i));
            MPI_OK(MPI_Isend(big, BIGN, MPI_BYTE, peer, t, MPI_COMM_WORLD, &r));
            MPI_OK(MPI_Recv(bigr, BIGN, MPI_BYTE, peer, t, MPI_COMM_WORLD, &st));
            MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
            CHECK(oxt_verify(bigr, BIGN, (unsigned)(t * 1000 + i)) < 0, "thread %d large message %d corrupted", t, i);
        } else {
            struct msg m = {t, i, {0}}, in = {-1, -1, {0}};
            MPI_OK(MPI_Isend(&m, (int)sizeof m, MPI_BYTE, peer, t, MPI_COMM_WORLD, &r));
            MPI_OK(MPI_Recv(&in, (int)sizeof in, MPI_BYTE, peer, t, MPI_COMM_WORLD, &st));
            MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
            CHECK(in.thread == t && in.seq == i, "thread %d message %d: got thread %d seq %d", t, i, in.thread,
                  in.seq);
        }
        CHECK(st.MPI_SOURCE == peer && st.MPI_TAG == t, "thread %d: status src %d tag %d", t, st.MPI_SOURCE,
              st.MPI_TAG);
    }
    free(big);
    free(bigr);
    return NULL;
}

static void *sender(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (int i = 0; i < NMSG; i++) {
        struct msg m = {t, i, {0}};
        MPI_OK(MPI_Send(&m, (int)sizeof m, MPI_BYTE, peer, 100 + t, MPI_COMM_WORLD));
    }
    return NULL;
}

static void *anytag_receiver(void *arg)
{
    int t = (int)(intptr_t)arg;
    int last[NT];
    for (int k = 0; k < NT; k++)
        last[k] = -1;
    (void)t;
    for (int i = 0; i < NMSG; i++) {
        struct msg in;
        MPI_Status st;
        MPI_OK(MPI_Recv(&in, (int)sizeof in, MPI_BYTE, peer, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        CHECK(in.thread >= 0 && in.thread < NT && in.seq >= 0 && in.seq < NMSG, "bad message %d/%d", in.thread,
              in.seq);
        CHECK(st.MPI_TAG == 100 + in.thread, "tag %d for sender thread %d", st.MPI_TAG, in.thread);
        CHECK(in.seq > last[in.thread], "ANY_TAG receiver: sender thread %d seq %d after %d (overtaking)",
              in.thread, in.seq, last[in.thread]);
        last[in.thread] = in.seq;
        pthread_mutex_lock(&mu);
        CHECK(!seen[in.thread][in.seq], "message %d/%d received twice", in.thread, in.seq);
        seen[in.thread][in.seq] = 1;
        pthread_mutex_unlock(&mu);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int rank, size, provided;
    MPI_OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    CHECK(provided == MPI_THREAD_MULTIPLE, "MPI_THREAD_MULTIPLE not provided (%d)", provided);
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    peer = rank ^ 1;
    if (peer < size) {
        pthread_t th[NT];
        for (int t = 0; t < NT; t++)
            CHECK(pthread_create(&th[t], NULL, pairwise, (void *)(intptr_t)t) == 0, "pthread_create");
        for (int t = 0; t < NT; t++)
            pthread_join(th[t], NULL);

        /* phase 2: even ranks send, odd ranks receive with ANY_TAG, then swap */
        for (int phase = 0; phase < 2; phase++) {
            int i_send = ((rank & 1) == phase);
            memset(seen, 0, sizeof seen);
            for (int t = 0; t < NT; t++)
                CHECK(pthread_create(&th[t], NULL, i_send ? sender : anytag_receiver, (void *)(intptr_t)t) == 0,
                      "pthread_create");
            for (int t = 0; t < NT; t++)
                pthread_join(th[t], NULL);
            if (!i_send)
                for (int t = 0; t < NT; t++)
                    for (int i = 0; i < NMSG; i++)
                        CHECK(seen[t][i], "phase %d: message %d/%d never received", phase, t, i);
        }
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Finalize());
    return 0;
}
