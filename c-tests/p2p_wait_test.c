/* oxmpi-test: ranks=2,4,8 */
/* Completion functions: MPI_Wait/Test/Waitall/Testall/Waitany/Testany/Waitsome/Testsome
   with MPI_REQUEST_NULL entries, all-null arrays, MPI_STATUS(ES)_IGNORE, and a
   deterministic "not yet complete" check (the peer sends only after a barrier). */
#include "oxtest.h"

#define NR 7 /* array slots; even slots are MPI_REQUEST_NULL */

static void post(MPI_Request *req, int *buf, int peer, int round)
{
    for (int i = 0; i < NR; i++) {
        req[i] = MPI_REQUEST_NULL;
        buf[i] = -1;
        if (i % 2)
            MPI_OK(MPI_Irecv(&buf[i], 1, MPI_INT, peer, round * 100 + i, MPI_COMM_WORLD, &req[i]));
    }
}

static void send_all(int peer, int round)
{
    for (int i = NR - 1; i >= 0; i--)
        if (i % 2) {
            int v = round * 1000 + i;
            MPI_OK(MPI_Send(&v, 1, MPI_INT, peer, round * 100 + i, MPI_COMM_WORLD));
        }
}

static void check_bufs(const int *buf, int round)
{
    for (int i = 1; i < NR; i += 2)
        CHECK(buf[i] == round * 1000 + i, "round %d slot %d got %d", round, i, buf[i]);
}

