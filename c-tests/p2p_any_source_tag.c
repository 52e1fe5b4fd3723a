/* oxmpi-test: ranks=2,4,8,12 */
/* MPI_ANY_SOURCE / MPI_ANY_TAG receives (and mixed with a specific source or tag):
   every message arrives exactly once, in order per sender, status is correct. */
#include "oxtest.h"

#define PER 6

int main(int argc, char **argv)
{
    int rank, size;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));

    if (rank == 0) {
        int *next = calloc((size_t)size, sizeof(int));
        int total = (size - 1) * PER;
        for (int got = 0; got < total; got++) {
            MPI_Status st;
            int v[2] = {-1, -1}, n;
            int mode = got % 3;
            if (mode == 0) {
                MPI_OK(MPI_Recv(v, 2, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            } else if (mode == 1) {
                /* specific source, any tag: pick a source that still has messages */
                int src = 1 + (got % (size - 1));
                while (next[src] >= PER)
                    src = 1 + (src % (size - 1));
                MPI_OK(MPI_Recv(v, 2, MPI_INT, src, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
                CHECK(st.MPI_SOURCE == src, "ANY_TAG from %d: status source %d", src, st.MPI_SOURCE);
            } else {
                /* any source, specific tag: the next tag of some source */
                int src = 1 + (got % (size - 1));
                while (next[src] >= PER)
                    src = 1 + (src % (size - 1));
                int tag = src * 100 + next[src];
                MPI_OK(MPI_Recv(v, 2, MPI_INT, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &st));
                CHECK(st.MPI_TAG == tag && st.MPI_SOURCE == src, "ANY_SOURCE tag %d: got src %d tag %d", tag,
                      st.MPI_SOURCE, st.MPI_TAG);
            }
            int src = st.MPI_SOURCE;
            CHECK(src > 0 && src < size, "source %d", src);
            CHECK(st.MPI_TAG == src * 100 + next[src], "from %d: tag %d, expected %d", src, st.MPI_TAG,
                  src * 100 + next[src]);
            CHECK(v[0] == src && v[1] == next[src], "from %d: payload %d %d", src, v[0], v[1]);
            MPI_OK(MPI_Get_count(&st, MPI_INT, &n));
            CHECK(n == 2, "count %d", n);
            next[src]++;
        }
        for (int s = 1; s < size; s++)
            CHECK(next[s] == PER, "got %d messages from %d", next[s], s);
        free(next);
    } else {
        for (int k = 0; k < PER; k++) {
            int v[2] = {rank, k};
            MPI_OK(MPI_Send(v, 2, MPI_INT, 0, rank * 100 + k, MPI_COMM_WORLD));
        }
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Finalize());
    return 0;
}
