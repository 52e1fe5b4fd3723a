/* oxmpi-test: ranks=2,4,8 */
/* Matched probe: MPI_Mprobe/MPI_Improbe + MPI_Mrecv/MPI_Imrecv; a matched message is
   removed from matching (a later Recv gets the next one); MPI_MESSAGE_NO_PROC for
   MPI_PROC_NULL. */
#include "oxtest.h"

int main(int argc, char **argv)
{
    int rank, size;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int peer = rank ^ 1;
    MPI_Message msg;
    MPI_Status st;
    int flag;

    /* PROC_NULL */
    MPI_OK(MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &msg, &st));
    CHECK(msg == MPI_MESSAGE_NO_PROC, "Mprobe(MPI_PROC_NULL) did not give MPI_MESSAGE_NO_PROC");
    CHECK_STATUS(st, MPI_PROC_NULL, MPI_ANY_TAG, MPI_INT, 0);
    int dummy = -5;
    MPI_OK(MPI_Mrecv(&dummy, 1, MPI_INT, &msg, &st));
    CHECK(msg == MPI_MESSAGE_NULL, "Mrecv(MPI_MESSAGE_NO_PROC) did not set MPI_MESSAGE_NULL");
    CHECK_STATUS(st, MPI_PROC_NULL, MPI_ANY_TAG, MPI_INT, 0);
    CHECK(dummy == -5, "Mrecv of MPI_MESSAGE_NO_PROC wrote the buffer");
    flag = 0;
    MPI_OK(MPI_Improbe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &flag, &msg, &st));
    CHECK(flag && msg == MPI_MESSAGE_NO_PROC, "Improbe(MPI_PROC_NULL): flag %d", flag);
    MPI_Request r;
    MPI_OK(MPI_Imrecv(&dummy, 1, MPI_INT, &msg, &r));
    MPI_OK(MPI_Wait(&r, &st));
    CHECK_STATUS(st, MPI_PROC_NULL, MPI_ANY_TAG, MPI_INT, 0);

    if (peer < size) {
        if (rank & 1) {
            /* nothing sent yet */
            flag = 1;
            MPI_OK(MPI_Improbe(peer, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg, &st));
            CHECK(!flag, "Improbe matched a message that was not sent yet");
            MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
            /* two messages with the same tag: A (10 ints) then B (20 ints) */
            MPI_OK(MPI_Mprobe(peer, 1, MPI_COMM_WORLD, &msg, &st));
            CHECK(msg != MPI_MESSAGE_NULL && msg != MPI_MESSAGE_NO_PROC, "Mprobe returned a null message");
            CHECK_STATUS(st, peer, 1, MPI_INT, 10);
            int b[20];
            /* A is matched by msg, so this Recv must get B */
            MPI_OK(MPI_Recv(b, 20, MPI_INT, peer, 1, MPI_COMM_WORLD, &st));
            CHECK_STATUS(st, peer, 1, MPI_INT, 20);
            CHECK(b[0] == 2000, "Recv after Mprobe got message starting %d, expected B", b[0]);
            MPI_OK(MPI_Mrecv(b, 10, MPI_INT, &msg, &st));
            CHECK(msg == MPI_MESSAGE_NULL, "Mrecv did not set MPI_MESSAGE_NULL");
            CHECK_STATUS(st, peer, 1, MPI_INT, 10);
            for (int j = 0; j < 10; j++)
                CHECK(b[j] == 1000 + j, "Mrecv message A element %d = %d", j, b[j]);

            /* Improbe (ANY_SOURCE, ANY_TAG) + Imrecv of a large message */
            flag = 0;
            while (!flag)
                MPI_OK(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg, &st));
            CHECK(st.MPI_SOURCE == peer && st.MPI_TAG == 2, "Improbe: src %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
            int n = -1;
            MPI_OK(MPI_Get_count(&st, MPI_BYTE, &n));
            CHECK(n == (1 << 20), "Improbe count %d", n);
            unsigned char *big = oxt_malloc((size_t)n);
            MPI_OK(MPI_Imrecv(big, n, MPI_BYTE, &msg, &r));
            CHECK(msg == MPI_MESSAGE_NULL, "Imrecv did not set MPI_MESSAGE_NULL");
            MPI_OK(MPI_Wait(&r, &st));
            CHECK_STATUS(st, peer, 2, MPI_BYTE, n);
            long bad = oxt_verify(big, (size_t)n, 77);
            CHECK(bad < 0, "Imrecv large message byte %ld wrong", bad);
            free(big);
            /* zero-byte message */
            MPI_OK(MPI_Mprobe(peer, MPI_ANY_TAG, MPI_COMM_WORLD, &msg, &st));
            CHECK_STATUS(st, peer, 3, MPI_BYTE, 0);
            MPI_OK(MPI_Mrecv(NULL, 0, MPI_BYTE, &msg, &st));
            CHECK_STATUS(st, peer, 3, MPI_BYTE, 0);
        } else {
            MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
            int a[10], b[20];
            for (int j = 0; j < 10; j++)
                a[j] = 1000 + j;
            for (int j = 0; j < 20; j++)
                b[j] = 2000 + j;
            MPI_OK(MPI_Send(a, 10, MPI_INT, peer, 1, MPI_COMM_WORLD));
            MPI_OK(MPI_Send(b, 20, MPI_INT, peer, 1, MPI_COMM_WORLD));
            unsigned char *big = oxt_malloc(1 << 20);
            oxt_fill(big, 1 << 20, 77);
            MPI_OK(MPI_Send(big, 1 << 20, MPI_BYTE, peer, 2, MPI_COMM_WORLD));
            free(big);
            MPI_OK(MPI_Send(NULL, 0, MPI_BYTE, peer, 3, MPI_COMM_WORLD));
        }
    } else {
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Finalize());
    return 0;
}
