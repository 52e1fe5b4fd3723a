/* oxmpi-test: ranks=1 mpich=skip */
/* The status conversions of MPI 4.1 section 19.3.5 from C: MPI_Status_c2f / f2c (INTEGER
   status(MPI_STATUS_SIZE)), MPI_Status_c2f08 / f082c and f2f08 / f082f (MPI_F08_status, the
   TYPE(MPI_Status) of mpi_f08). A received message's status goes around every conversion and
   keeps its source, tag and count; converting from a status-ignore sentinel is an error.
   mpich=skip: MPICH 4.0.2 has no MPI_Status_f2f08 / f082f / c2f08 / f082c. */
#include "oxtest.h"

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    int rank, data[3] = {1, 2, 3}, got[3], count = -1;
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_Status st, back;
    MPI_OK(MPI_Sendrecv(data, 3, MPI_INT, rank, 11, got, 3, MPI_INT, rank, 11, MPI_COMM_WORLD, &st));

    MPI_Fint f[MPI_F_STATUS_SIZE];
    MPI_F08_status f08, f08b;
    MPI_OK(MPI_Status_c2f08(&st, &f08));
    CHECK(f08.MPI_SOURCE == rank && f08.MPI_TAG == 11, "c2f08: source %d tag %d", f08.MPI_SOURCE, f08.MPI_TAG);
    MPI_OK(MPI_Status_f082f(&f08, f));
    CHECK(f[MPI_F_SOURCE] == rank && f[MPI_F_TAG] == 11, "f082f: source %d tag %d", f[MPI_F_SOURCE], f[MPI_F_TAG]);
    MPI_OK(MPI_Status_f2f08(f, &f08b));
    MPI_OK(MPI_Status_f082c(&f08b, &back));
    CHECK(back.MPI_SOURCE == rank && back.MPI_TAG == 11, "f082c: source %d tag %d", back.MPI_SOURCE, back.MPI_TAG);
    MPI_OK(MPI_Get_count(&back, MPI_INT, &count));
    CHECK(count == 3, "count after the round trip: %d", count);

    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    CHECK(MPI_Status_f082c(MPI_F08_STATUS_IGNORE, &back) != MPI_SUCCESS, "f082c from MPI_F08_STATUS_IGNORE succeeded");
    CHECK(MPI_Status_f2f08(MPI_F_STATUS_IGNORE, &f08) != MPI_SUCCESS, "f2f08 from MPI_F_STATUS_IGNORE succeeded");
    CHECK(MPI_Status_c2f08(&st, NULL) != MPI_SUCCESS, "c2f08 into NULL succeeded");
    MPI_Finalize();
    return 0;
}
