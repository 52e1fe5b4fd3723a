/* oxmpi-test: ranks=1,2,3,4,5,6,7,8,12 timeout=60 */
/* MPI_Allreduce: SUM/PROD/MAX/MIN/bitwise/logical on int, long, double, float, unsigned char and
   int64_t, MINLOC/MAXLOC on MPI_DOUBLE_INT and MPI_2INT, with and without MPI_IN_PLACE, counts 0,
   1, 1000 and 100000, every rank count up to 8 (the non-power-of-two fold-in). Also checks that
   all ranks get bit-identical floating-point sums of inexact values. */
#include "oxcoll.h"

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &oxc_rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &oxc_size));
    int counts[4] = {0, 1, 1000, 100000};
    for (int c = 0; c < 4; c++)
        for (int inplace = 0; inplace < 2; inplace++) {
            if (counts[c] == 100000 && inplace)
                continue;
            oxc_all_cases(counts[c], -1, inplace);
            oxc_loc_cases(counts[c], -1, inplace);
        }
    oxc_p2p_isolation(-1);

    /* Inexact sums: every rank must hold the same bits (compare through a MAX and MIN). */
    enum { N = 512 };
    double s[N], r[N], hi[N], lo[N];
    uint64_t seed = 12345 + (uint64_t)oxc_rank * 7919;
    for (int i = 0; i < N; i++)
        s[i] = (double)(oxt_rand(&seed) >> 11) / 9007199254740992.0 * 1e3 - 1e-3 * i;
    MPI_OK(MPI_Allreduce(s, r, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    MPI_OK(MPI_Allreduce(r, hi, N, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    MPI_OK(MPI_Allreduce(r, lo, N, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD));
    for (int i = 0; i < N; i++)
        CHECK(hi[i] == r[i] && lo[i] == r[i], "[%d]: ranks disagree on the sum: %.17g here, %.17g..%.17g", i, r[i], lo[i], hi[i]);

    /* back-to-back allreduces of different sizes */
    for (int k = 0; k < 50; k++) {
        long v = oxc_rank + k, t = 0;
        MPI_OK(MPI_Allreduce(&v, &t, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
        CHECK(t == (long)oxc_size * (oxc_size - 1) / 2 + (long)k * oxc_size, "round %d: %ld", k, t);
    }

    float f = 1.5f, g = 0;
    MPI_OK(MPI_Allreduce(&f, &g, 1, MPI_FLOAT, MPI_PROD, MPI_COMM_SELF));
    CHECK(g == 1.5f, "MPI_COMM_SELF allreduce gave %g", g);
    MPI_OK(MPI_Finalize());
    return 0;
}
