/* oxmpi-test: ranks=1,2,4,8 */
/* MPI_Init_thread, MPI_Query_thread, MPI_Is_thread_main (also from a second thread). */
#define _POSIX_C_SOURCE 200809L
#include "oxtest.h"
#include <pthread.h>

static void *other_thread(void *arg)
{
    int *res = (int *)arg;
    *res = -1;
    MPI_Is_thread_main(res);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = -1, q = -1, main_flag = -1;
    CHECK(MPI_THREAD_SINGLE < MPI_THREAD_FUNNELED && MPI_THREAD_FUNNELED < MPI_THREAD_SERIALIZED &&
              MPI_THREAD_SERIALIZED < MPI_THREAD_MULTIPLE,
          "thread level constants are not ordered");
    MPI_OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    CHECK(provided >= MPI_THREAD_SINGLE && provided <= MPI_THREAD_MULTIPLE, "provided=%d out of range", provided);
    MPI_OK(MPI_Query_thread(&q));
    CHECK(q == provided, "MPI_Query_thread gave %d, Init_thread provided %d", q, provided);
    MPI_OK(MPI_Is_thread_main(&main_flag));
    CHECK(main_flag == 1, "MPI_Is_thread_main on the main thread gave %d", main_flag);

    if (provided == MPI_THREAD_MULTIPLE) {
        pthread_t th;
        int other = -2;
        CHECK(pthread_create(&th, NULL, other_thread, &other) == 0, "pthread_create failed");
        pthread_join(th, NULL);
        CHECK(other == 0, "MPI_Is_thread_main on a second thread gave %d", other);
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Finalize());
    return 0;
}
