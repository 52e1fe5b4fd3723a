/* One call pattern of benches/abi_layer.c, ITERS times, for counting instructions
 * (scripts/bench-abi-instructions.sh runs it under callgrind at two ITERS: the difference of
 * the counts over the difference of ITERS is the cost per call, without MPI_Init's).
 *
 * Usage: abi_layer_one PATTERN ITERS, PATTERN one of comm_rank, sendrecv8, isend_wait8,
 * send_recv8 (MPI_Send then MPI_Recv), probe8 (MPI_Send, MPI_Iprobe, MPI_Recv), test8 (MPI_Irecv,
 * MPI_Isend, MPI_Test on each), testall8 (MPI_Testall of both), waitany8 (MPI_Waitany twice);
 * all 8-byte messages to self on MPI_COMM_SELF, which complete within the iteration.
 */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc < 3)
        MPI_Abort(MPI_COMM_WORLD, 2);
    int iters = atoi(argv[2]), rank = -1;
    double sb = 1.0, rb = 0.0;
    MPI_Status st, sts[2];
    MPI_Request rq[2];
    int flag = 0, idx = -1;
    if (!strcmp(argv[1], "comm_rank")) {
        for (int i = 0; i < iters; i++)
            MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    } else if (!strcmp(argv[1], "sendrecv8")) {
        for (int i = 0; i < iters; i++)
            MPI_Sendrecv(&sb, 1, MPI_DOUBLE, 0, 3, &rb, 1, MPI_DOUBLE, 0, 3, MPI_COMM_SELF, &st);
    } else if (!strcmp(argv[1], "isend_wait8")) {
        for (int i = 0; i < iters; i++) {
            MPI_Irecv(&rb, 1, MPI_DOUBLE, MPI_ANY_SOURCE, 4, MPI_COMM_SELF, &rq[0]);
            MPI_Isend(&sb, 1, MPI_DOUBLE, 0, 4, MPI_COMM_SELF, &rq[1]);
            MPI_Waitall(2, rq, sts);
        }
    } else if (!strcmp(argv[1], "send_recv8")) {
        for (int i = 0; i < iters; i++) {
            MPI_Send(&sb, 1, MPI_DOUBLE, 0, 5, MPI_COMM_SELF);
            MPI_Recv(&rb, 1, MPI_DOUBLE, 0, 5, MPI_COMM_SELF, &st);
        }
    } else if (!strcmp(argv[1], "probe8")) {
        for (int i = 0; i < iters; i++) {
            MPI_Send(&sb, 1, MPI_DOUBLE, 0, 6, MPI_COMM_SELF);
            do
                MPI_Iprobe(0, 6, MPI_COMM_SELF, &flag, &st);
            while (!flag);
            MPI_Recv(&rb, 1, MPI_DOUBLE, 0, 6, MPI_COMM_SELF, &st);
        }
    } else if (!strcmp(argv[1], "test8")) {
        for (int i = 0; i < iters; i++) {
            MPI_Irecv(&rb, 1, MPI_DOUBLE, 0, 7, MPI_COMM_SELF, &rq[0]);
            MPI_Isend(&sb, 1, MPI_DOUBLE, 0, 7, MPI_COMM_SELF, &rq[1]);
            for (int k = 0; k < 2; k++)
                do
                    MPI_Test(&rq[k], &flag, &st);
                while (!flag);
        }
    } else if (!strcmp(argv[1], "testall8")) {
        for (int i = 0; i < iters; i++) {
            MPI_Irecv(&rb, 1, MPI_DOUBLE, 0, 8, MPI_COMM_SELF, &rq[0]);
            MPI_Isend(&sb, 1, MPI_DOUBLE, 0, 8, MPI_COMM_SELF, &rq[1]);
            do
                MPI_Testall(2, rq, &flag, sts);
            while (!flag);
        }
    } else if (!strcmp(argv[1], "waitany8")) {
        for (int i = 0; i < iters; i++) {
            MPI_Irecv(&rb, 1, MPI_DOUBLE, 0, 9, MPI_COMM_SELF, &rq[0]);
            MPI_Isend(&sb, 1, MPI_DOUBLE, 0, 9, MPI_COMM_SELF, &rq[1]);
            MPI_Waitany(2, rq, &idx, &st);
            MPI_Waitany(2, rq, &idx, &st);
        }
    } else {
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Finalize();
    return 0;
}
