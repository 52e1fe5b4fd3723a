/*
 * The frame a threads-mode rank thread runs its program in (linked into liboxmpi.so; see
 * src/runtime/threads/host.rs, "failure survival").
 *
 * In a job that survives failures, a rank whose thread crashes (SIGSEGV, SIGBUS, SIGFPE,
 * SIGILL, SIGABRT) must end alone, as a process of its own would, while the host process and
 * the other ranks go on. Rust has no setjmp, so this C frame keeps the jump buffer:
 * oxmpi_rank_guarded runs the rank's body below a sigsetjmp point, and oxmpi_rank_abandon, called
 * by the crash handler on that thread, jumps back to it (restoring the signal mask the handler
 * blocked). The frames in between (the program's and possibly oxmpi's) are dropped without
 * running anything, as the kernel drops a dead process's.
 *
 * A rank thread that ends with pthread_exit (its own call, not the exit() interposer's) runs the
 * cleanup handler `vanished`, so the host learns that the rank is gone.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <stddef.h>

static __thread sigjmp_buf *guard;

typedef void (*rank_fn)(void *);

/* Runs body(arg); 0 when it returned, 1 when the thread abandoned it (oxmpi_rank_abandon). */
int oxmpi_rank_guarded(rank_fn body, rank_fn vanished, void *arg)
{
    sigjmp_buf here;
    int abandoned = 0;
    pthread_cleanup_push(vanished, arg);
    if (sigsetjmp(here, 1) == 0) {
        guard = &here;
        body(arg);
    } else {
        abandoned = 1;
    }
    guard = NULL;
    pthread_cleanup_pop(0);
    return abandoned;
}

/* Returns only when the calling thread runs no guarded body (a thread the rank created). */
void oxmpi_rank_abandon(void)
{
    sigjmp_buf *g = guard;
    if (g)
        siglongjmp(*g, 1);
}

/* Whether the calling thread runs a guarded body (a rank's own thread, not one it created). */
int oxmpi_rank_guard_set(void)
{
    return guard != NULL;
}
