/* oxmpi-test: ranks=2,4,8,12 */
/* MPI_Probe / MPI_Iprobe with MPI_ANY_SOURCE / MPI_ANY_TAG; MPI_Get_count from the
   probe status sizes the receive. */
#include "oxtest.h"

#define PER 3

static int count_for(int src, int k) { return k == 2 ? (1 << 18) + src : src * 100 + k; } /* ints */

int main(int argc, char **argv)
{
    int rank, size;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));

    if (rank == 0) {
        int flag = 1;
        MPI_Status st;
        /* nothing has been sent yet with tag 999 */
        MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &flag, &st));
        CHECK(!flag, "Iprobe found a message that was never sent");
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        int got = 0, total = (size - 1) * PER;
        int *next = calloc((size_t)size, sizeof(int));
        while (got < total) {
            int n = -1;
            if (got % 2) {
                MPI_OK(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            } else {
                flag = 0;
                while (!flag)
                    MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
            }
            int src = st.MPI_SOURCE, tag = st.MPI_TAG;
            CHECK(src > 0 && src < size, "probe source %d", src);
            int k = next[src];
            CHECK(tag == src * 10 + k, "probe from %d: tag %d, expected %d (non-overtaking)", src, tag, src * 10 + k);
            MPI_OK(MPI_Get_count(&st, MPI_INT, &n));
            CHECK(n == count_for(src, k), "probe from %d msg %d: count %d, expected %d", src, k, n, count_for(src, k));
            /* probing again with the exact source/tag finds the same message */
            MPI_Status st2;
            MPI_OK(MPI_Probe(src, tag, MPI_COMM_WORLD, &st2));
            CHECK(st2.MPI_SOURCE == src && st2.MPI_TAG == tag, "second probe differs");
            int *b = oxt_malloc((size_t)n * sizeof(int));
            MPI_OK(MPI_Recv(b, n, MPI_INT, src, tag, MPI_COMM_WORLD, &st2));
            CHECK_STATUS(st2, src, tag, MPI_INT, n);
            for (int j = 0; j < n; j++)
                CHECK(b[j] == src * 7 + j + k, "msg from %d element %d wrong", src, j);
            free(b);
            next[src]++;
            got++;
        }
        free(next);
        flag = 1;
        MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
        CHECK(!flag, "Iprobe found a message after all were received");
    } else {
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        for (int k = 0; k < PER; k++) {
            int n = count_for(rank, k);
            int *b = oxt_malloc((size_t)n * sizeof(int));
            for (int j = 0; j < n; j++)
                b[j] = rank * 7 + j + k;
            MPI_OK(MPI_Send(b, n, MPI_INT, 0, rank * 10 + k, MPI_COMM_WORLD));
            free(b);
        }
    }
    /* Probe on MPI_PROC_NULL returns at once */
    MPI_Status st;
    int flag = 0;
    MPI_OK(MPI_Probe(MPI_PROC_NULL, 5, MPI_COMM_WORLD, &st));
    CHECK_STATUS(st, MPI_PROC_NULL, MPI_ANY_TAG, MPI_INT, 0);
    MPI_OK(MPI_Iprobe(MPI_PROC_NULL, 5, MPI_COMM_WORLD, &flag, &st));
    CHECK(flag, "Iprobe(MPI_PROC_NULL) gave flag=0");
    CHECK_STATUS(st, MPI_PROC_NULL, MPI_ANY_TAG, MPI_INT, 0);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Finalize());
    return 0;
}
