/* oxmpi-test: ranks=3 modes=processes mpmd="-n 2 -env OXT_SEG one {exe} : -n 1 -env OXT_SEG two -genv OXT_ALL all {exe}" */
/* MPMD with -env per segment (processes mode: threads-mode ranks share one environment, so
   mpiexec refuses it there): each rank sees its own segment's value, and -genv (even written in
   a later segment, as with hydra) reaches every rank. */
#include "oxtest.h"
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, flag = 0, *appnum = NULL;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag);
    CHECK(flag && *appnum == (rank < 2 ? 0 : 1), "rank %d: MPI_APPNUM %d", rank, flag ? *appnum : -1);
    const char *seg = getenv("OXT_SEG"), *all = getenv("OXT_ALL");
    const char *want = rank < 2 ? "one" : "two";
    CHECK(seg && strcmp(seg, want) == 0, "rank %d: OXT_SEG '%s', expected '%s'", rank, seg ? seg : "(unset)", want);
    CHECK(all && strcmp(all, "all") == 0, "rank %d: OXT_ALL '%s'", rank, all ? all : "(unset)");
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