int main(int argc, char **argv)
{
    int rank, size, flag, idx, outcount;
    int indices[NR];
    MPI_Status st, sts[NR];
    MPI_Request req[NR];
    int buf[NR];
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));

    /* ---- all-null behaviour */
    MPI_Request nulls[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Request one = MPI_REQUEST_NULL;
    MPI_OK(MPI_Wait(&one, &st));
    CHECK_STATUS(st, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_BYTE, 0);
    flag = 0;
    MPI_OK(MPI_Test(&one, &flag, &st));
    CHECK(flag, "Test(MPI_REQUEST_NULL) flag=0");
    CHECK_STATUS(st, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_BYTE, 0);
    MPI_OK(MPI_Waitall(3, nulls, sts));
    CHECK_STATUS(sts[1], MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_BYTE, 0);
    flag = 0;
    MPI_OK(MPI_Testall(3, nulls, &flag, MPI_STATUSES_IGNORE));
    CHECK(flag, "Testall(all null) flag=0");
    idx = 5;
    MPI_OK(MPI_Waitany(3, nulls, &idx, &st));
    CHECK(idx == MPI_UNDEFINED, "Waitany(all null) index %d", idx);
    flag = 0;
    idx = 5;
    MPI_OK(MPI_Testany(3, nulls, &idx, &flag, &st));
    CHECK(flag && idx == MPI_UNDEFINED, "Testany(all null) flag %d index %d", flag, idx);
    outcount = 5;
    MPI_OK(MPI_Waitsome(3, nulls, &outcount, indices, sts));
    CHECK(outcount == MPI_UNDEFINED, "Waitsome(all null) outcount %d", outcount);
    outcount = 5;
    MPI_OK(MPI_Testsome(3, nulls, &outcount, indices, sts));
    CHECK(outcount == MPI_UNDEFINED, "Testsome(all null) outcount %d", outcount);
    MPI_OK(MPI_Waitall(0, NULL, MPI_STATUSES_IGNORE));

    int peer = rank ^ 1;
    int active = peer < size, recver = rank & 1;
    /* ---- round 0: Test*/ /* not complete before the peer sends */
    for (int round = 0; round < 9; round++) {
        if (active && recver) {
            post(req, buf, peer, round);
            if (round == 0) {
                flag = 1;
                MPI_OK(MPI_Test(&req[1], &flag, &st));
                CHECK(!flag, "Test: receive complete before the message was sent");
                flag = 1;
                MPI_OK(MPI_Testall(NR, req, &flag, sts));
                CHECK(!flag, "Testall: complete before the messages were sent");
                flag = 1;
                idx = -3;
                MPI_OK(MPI_Testany(NR, req, &idx, &flag, &st));
                CHECK(!flag, "Testany: flag set before any message was sent (index %d)", idx);
                outcount = -3;
                MPI_OK(MPI_Testsome(NR, req, &outcount, indices, sts));
                CHECK(outcount == 0, "Testsome: outcount %d before any message was sent", outcount);
            }
            MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        } else {
            MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
            if (active)
                send_all(peer, round);
            continue;
        }
        /* complete the receives in several ways */
        int done[NR] = {0}, ndone = 0;
        switch (round) {
        case 0:
        case 1:
            MPI_OK(MPI_Waitall(NR, req, round == 0 ? sts : MPI_STATUSES_IGNORE));
            if (round == 0)
                for (int i = 0; i < NR; i++) {
                    if (i % 2)
                        CHECK_STATUS(sts[i], peer, round * 100 + i, MPI_INT, 1);
                    else
                        CHECK_STATUS(sts[i], MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_INT, 0);
                }
            break;
        case 2:
            flag = 0;
            while (!flag)
                MPI_OK(MPI_Testall(NR, req, &flag, sts));
            for (int i = 1; i < NR; i += 2)
                CHECK_STATUS(sts[i], peer, round * 100 + i, MPI_INT, 1);
            break;
        case 3:
        case 4:
            for (;;) {
                MPI_OK(MPI_Waitany(NR, req, &idx, round == 3 ? &st : MPI_STATUS_IGNORE));
                if (idx == MPI_UNDEFINED)
                    break;
                CHECK(idx >= 0 && idx < NR && idx % 2 && !done[idx], "Waitany index %d", idx);
                CHECK(req[idx] == MPI_REQUEST_NULL, "Waitany did not free request %d", idx);
                if (round == 3)
                    CHECK_STATUS(st, peer, round * 100 + idx, MPI_INT, 1);
                done[idx] = 1;
                ndone++;
            }
            CHECK(ndone == NR / 2, "Waitany completed %d requests", ndone);
            break;
        case 5:
            while (ndone < NR / 2) {
                flag = 0;
                MPI_OK(MPI_Testany(NR, req, &idx, &flag, &st));
                if (!flag)
                    continue;
                CHECK(idx != MPI_UNDEFINED, "Testany gave MPI_UNDEFINED with requests pending");
                CHECK(idx % 2 && !done[idx], "Testany index %d", idx);
                CHECK_STATUS(st, peer, round * 100 + idx, MPI_INT, 1);
                done[idx] = 1;
                ndone++;
            }
            MPI_OK(MPI_Testany(NR, req, &idx, &flag, &st));
            CHECK(flag && idx == MPI_UNDEFINED, "Testany after all done: flag %d index %d", flag, idx);
            break;
        case 6:
        case 7:
            for (;;) {
                if (round == 6)
                    MPI_OK(MPI_Waitsome(NR, req, &outcount, indices, sts));
                else
                    MPI_OK(MPI_Testsome(NR, req, &outcount, indices, MPI_STATUSES_IGNORE));
                if (outcount == MPI_UNDEFINED)
                    break;
                CHECK(outcount >= (round == 6 ? 1 : 0) && outcount <= NR, "Wait/Testsome outcount %d", outcount);
                for (int j = 0; j < outcount; j++) {
                    int i = indices[j];
                    CHECK(i % 2 && !done[i], "Wait/Testsome index %d", i);
                    if (round == 6)
                        CHECK_STATUS(sts[j], peer, round * 100 + i, MPI_INT, 1);
                    done[i] = 1;
                    ndone++;
                }
            }
            CHECK(ndone == NR / 2, "Wait/Testsome completed %d requests", ndone);
            break;
        case 8:
            for (int i = 0; i < NR; i++) {
                MPI_OK(MPI_Wait(&req[i], i == 3 ? MPI_STATUS_IGNORE : &st));
                if (i != 3 && i % 2)
                    CHECK_STATUS(st, peer, round * 100 + i, MPI_INT, 1);
            }
            break;
        }
        for (int i = 0; i < NR; i++)
            CHECK(req[i] == MPI_REQUEST_NULL, "round %d: request %d not MPI_REQUEST_NULL", round, i);
        check_bufs(buf, round);
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Finalize());
    return 0;
}
