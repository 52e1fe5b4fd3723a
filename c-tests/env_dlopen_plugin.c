/* oxmpi-test: ranks=1,2,4,8 mpich=skip timeout=60 */
/* A plugin the program loads with dlopen binds to the program that loaded it and has globals of
 * its own, per rank, as in a process of its own: in threads mode every rank's program is a
 * private instance, so its plugin must be too (a Python extension module and its interpreter are
 * this case). The plugin calls back into the program (oxt_plugin_host_value, exported: oxmpi's
 * mpicc links with -rdynamic; MPICH's mpicc does not, hence mpich=skip) and counts its calls in a
 * static; dlopen(NULL) finds the rank's own symbols. A library that binds in the global scope alone (libm) is loaded as libc loads it. */
#include "oxtest.h"
#include <dlfcn.h>
#include <math.h>
#include <unistd.h>

static int host_value; /* per rank: rank + 1 */

int oxt_plugin_host_value(void);
int oxt_plugin_host_value(void)
{
    return host_value;
}

static const char *plugin_src =
    "int oxt_plugin_host_value(void);\n"
    "static int calls;\n"
    "int oxt_plugin_bump(void) { return oxt_plugin_host_value() * 100 + ++calls; }\n";

int main(int argc, char **argv)
{
    int rank, size;
    char dir[64], so[96], cmd[2048];
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    host_value = rank + 1;

    /* Rank 0 builds the plugin and tells the others where it is. */
    long id = 0;
    if (rank == 0) {
        id = (long)getpid();
        snprintf(dir, sizeof dir, "/tmp/oxt-dlopen-plugin-%ld", id);
        snprintf(cmd, sizeof cmd,
                 "mkdir -p %s && printf '%%s' '%s' > %s/plugin.c && ${CC:-cc} -shared -fPIC -o %s/plugin.so %s/plugin.c",
                 dir, plugin_src, dir, dir, dir);
        CHECK(system(cmd) == 0, "building the plugin failed: %s", cmd);
        for (int r = 1; r < size; r++)
            MPI_OK(MPI_Send(&id, 1, MPI_LONG, r, 0, MPI_COMM_WORLD));
    } else {
        MPI_OK(MPI_Recv(&id, 1, MPI_LONG, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        snprintf(dir, sizeof dir, "/tmp/oxt-dlopen-plugin-%ld", id);
    }
    snprintf(so, sizeof so, "%s/plugin.so", dir);

    void *h = dlopen(so, RTLD_NOW);
    CHECK(h != NULL, "dlopen %s: %s", so, dlerror());
    int (*bump)(void) = (int (*)(void))dlsym(h, "oxt_plugin_bump");
    CHECK(bump != NULL, "dlsym oxt_plugin_bump: %s", dlerror());
    for (int i = 1; i <= 3; i++) {
        int v = bump();
        CHECK(v == (rank + 1) * 100 + i, "call %d: plugin returned %d, want %d (host value %d, %d calls)", i, v,
              (rank + 1) * 100 + i, rank + 1, i);
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD)); /* all ranks' plugins are live at once */
    }
    /* A second dlopen of the same path by the same rank gives the same plugin (same state). */
    void *h2 = dlopen(so, RTLD_NOW);
    CHECK(h2 != NULL, "second dlopen: %s", dlerror());
    int (*bump2)(void) = (int (*)(void))dlsym(h2, "oxt_plugin_bump");
    CHECK(bump2 != NULL && bump2() == (rank + 1) * 100 + 4, "the second handle is another instance");

    /* dlopen(NULL) is the program: its symbols are this rank's. */
    void *self = dlopen(NULL, RTLD_NOW);
    CHECK(self != NULL, "dlopen(NULL): %s", dlerror());
    int (*hv)(void) = (int (*)(void))dlsym(self, "oxt_plugin_host_value");
    CHECK(hv != NULL && hv() == rank + 1, "dlsym(dlopen(NULL), oxt_plugin_host_value) is not this rank's");

    /* A library that binds in the global scope: loaded by path as usual. */
    void *m = dlopen("libm.so.6", RTLD_NOW);
    CHECK(m != NULL, "dlopen libm.so.6: %s", dlerror());
    double (*c)(double) = (double (*)(double))dlsym(m, "cos");
    CHECK(c != NULL && c(0.0) == 1.0, "libm's cos");
    /* A missing file fails as dlopen fails. */
    CHECK(dlopen("/nonexistent/oxt-plugin.so", RTLD_NOW) == NULL, "dlopen of a missing file succeeded");
    CHECK(dlerror() != NULL, "no dlerror after a failed dlopen");

    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        CHECK(system(cmd) == 0, "cleanup failed");
    }
    MPI_OK(MPI_Finalize());
    return 0;
}
