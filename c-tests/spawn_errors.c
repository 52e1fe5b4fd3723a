/* oxmpi-test: ranks=1,2 modes=processes,threads env=OXMPI_UNIVERSE_SIZE=4 */
/* Bad spawns fail cleanly at every rank, with the standard's classes, and leave the job able to
   spawn: a missing program (MPI_ERR_SPAWN), maxprocs 0 (MPI_ERR_ARG), an invalid root
   (MPI_ERR_ROOT), a bad info handle (MPI_ERR_INFO), a malformed soft (MPI_ERR_INFO), another
   host (MPI_ERR_SPAWN), more ranks than the job has slots for (64; MPI_ERR_SPAWN); then soft
   starts the largest allowed count that fits, with MPI_ERR_SPAWN in array_of_errcodes for the
   rest. */
#define _DEFAULT_SOURCE
#include "oxtest.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank, size, rc;
    MPI_Comm parent, inter;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_get_parent(&parent));
    if (parent != MPI_COMM_NULL) {
        MPI_OK(MPI_Comm_disconnect(&parent));
        MPI_OK(MPI_Finalize());
        return 0;
    }
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    CHECK(n > 0, "readlink");
    exe[n] = 0;
    int errcodes[8];

    rc = MPI_Comm_spawn("/nonexistent/oxmpi-no-such-program", MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, errcodes);
    CHECK_CLASS(rc, MPI_ERR_SPAWN);
    rc = MPI_Comm_spawn("oxmpi-no-such-program-in-path", MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, errcodes);
    CHECK_CLASS(rc, MPI_ERR_SPAWN);
    if (rank == 0) {
        /* arguments significant at the root only: the other ranks get MPI_ERR_SPAWN */
        rc = MPI_Comm_spawn(exe, MPI_ARGV_NULL, 0, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, errcodes);
        CHECK_CLASS(rc, MPI_ERR_ARG);
    } else {
        rc = MPI_Comm_spawn(exe, MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, errcodes);
        CHECK_CLASS(rc, MPI_ERR_SPAWN);
    }
    rc = MPI_Comm_spawn(exe, MPI_ARGV_NULL, 1, MPI_INFO_NULL, size, MPI_COMM_WORLD, &inter, errcodes);
    CHECK_CLASS(rc, MPI_ERR_ROOT);
    MPI_Info bad = (MPI_Info)0x12345;
    rc = MPI_Comm_spawn(exe, MPI_ARGV_NULL, 1, rank == 0 ? bad : MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, errcodes);
    CHECK(rc != MPI_SUCCESS, "a bad info handle fails");
    if (rank == 0)
        CHECK_CLASS(rc, MPI_ERR_INFO);
    MPI_Info info;
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "soft", "x:y"));
    rc = MPI_Comm_spawn(exe, MPI_ARGV_NULL, 1, info, 0, MPI_COMM_WORLD, &inter, errcodes);
    if (rank == 0)
        CHECK_CLASS(rc, MPI_ERR_INFO);
    else
        CHECK_CLASS(rc, MPI_ERR_SPAWN);
    MPI_OK(MPI_Info_delete(info, "soft"));
    MPI_OK(MPI_Info_set(info, "host", "oxmpi-no-such-host.invalid"));
    rc = MPI_Comm_spawn(exe, MPI_ARGV_NULL, 1, info, 0, MPI_COMM_WORLD, &inter, errcodes);
    CHECK_CLASS(rc, MPI_ERR_SPAWN);
    MPI_OK(MPI_Info_delete(info, "host"));
    /* the job has 64 slots for ranks (MPI_UNIVERSE_SIZE, 4, is a hint) */
    static int codes[200];
    rc = MPI_Comm_spawn(exe, MPI_ARGV_NULL, 200, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, codes);
    CHECK_CLASS(rc, MPI_ERR_SPAWN);
    /* soft: 200 does not fit, 2 does; the others get MPI_ERR_SPAWN */
    MPI_OK(MPI_Info_set(info, "soft", "2,200"));
    MPI_OK(MPI_Info_set(info, "host", "localhost"));
    for (int i = 0; i < 200; i++)
        codes[i] = -1;
    MPI_OK(MPI_Comm_spawn(exe, MPI_ARGV_NULL, 200, info, 0, MPI_COMM_WORLD, &inter, codes));
    int rsize;
    MPI_OK(MPI_Comm_remote_size(inter, &rsize));
    CHECK(rsize == 2, "soft started %d, want 2", rsize);
    for (int i = 0; i < 200; i++)
        CHECK(codes[i] == (i < 2 ? MPI_SUCCESS : MPI_ERR_SPAWN), "errcodes[%d] = %d", i, codes[i]);
    MPI_OK(MPI_Comm_disconnect(&inter));
    MPI_OK(MPI_Info_free(&info));
    MPI_OK(MPI_Finalize());
    if (rank == 0)
        printf("spawn_errors OK\n");
    return 0;
}
