/*
 * liboxmpi-threads.so: the preload library of oxmpi's threads mode.
 *
 * In threads mode every rank of a job is a thread of one host process (mpiexec --threads-host),
 * each running its own private instance of the user's program. Two libc entry points would then
 * do the wrong thing for a rank, so this library, preloaded ahead of libc, interposes them:
 *
 *   exit()            One rank calling exit() (or returning from its main, which the program's
 *                     instance turns into exit()) would end the whole process and every other
 *                     rank with it. If the calling thread is a rank thread, oxmpi records the
 *                     exit status as that rank's result and only the thread ends.
 *   pthread_create()  oxmpi keeps "which rank am I" per thread. A thread that a rank creates
 *                     (OpenMP workers, helper threads) must belong to the same rank so that its
 *                     MPI calls act for it, so the new thread adopts its creator's rank context
 *                     before it runs the user's start routine.
 *   signal(), sigaction()
 *                     Signal dispositions are per process, so a rank that resets SIGSEGV, SIGBUS,
 *                     SIGFPE, SIGILL or SIGABRT to SIG_DFL would also remove oxmpi's handler,
 *                     which names the crashing rank before ending the job. For a rank thread such
 *                     a reset is kept as a no-op (the handler ends the job just as the default
 *                     action does, and reports SIG_DFL as the old disposition); any other
 *                     disposition, and every call outside rank threads, goes to libc unchanged.
 *
 *   nanosleep(), clock_nanosleep(), usleep(), sleep()
 *                     When ranks run as fibers on shared carrier threads, a rank sleeping in the
 *                     kernel would hold its carrier, and the other ranks of that carrier, for the
 *                     whole sleep. A rank fiber's sleep parks the fiber instead (oxmpi's
 *                     oxmpi_threads_sleep); everyone else sleeps in libc as usual.
 *
 * The oxmpi side (oxmpi_threads_current, oxmpi_threads_adopt, oxmpi_threads_exit_hook,
 * oxmpi_threads_sleep) lives in
 * liboxmpi.so (libmpi.so.12), which mpiexec preloads together with this library. The hooks are
 * looked up once, lazily, with dlsym(RTLD_DEFAULT); when they are absent (this library preloaded
 * into an unrelated process, e.g. a command a rank runs with system()) both interposers behave
 * exactly like libc's functions.
 *
 * Build: cc -shared -fPIC -O2 -Wall -o liboxmpi-threads.so threads-preload.c -ldl -lpthread
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

typedef int (*current_fn)(void);
typedef void (*adopt_fn)(int);
typedef int (*exit_hook_fn)(int);
typedef int (*sleep_hook_fn)(unsigned long long);
typedef int (*nanosleep_fn)(const struct timespec *, struct timespec *);
typedef int (*clock_nanosleep_fn)(clockid_t, int, const struct timespec *, struct timespec *);
typedef void (*exit_fn)(int) __attribute__((noreturn));
typedef int (*pthread_create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
typedef sighandler_t (*signal_fn)(int, sighandler_t);

static pthread_once_t once = PTHREAD_ONCE_INIT;
static current_fn hook_current;
static adopt_fn hook_adopt;
static exit_hook_fn hook_exit;
static sleep_hook_fn hook_sleep;
static nanosleep_fn real_nanosleep;
static clock_nanosleep_fn real_clock_nanosleep;
static exit_fn real_exit;
static pthread_create_fn real_pthread_create;
static sigaction_fn real_sigaction;
static signal_fn real_signal;

static void resolve(void)
{
    /* The oxmpi hooks: absent unless liboxmpi.so is loaded (then we behave like libc). */
    hook_current = (current_fn)dlsym(RTLD_DEFAULT, "oxmpi_threads_current");
    hook_adopt = (adopt_fn)dlsym(RTLD_DEFAULT, "oxmpi_threads_adopt");
    hook_exit = (exit_hook_fn)dlsym(RTLD_DEFAULT, "oxmpi_threads_exit_hook");
    hook_sleep = (sleep_hook_fn)dlsym(RTLD_DEFAULT, "oxmpi_threads_sleep");
    real_nanosleep = (nanosleep_fn)dlsym(RTLD_NEXT, "nanosleep");
    real_clock_nanosleep = (clock_nanosleep_fn)dlsym(RTLD_NEXT, "clock_nanosleep");
    if (!hook_current || !hook_adopt)
        hook_current = NULL, hook_adopt = NULL; /* both or neither */

    real_exit = (exit_fn)dlsym(RTLD_NEXT, "exit");
    real_sigaction = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
    real_signal = (signal_fn)dlsym(RTLD_NEXT, "signal");

    /* glibc versions pthread_create: plain dlsym(RTLD_NEXT) may hand back an old compatibility
     * version, so ask for the current ones by name (2.34 moved it into libc; 2.2.5 is the
     * x86-64 baseline) before falling back to whatever the default is on other systems. */
    real_pthread_create = (pthread_create_fn)dlvsym(RTLD_NEXT, "pthread_create", "GLIBC_2.34");
    if (!real_pthread_create)
        real_pthread_create = (pthread_create_fn)dlvsym(RTLD_NEXT, "pthread_create", "GLIBC_2.2.5");
    if (!real_pthread_create)
        real_pthread_create = (pthread_create_fn)dlsym(RTLD_NEXT, "pthread_create");
}

static void init(void)
{
    pthread_once(&once, resolve);
}

