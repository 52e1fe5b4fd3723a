/* oxmpi-test: ranks=1,2 mpiexec-args="-bind-to core" */
/* mpiexec -bind-to core (hydra's spelling; also --bind-to): every rank runs on CPUs of one core
   of its own (processes mode: its process; threads mode: its thread), the ranks of a node
   (MPI_COMM_TYPE_SHARED) on different cores. Needs as many cores as ranks per host (mpiexec
   refuses more). */
#define _GNU_SOURCE
#include "oxtest.h"
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    cpu_set_t set;
    CPU_ZERO(&set);
    CHECK(sched_getaffinity(0, sizeof set, &set) == 0, "sched_getaffinity");
    int n = CPU_COUNT(&set);
    /* One core: its hardware threads, siblings in sysfs; at most a handful. */
    char path[128], sib[256] = "";
    int first = -1;
    for (int c = 0; c < CPU_SETSIZE && first < 0; c++)
        if (CPU_ISSET(c, &set))
            first = c;
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", first);
    FILE *f = fopen(path, "r");
    if (f) {
        if (!fgets(sib, sizeof sib, f))
            sib[0] = 0;
        fclose(f);
    }
    /* Count the siblings ("0-1" or "0,4"). */
    int nsib = 0;
    for (char *p = sib; *p && *p != '\n';) {
        long a = strtol(p, &p, 10), b = a;
        if (*p == '-')
            b = strtol(p + 1, &p, 10);
        nsib += (int)(b - a + 1);
        if (*p == ',')
            p++;
    }
    CHECK(n >= 1 && n <= (nsib > 0 ? nsib : 1), "rank %d may run on %d CPUs: not bound to one core (siblings of CPU %d: %s)", rank, n, first, sib);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &size);
    uint64_t mine = 0, all = 0;
    for (int c = 0; c < 64; c++)
        if (CPU_ISSET(c, &set))
            mine |= (uint64_t)1 << c;
    /* Disjoint: the OR of the masks has as many bits as their counts' sum (CPUs below 64). */
    MPI_Allreduce(&mine, &all, 1, MPI_UINT64_T, MPI_BOR, node);
    int bits = __builtin_popcountll(mine), total = 0;
    MPI_Allreduce(&bits, &total, 1, MPI_INT, MPI_SUM, node);
    CHECK(__builtin_popcountll(all) == total, "ranks share CPUs: union %d CPUs, sum %d", __builtin_popcountll(all), total);
    if (size > 1 && n == 1) {
        int cpus[2] = {first, first};
        MPI_Allreduce(MPI_IN_PLACE, &cpus[0], 1, MPI_INT, MPI_MIN, node);
        MPI_Allreduce(MPI_IN_PLACE, &cpus[1], 1, MPI_INT, MPI_MAX, node);
        CHECK(cpus[0] != cpus[1], "ranks on one CPU");
    }
    MPI_Comm_free(&node);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