/* A rank's exit() ends its thread only; anyone else's exit() is libc's. */
void exit(int code)
{
    init();
    if (hook_exit && hook_exit(code)) {
        /* The hook recorded the rank's exit status; the rank's atexit handlers and stdio belong
         * to the whole process, so only flush what the rank wrote. */
        fflush(stdout);
        fflush(stderr);
        pthread_exit(NULL);
    }
    if (real_exit)
        real_exit(code);
    _exit(code); /* no libc exit to forward to: cannot happen with a dynamic libc */
}

/* What the new thread needs to start as a member of its creator's rank. */
struct start {
    void *(*routine)(void *);
    void *arg;
    int ctx;
};

static void *start_in_rank(void *p)
{
    struct start s = *(struct start *)p;
    free(p);
    hook_adopt(s.ctx);
    return s.routine(s.arg);
}

/* Threads created by a rank belong to that rank. */
int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*routine)(void *), void *arg)
{
    init();
    if (!real_pthread_create)
        return EAGAIN;
    int ctx = hook_current ? hook_current() : -1;
    if (ctx < 0) /* not created by a rank (or no oxmpi): nothing to pass on */
        return real_pthread_create(thread, attr, routine, arg);
    struct start *s = malloc(sizeof *s);
    if (!s)
        return EAGAIN; /* what pthread_create reports for lack of resources */
    s->routine = routine;
    s->arg = arg;
    s->ctx = ctx;
    int rc = real_pthread_create(thread, attr, start_in_rank, s);
    if (rc != 0)
        free(s);
    return rc;
}

/* True when a rank thread asks to reset a crash signal to its default action. */
static int keep_crash_handler(int sig, sighandler_t handler)
{
    if (handler != SIG_DFL || !hook_current || hook_current() < 0)
        return 0;
    return sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL || sig == SIGABRT;
}

int sigaction(int sig, const struct sigaction *act, struct sigaction *oldact)
{
    init();
    if (act && !(act->sa_flags & SA_SIGINFO) && keep_crash_handler(sig, act->sa_handler)) {
        if (oldact) {
            memset(oldact, 0, sizeof *oldact);
            oldact->sa_handler = SIG_DFL;
        }
        return 0;
    }
    return real_sigaction(sig, act, oldact);
}

sighandler_t signal(int sig, sighandler_t handler)
{
    init();
    if (keep_crash_handler(sig, handler))
        return SIG_DFL;
    return real_signal(sig, handler);
}

/* With -std=c99 and similar, glibc's <signal.h> maps signal() to __sysv_signal(); the BSD and
 * System V spellings exist too. Same rule for each, then libc's own function. */
#define SIGNAL_ALIAS(name)                                                  \
    sighandler_t name(int sig, sighandler_t handler)                        \
    {                                                                       \
        static signal_fn cached; /* racing first calls store the same value */ \
        signal_fn real;                                                     \
        init();                                                             \
        if (keep_crash_handler(sig, handler))                               \
            return SIG_DFL;                                                 \
        real = __atomic_load_n(&cached, __ATOMIC_ACQUIRE);                  \
        if (!real) {                                                        \
            real = (signal_fn)dlsym(RTLD_NEXT, #name);                      \
            __atomic_store_n(&cached, real, __ATOMIC_RELEASE);              \
        }                                                                   \
        return real ? real(sig, handler) : real_signal(sig, handler);       \
    }
SIGNAL_ALIAS(__sysv_signal)
SIGNAL_ALIAS(sysv_signal)
SIGNAL_ALIAS(bsd_signal)

/* Sleeps of rank fibers park the fiber (see the top of this file). Returns 1 if it did. */
static int fiber_sleep(unsigned long long ns)
{
    init();
    return hook_sleep && hook_sleep(ns);
}

static unsigned long long ns_of(const struct timespec *t)
{
    if (t->tv_sec < 0)
        return 0;
    return (unsigned long long)t->tv_sec * 1000000000ull + (unsigned long long)t->tv_nsec;
}

int nanosleep(const struct timespec *req, struct timespec *rem)
{
    if (req && req->tv_nsec >= 0 && req->tv_nsec < 1000000000L && fiber_sleep(ns_of(req))) {
        if (rem)
            rem->tv_sec = 0, rem->tv_nsec = 0;
        return 0;
    }
    init();
    return real_nanosleep(req, rem);
}

int clock_nanosleep(clockid_t clock, int flags, const struct timespec *req, struct timespec *rem)
{
    if (req && req->tv_nsec >= 0 && req->tv_nsec < 1000000000L && (clock == CLOCK_MONOTONIC || clock == CLOCK_REALTIME)) {
        unsigned long long ns = ns_of(req);
        if (flags & TIMER_ABSTIME) {
            struct timespec now;
            clock_gettime(clock, &now);
            unsigned long long n = ns_of(&now);
            ns = ns > n ? ns - n : 0;
        }
        if (fiber_sleep(ns)) {
            if (rem && !(flags & TIMER_ABSTIME))
                rem->tv_sec = 0, rem->tv_nsec = 0;
            return 0;
        }
    }
    init();
    return real_clock_nanosleep(clock, flags, req, rem);
}

int usleep(useconds_t usec)
{
    if (fiber_sleep((unsigned long long)usec * 1000ull))
        return 0;
    struct timespec t = {usec / 1000000, (long)(usec % 1000000) * 1000};
    init();
    return real_nanosleep(&t, NULL);
}

unsigned int sleep(unsigned int seconds)
{
    if (fiber_sleep((unsigned long long)seconds * 1000000000ull))
        return 0;
    struct timespec t = {seconds, 0}, rem = {0, 0};
    init();
    if (real_nanosleep(&t, &rem) != 0)
        return (unsigned int)rem.tv_sec + (rem.tv_nsec > 0);
    return 0;
}
