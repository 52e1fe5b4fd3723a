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
 *   pthread_exit()    A rank that runs as a fiber on a shared carrier thread and calls
 *                     pthread_exit would end the carrier (and unwind past the fiber's frames):
 *                     oxmpi ends just the fiber instead (oxmpi_threads_fiber_exit), as the
 *                     rank's death. Rank threads and every other thread: libc's.
 *   pthread_create()  oxmpi keeps "which rank am I" per thread. A thread that a rank creates
 *                     (OpenMP workers, helper threads) must belong to the same rank so that its
 *                     MPI calls act for it, so the new thread adopts its creator's rank context
 *                     before it runs the user's start routine.
 *   signal(), sigaction()
 *                     Signal dispositions are per process, so a rank installing its own handler
 *                     for SIGSEGV, SIGBUS, SIGFPE, SIGILL or SIGABRT (gfortran's backtrace
 *                     handler) would replace oxmpi's, which names the crashing rank and ends the
 *                     job; a handler that returns from a fault would then run again and again.
 *                     For a rank thread these calls record the rank's own disposition in oxmpi
 *                     instead (oxmpi_threads_sigaction): on a crash of that rank, oxmpi runs the
 *                     rank's handler, and ends the job naming the rank unless the handler
 *                     repaired the fault (the same fault again right after the handler returned
 *                     means it cannot: the handler ran once). In processes mode (mpiexec
 *                     preloads this library into each rank's process too) a function handler the
 *                     program installs for these signals is wrapped to the same end: when the
 *                     same fault comes back right after it returned, the default action (the
 *                     rank dies, mpiexec names it) replaces it. Other signals, and every call
 *                     outside ranks, go to libc unchanged.
 *
 *   getopt(), getopt_long(), getopt_long_only(), __posix_getopt()
 *                     A PIE's code reads getopt's variables (optarg, optind, opterr, optopt)
 *                     from its own copies (R_X86_64_COPY), which libc's getopt never updates when
 *                     the PIE is loaded as a rank's instance, and libc's own getopt state is one
 *                     for all ranks. For a rank whose program keeps such copies, each call runs
 *                     libc's getopt under a lock on the rank's own parse (see `rank_getopt`) and
 *                     writes the results into the rank's copies.
 *
 *   nanosleep(), clock_nanosleep(), usleep(), sleep()
 *                     When ranks run as fibers on shared carrier threads, a rank sleeping in the
 *                     kernel would hold its carrier, and the other ranks of that carrier, for the
 *                     whole sleep. A rank fiber's sleep parks the fiber instead (oxmpi's
 *                     oxmpi_threads_sleep); everyone else sleeps in libc as usual.
 *
 *   rand(), srand(), random(), srandom(), initstate(), setstate(), drand48(), lrand48(),
 *   mrand48(), srand48(), seed48(), lcong48(), strtok()
 *                     State a process of its own would have to itself: kept per rank (see
 *                     "per-rank libc state" below).
 *   __cxa_atexit(), atexit()
 *                     Handlers a rank's program registers run when that rank exits, on its
 *                     thread (oxmpi_threads_atexit); libraries' handlers stay libc's.
 *
 *   execve() and the rest of the exec family
 *                     A rank's exec would replace the host process and every rank in it: refused
 *                     for rank threads (EPERM, with one line saying why); forked children and
 *                     other threads exec as usual.
 *
 *   dlopen()          Each rank's program is loaded RTLD_LOCAL, so a plugin that uses its symbols
 *                     (a Python extension module uses the rank's own libpython) cannot bind in the
 *                     global scope, and one copy of its globals would serve every rank. A rank's
 *                     dlopen() of a path asks oxmpi first (oxmpi_threads_dlopen), which loads such
 *                     a plugin for that rank alone, and dlopen(NULL) gives the rank's program (as
 *                     it gives the program in a process); everything else goes to libc's dlopen by a tail
 *                     jump, so libc still sees the original caller (its DT_RUNPATH and $ORIGIN).
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
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

typedef int (*current_fn)(void);
typedef void (*adopt_fn)(int);
typedef int (*exit_hook_fn)(int);
typedef int (*sleep_hook_fn)(unsigned long long);
typedef int (*nanosleep_fn)(const struct timespec *, struct timespec *);
typedef int (*clock_nanosleep_fn)(clockid_t, int, const struct timespec *, struct timespec *);
typedef void (*exit_fn)(int) __attribute__((noreturn));
typedef void (*pthread_exit_fn)(void *) __attribute__((noreturn));
typedef void (*fiber_exit_hook_fn)(void);
typedef int (*pthread_create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
typedef sighandler_t (*signal_fn)(int, sighandler_t);
typedef void *(*copy_address_fn)(int, const char *);
typedef int (*sigaction_hook_fn)(int, const struct sigaction *, struct sigaction *);
typedef int (*getopt_fn)(int, char *const *, const char *);
typedef int (*getopt_long_fn)(int, char *const *, const char *, const struct option *, int *);

typedef void *(*dlopen_fn)(const char *, int);
typedef int (*dlopen_hook_fn)(const char *, int, void **);

static pthread_once_t once = PTHREAD_ONCE_INIT;
static dlopen_hook_fn hook_dlopen;
/* libc's dlopen; not static: the assembly interposer below jumps through it. */
__attribute__((visibility("hidden"))) dlopen_fn oxt_real_dlopen;
static current_fn hook_current;
static adopt_fn hook_adopt;
static exit_hook_fn hook_exit;
static sleep_hook_fn hook_sleep;
static nanosleep_fn real_nanosleep;
static clock_nanosleep_fn real_clock_nanosleep;
static exit_fn real_exit;
static pthread_exit_fn real_pthread_exit;
static fiber_exit_hook_fn hook_fiber_exit;
static pthread_create_fn real_pthread_create;
static sigaction_fn real_sigaction;
static signal_fn real_signal;
static copy_address_fn hook_copy_address;
static sigaction_hook_fn hook_sigaction;
static int processes_rank; /* a rank process of an oxmpi processes-mode job */
static getopt_fn real_getopt, real_posix_getopt;
static getopt_long_fn real_getopt_long, real_getopt_long_only;

static void resolve(void)
{
    /* The oxmpi hooks: absent unless liboxmpi.so is loaded (then we behave like libc). */
    hook_current = (current_fn)dlsym(RTLD_DEFAULT, "oxmpi_threads_current");
    hook_adopt = (adopt_fn)dlsym(RTLD_DEFAULT, "oxmpi_threads_adopt");
    hook_exit = (exit_hook_fn)dlsym(RTLD_DEFAULT, "oxmpi_threads_exit_hook");
    hook_sleep = (sleep_hook_fn)dlsym(RTLD_DEFAULT, "oxmpi_threads_sleep");
    hook_copy_address = (copy_address_fn)dlsym(RTLD_DEFAULT, "oxmpi_threads_copy_address");
    hook_sigaction = (sigaction_hook_fn)dlsym(RTLD_DEFAULT, "oxmpi_threads_sigaction");
    hook_dlopen = (dlopen_hook_fn)dlsym(RTLD_DEFAULT, "oxmpi_threads_dlopen");
    oxt_real_dlopen = (dlopen_fn)dlvsym(RTLD_NEXT, "dlopen", "GLIBC_2.34");
    if (!oxt_real_dlopen)
        oxt_real_dlopen = (dlopen_fn)dlvsym(RTLD_NEXT, "dlopen", "GLIBC_2.2.5");
    if (!oxt_real_dlopen)
        oxt_real_dlopen = (dlopen_fn)dlsym(RTLD_NEXT, "dlopen");
    const char *mode = getenv("OXMPI_MODE");
    processes_rank = mode && strcmp(mode, "processes") == 0 && getenv("OXMPI_RANK");
    real_getopt = (getopt_fn)dlsym(RTLD_NEXT, "getopt");
    real_posix_getopt = (getopt_fn)dlsym(RTLD_NEXT, "__posix_getopt");
    real_getopt_long = (getopt_long_fn)dlsym(RTLD_NEXT, "getopt_long");
    real_getopt_long_only = (getopt_long_fn)dlsym(RTLD_NEXT, "getopt_long_only");
    real_nanosleep = (nanosleep_fn)dlsym(RTLD_NEXT, "nanosleep");
    real_clock_nanosleep = (clock_nanosleep_fn)dlsym(RTLD_NEXT, "clock_nanosleep");
    if (!hook_current || !hook_adopt)
        hook_current = NULL, hook_adopt = NULL; /* both or neither */

    real_exit = (exit_fn)dlsym(RTLD_NEXT, "exit");
    real_pthread_exit = (pthread_exit_fn)dlsym(RTLD_NEXT, "pthread_exit");
    hook_fiber_exit = (fiber_exit_hook_fn)dlsym(RTLD_DEFAULT, "oxmpi_threads_fiber_exit");
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

/* ---- dlopen ----------------------------------------------------------------------------
 * 1 with *out set when oxmpi loaded `file` for the calling rank; 0: libc's dlopen must. */
__attribute__((visibility("hidden"), used)) int oxt_dlopen_decide(const char *file, int flags, void **out)
{
    init();
    return hook_dlopen && hook_dlopen(file, flags, out);
}

#if defined(__x86_64__)
/* dlopen(file, flags): asks oxt_dlopen_decide, then either returns its handle or jumps to libc's
 * dlopen with the caller's arguments and return address untouched (libc takes the caller from
 * the return address: a C call from here would make this library the caller). Stack: entry
 * %rsp = 8 mod 16; two pushes and 24 bytes make the call aligned, (%rsp) is `out`. */
__asm__(".text\n"
        ".globl dlopen\n"
        ".type dlopen, @function\n"
        "dlopen:\n"
        "    pushq %rdi\n"
        "    pushq %rsi\n"
        "    subq $24, %rsp\n"
        "    movq %rsp, %rdx\n"
        "    call oxt_dlopen_decide\n"
        "    movq (%rsp), %rcx\n"
        "    addq $24, %rsp\n"
        "    popq %rsi\n"
        "    popq %rdi\n"
        "    testl %eax, %eax\n"
        "    jz 1f\n"
        "    movq %rcx, %rax\n"
        "    ret\n"
        "1:  jmp *oxt_real_dlopen(%rip)\n"
        ".size dlopen, .-dlopen\n");
#endif

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

/* A rank fiber's pthread_exit ends the fiber (the hook does not return); others are libc's. */
void pthread_exit(void *ret)
{
    init();
    if (hook_fiber_exit)
        hook_fiber_exit();
    real_pthread_exit(ret);
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

/* ---- exec ------------------------------------------------------------------------------
 * A rank thread's exec would replace the host process, and every other rank with it (a
 * threads-mode rank running a shell script whose last line execs a program, say). Refused with
 * one line and EPERM, so the program reports the failure as its own; a forked child (another
 * pid) and every thread outside ranks exec as usual. */
static pid_t host_pid;

__attribute__((constructor)) static void note_host_pid(void)
{
    host_pid = getpid();
}

/* 1 (with errno EPERM and the reason printed) when the calling thread is a rank of this host. */
static int exec_refused(const char *what)
{
    init();
    int ctx = hook_current ? hook_current() : -1;
    if (processes_rank || ctx < 0 || getpid() != host_pid)
        return 0;
    fprintf(stderr,
            "oxmpi: rank %d: exec of %s refused: in threads mode the ranks are threads of one "
            "process, which exec would replace; run this program with --mode processes\n",
            ctx, what ? what : "(null)");
    errno = EPERM;
    return 1;
}

#define LIBC_FN(name, type) ((type)dlsym(RTLD_NEXT, name))
typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execv_fn)(const char *, char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);

int execve(const char *path, char *const argv[], char *const envp[])
{
    return exec_refused(path) ? -1 : LIBC_FN("execve", execve_fn)(path, argv, envp);
}

int execv(const char *path, char *const argv[])
{
    return exec_refused(path) ? -1 : LIBC_FN("execv", execv_fn)(path, argv);
}

int execvp(const char *file, char *const argv[])
{
    return exec_refused(file) ? -1 : LIBC_FN("execvp", execv_fn)(file, argv);
}

int execvpe(const char *file, char *const argv[], char *const envp[])
{
    return exec_refused(file) ? -1 : LIBC_FN("execvpe", execve_fn)(file, argv, envp);
}

int fexecve(int fd, char *const argv[], char *const envp[])
{
    return exec_refused("a file descriptor") ? -1 : LIBC_FN("fexecve", fexecve_fn)(fd, argv, envp);
}

/* The execl family's argument lists, gathered into an argv for the execv family: counted first,
 * then copied into a stack array (`envp` gets the pointer after the NULL for execle). */
#define GATHER(arg0, argv, envp_out)                                                               \
    va_list ap, cp;                                                                                \
    va_start(ap, arg0);                                                                            \
    va_copy(cp, ap);                                                                               \
    size_t n = 1;                                                                                  \
    while (va_arg(cp, char *))                                                                     \
        n++;                                                                                       \
    va_end(cp);                                                                                    \
    char *argv[n + 1];                                                                             \
    argv[0] = (char *)arg0;                                                                        \
    for (size_t i = 1; i <= n; i++)                                                                \
        argv[i] = va_arg(ap, char *);                                                              \
    envp_out;                                                                                      \
    va_end(ap)

int execl(const char *path, const char *arg0, ...)
{
    if (exec_refused(path))
        return -1;
    GATHER(arg0, argv, (void)0);
    return LIBC_FN("execv", execv_fn)(path, argv);
}

int execlp(const char *file, const char *arg0, ...)
{
    if (exec_refused(file))
        return -1;
    GATHER(arg0, argv, (void)0);
    return LIBC_FN("execvp", execv_fn)(file, argv);
}

int execle(const char *path, const char *arg0, ...)
{
    if (exec_refused(path))
        return -1;
    char *const *envp;
    GATHER(arg0, argv, envp = va_arg(ap, char *const *));
    return LIBC_FN("execve", execve_fn)(path, argv, envp);
}

/* A rank's own disposition of a crash signal, kept by oxmpi (see the top of this file): 1 if
 * oxmpi took the call. */
static int rank_sigaction(int sig, const struct sigaction *act, struct sigaction *oldact)
{
    return hook_sigaction && hook_sigaction(sig, act, oldact);
}

/* signal() and its variants for a rank's crash signal: `flags` are those libc's version uses. */
static int processes_sigaction(int sig, const struct sigaction *act, struct sigaction *oldact);
static int rank_signal(int sig, sighandler_t handler, int flags, sighandler_t *old)
{
    struct sigaction act, prev;
    memset(&act, 0, sizeof act);
    act.sa_handler = handler;
    act.sa_flags = flags;
    if (!rank_sigaction(sig, &act, &prev)) {
        int rc = processes_sigaction(sig, &act, &prev);
        if (rc == -2)
            return 0;
        if (rc != 0) {
            *old = SIG_ERR;
            return 1;
        }
    }
    *old = prev.sa_handler;
    return 1;
}

/* ---- processes mode: a crash handler that cannot repair its fault runs once -------------- */
static int crash_index(int sig)
{
    switch (sig) {
    case SIGSEGV: return 0;
    case SIGBUS: return 1;
    case SIGFPE: return 2;
    case SIGILL: return 3;
    case SIGABRT: return 4;
    default: return -1;
    }
}

static struct sigaction user_crash[5]; /* the program's own handlers, which crash_wrapper runs */
static __thread struct {
    int sig;
    void *addr;
    unsigned long ip;
} last_fault; /* the last fault whose handler returned, in this thread */

static void crash_wrapper(int sig, siginfo_t *info, void *uc)
{
    int i = crash_index(sig);
    struct sigaction act = user_crash[i];
    unsigned long ip = 0;
#if defined(__x86_64__)
    if (uc)
        ip = (unsigned long)((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
#endif
    int fault = info && info->si_code > 0;
    if (fault && last_fault.sig == sig && last_fault.addr == info->si_addr && last_fault.ip == ip) {
        /* Back right after the handler returned: it cannot repair this fault. The default action
         * (the instruction faults again on return) ends the rank, and mpiexec names it. */
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        real_sigaction(sig, &dfl, NULL);
        return;
    }
    if (act.sa_flags & SA_SIGINFO)
        act.sa_sigaction(sig, info, uc);
    else if (act.sa_handler != SIG_DFL && act.sa_handler != SIG_IGN)
        act.sa_handler(sig);
    if (fault) {
        last_fault.sig = sig;
        last_fault.addr = info->si_addr;
        last_fault.ip = ip;
    }
}

/* processes mode: installs crash_wrapper in place of the program's function handler for a crash
 * signal. Returns -2 when the call is not one it takes, else sigaction's result. */
static int processes_sigaction(int sig, const struct sigaction *act, struct sigaction *oldact)
{
    int i = crash_index(sig);
    if (!processes_rank || i < 0)
        return -2;
    struct sigaction prev;
    int wrapped;
    if (real_sigaction(sig, NULL, &prev) != 0)
        return -1;
    wrapped = (prev.sa_flags & SA_SIGINFO) && prev.sa_sigaction == crash_wrapper;
    if (act && act->sa_handler != SIG_DFL && act->sa_handler != SIG_IGN) {
        struct sigaction w = *act;
        w.sa_sigaction = crash_wrapper;
        w.sa_flags |= SA_SIGINFO;
        user_crash[i] = *act;
        if (real_sigaction(sig, &w, NULL) != 0)
            return -1;
    } else if (act && real_sigaction(sig, act, NULL) != 0) {
        return -1;
    }
    if (oldact)
        *oldact = wrapped ? user_crash[crash_index(sig)] : prev;
    return 0;
}

int sigaction(int sig, const struct sigaction *act, struct sigaction *oldact)
{
    init();
    if (rank_sigaction(sig, act, oldact))
        return 0;
    int rc = processes_sigaction(sig, act, oldact);
    if (rc != -2)
        return rc;
    return real_sigaction(sig, act, oldact);
}

sighandler_t signal(int sig, sighandler_t handler)
{
    sighandler_t old;
    init();
    if (handler != SIG_ERR && rank_signal(sig, handler, SA_RESTART, &old))
        return old;
    return real_signal(sig, handler);
}

/* With -std=c99 and similar, glibc's <signal.h> maps signal() to __sysv_signal(); the BSD and
 * System V spellings exist too. Same rule for each (with its flags), then libc's own function. */
#define SIGNAL_ALIAS(name, flags)                                           \
    sighandler_t name(int sig, sighandler_t handler)                        \
    {                                                                       \
        static signal_fn cached; /* racing first calls store the same value */ \
        signal_fn real;                                                     \
        sighandler_t old;                                                   \
        init();                                                             \
        if (handler != SIG_ERR && rank_signal(sig, handler, flags, &old))   \
            return old;                                                     \
        real = __atomic_load_n(&cached, __ATOMIC_ACQUIRE);                  \
        if (!real) {                                                        \
            real = (signal_fn)dlsym(RTLD_NEXT, #name);                      \
            __atomic_store_n(&cached, real, __ATOMIC_RELEASE);              \
        }                                                                   \
        return real ? real(sig, handler) : real_signal(sig, handler);       \
    }
SIGNAL_ALIAS(__sysv_signal, SA_RESETHAND | SA_NODEFER)
SIGNAL_ALIAS(sysv_signal, SA_RESETHAND | SA_NODEFER)
SIGNAL_ALIAS(bsd_signal, SA_RESTART)

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

/* ---- getopt per rank ---------------------------------------------------------------------
 *
 * libc's getopt keeps, besides optind & co., hidden state between calls (where it is inside a
 * group like "-abc", which arguments it has set aside to permute), one for the whole process.
 * A rank's parse is therefore replayed: each call of a rank resets libc's getopt, runs it again
 * (quietly, opterr = 0, option flags aimed at a sink) over a copy of the rank's argv as it was
 * when its parse began, as many times as the rank called it before, then makes the call itself.
 * libc's getopt is deterministic, so libc is then exactly where the rank's previous call left it,
 * whatever other ranks did in between. The results go to the rank's copies of optarg, optind
 * and optopt, and libc's permutation of the argv copy to the rank's argv. A parse begins anew
 * when the rank changes optind, argv or the option strings between calls, as libc would see it;
 * it costs a few dozen calls of libc's getopt for a long command line, once per option.
 */
enum gkind { G_GETOPT, G_POSIX, G_LONG, G_LONG_ONLY };

struct parse {
    int resolved;
    int have_copies;                  /* the rank's program keeps a copy of one of the four */
    int *optind_p, *opterr_p, *optopt_p;
    char **optarg_p;                  /* the rank's copies, or the shadows below */
    int optind_s, opterr_s, optopt_s; /* shadows of variables the program has no copy of */
    char *optarg_s;
    int active;                       /* a parse is under way: the fields below describe it */
    enum gkind kind;
    int argc;
    char **argv;
    char *optstring;
    const struct option *longopts;
    struct option *quiet_longopts;    /* longopts with their flag pointers aimed at `sink` */
    char **orig;                      /* argv when the parse began (argc + 1 pointers) */
    char **left;                      /* argv as the last call left it */
    int start, calls, optind_left, finished;
};

static pthread_mutex_t getopt_lock = PTHREAD_MUTEX_INITIALIZER;
static struct parse **parses; /* by rank context, grown on demand; under getopt_lock */
static int nparses;
static int sink;

static struct parse *parse_of(int ctx)
{
    if (ctx >= nparses) {
        int n = ctx + 16;
        struct parse **p = realloc(parses, (size_t)n * sizeof *p);
        if (!p)
            return NULL;
        memset(p + nparses, 0, (size_t)(n - nparses) * sizeof *p);
        parses = p, nparses = n;
    }
    if (!parses[ctx])
        parses[ctx] = calloc(1, sizeof **parses);
    struct parse *p = parses[ctx];
    if (p && !p->resolved) {
        p->optind_p = hook_copy_address(ctx, "optind");
        p->opterr_p = hook_copy_address(ctx, "opterr");
        p->optopt_p = hook_copy_address(ctx, "optopt");
        p->optarg_p = hook_copy_address(ctx, "optarg");
        p->have_copies = p->optind_p || p->opterr_p || p->optopt_p || p->optarg_p;
        /* A fresh process's values. */
        p->optind_s = 1, p->opterr_s = 1, p->optopt_s = '?', p->optarg_s = NULL;
        if (!p->optind_p) p->optind_p = &p->optind_s;
        if (!p->opterr_p) p->opterr_p = &p->opterr_s;
        if (!p->optopt_p) p->optopt_p = &p->optopt_s;
        if (!p->optarg_p) p->optarg_p = &p->optarg_s;
        p->resolved = 1;
    }
    return p;
}

static int call_getopt(enum gkind kind, int argc, char **argv, const char *optstring, const struct option *longopts, int *longind)
{
    switch (kind) {
    case G_POSIX: return real_posix_getopt(argc, argv, optstring);
    case G_LONG: return real_getopt_long(argc, argv, optstring, longopts, longind);
    case G_LONG_ONLY: return real_getopt_long_only(argc, argv, optstring, longopts, longind);
    default: return real_getopt(argc, argv, optstring);
    }
}

static void end_parse(struct parse *p)
{
    free(p->optstring), free(p->quiet_longopts), free(p->orig), free(p->left);
    p->optstring = NULL, p->quiet_longopts = NULL, p->orig = NULL, p->left = NULL;
    p->active = 0;
}

static int begin_parse(struct parse *p, enum gkind kind, int argc, char **argv, const char *optstring, const struct option *longopts)
{
    size_t nlong = 0;
    end_parse(p);
    if (longopts)
        while (longopts[nlong].name)
            nlong++;
    p->optstring = strdup(optstring);
    p->orig = malloc(((size_t)argc + 1) * sizeof *argv);
    p->left = malloc(((size_t)argc + 1) * sizeof *argv);
    p->quiet_longopts = longopts ? malloc((nlong + 1) * sizeof *longopts) : NULL;
    if (!p->optstring || !p->orig || !p->left || (longopts && !p->quiet_longopts)) {
        end_parse(p);
        return -1;
    }
    memcpy(p->orig, argv, ((size_t)argc + 1) * sizeof *argv);
    if (longopts) {
        memcpy(p->quiet_longopts, longopts, (nlong + 1) * sizeof *longopts);
        for (size_t i = 0; i < nlong; i++)
            if (p->quiet_longopts[i].flag)
                p->quiet_longopts[i].flag = &sink;
    }
    p->kind = kind, p->argc = argc, p->argv = argv, p->longopts = longopts;
    p->start = *p->optind_p, p->calls = 0, p->finished = 0, p->active = 1;
    return 0;
}

/* One call of the rank's parse; getopt_lock held. */
static int rank_getopt(struct parse *p, enum gkind kind, int argc, char **argv, const char *optstring, const struct option *longopts, int *longind)
{
    int again = p->active && p->kind == kind && p->argc == argc && p->argv == argv && p->longopts == longopts &&
                strcmp(p->optstring, optstring) == 0 && *p->optind_p != 0 && *p->optind_p == p->optind_left &&
                memcmp(argv, p->left, (size_t)argc * sizeof *argv) == 0;
    if (again && p->finished) { /* libc answers -1 again, changing nothing else */
        *p->optarg_p = NULL;
        return -1;
    }
    if (!again && begin_parse(p, kind, argc, argv, optstring, longopts) != 0) {
        /* No memory for the replay: libc's state as it is, with the rank's variables. */
        optind = *p->optind_p, opterr = *p->opterr_p;
        int c = call_getopt(kind, argc, argv, optstring, longopts, longind);
        *p->optarg_p = optarg, *p->optind_p = optind, *p->optopt_p = optopt;
        return c;
    }
    char **scratch = p->left; /* rebuilt from orig below, then kept as "left" */
    memcpy(scratch, p->orig, ((size_t)argc + 1) * sizeof *argv);
    /* Reset libc's getopt (optind = 0 reinitialises it, with this parse's ordering), then
     * start where the rank's parse started. */
    char *none[] = {argv[0], NULL};
    optind = 0, opterr = 0;
    call_getopt(kind, 1, none, optstring, NULL, NULL);
    optind = p->start;
    for (int k = 0; k < p->calls; k++)
        call_getopt(kind, argc, scratch, optstring, p->quiet_longopts, NULL);
    opterr = *p->opterr_p;
    int c = call_getopt(kind, argc, scratch, optstring, longopts, longind);
    memcpy(argv, scratch, (size_t)argc * sizeof *argv);
    *p->optarg_p = optarg, *p->optind_p = optind, *p->optopt_p = optopt;
    p->optind_left = optind;
    p->calls++;
    p->finished = c == -1;
    return c;
}

static int any_getopt(enum gkind kind, int argc, char *const *argv, const char *optstring, const struct option *longopts, int *longind)
{
    init();
    int ctx = hook_current ? hook_current() : -1;
    pthread_mutex_lock(&getopt_lock);
    struct parse *p = ctx >= 0 && hook_copy_address ? parse_of(ctx) : NULL;
    int c;
    if (p && p->have_copies && argc > 0 && argv && optstring)
        c = rank_getopt(p, kind, argc, (char **)argv, optstring, longopts, longind);
    else
        c = call_getopt(kind, argc, (char **)argv, optstring, longopts, longind);
    pthread_mutex_unlock(&getopt_lock);
    return c;
}

/* Called by oxmpi's threads-mode host before it starts a rank: libc's getopt starts afresh
 * (optind = 0 reinitialises it) for programs that use libc's variables themselves. Under the
 * lock: an earlier rank may be in the middle of a replay (its start-up wait ends at MPI_Init,
 * and programs such as ncmpidiff parse their options after it), which a bare write of optind
 * would derail. */
void oxmpi_preload_getopt_restart(void);
void oxmpi_preload_getopt_restart(void)
{
    pthread_mutex_lock(&getopt_lock);
    optind = 0;
    pthread_mutex_unlock(&getopt_lock);
}

int getopt(int argc, char *const argv[], const char *optstring)
{
    return any_getopt(G_GETOPT, argc, argv, optstring, NULL, NULL);
}

/* What glibc's <unistd.h> calls getopt for strict POSIX programs (-std=c99 -D_POSIX_C_SOURCE). */
int __posix_getopt(int argc, char *const argv[], const char *optstring);
int __posix_getopt(int argc, char *const argv[], const char *optstring)
{
    return any_getopt(G_POSIX, argc, argv, optstring, NULL, NULL);
}

int getopt_long(int argc, char *const argv[], const char *optstring, const struct option *longopts, int *longind)
{
    return any_getopt(G_LONG, argc, argv, optstring, longopts, longind);
}

int getopt_long_only(int argc, char *const argv[], const char *optstring, const struct option *longopts, int *longind)
{
    return any_getopt(G_LONG_ONLY, argc, argv, optstring, longopts, longind);
}

/* ---- per-rank libc state: rand & co., drand48 & co., strtok, exit handlers -----------------
 *
 * A process of its own would give each rank its own generator state, its own strtok position
 * and its own exit handlers. libc keeps one of each per process, so for a rank thread (and the
 * threads it created) these calls use state kept per rank context here: the same generators
 * through glibc's reentrant forms (random_r, drand48_r), so a rank sees exactly the sequence a
 * process would. A rank that never touches them costs nothing; outside ranks (and in processes
 * mode) every call is libc's.
 *
 * Rank states live in a table indexed by rank context, filled on first use with a
 * compare-and-swap (a loser frees its copy), read with acquire loads: a state, once published,
 * stays for the life of the process. Each state has a mutex because a rank's own threads may
 * call these concurrently, as glibc's locked rand allows.
 */
#include <stdatomic.h>

#define MAX_RANK_STATES 65536

struct rank_libc {
    pthread_mutex_t lock;
    struct random_data rd;    /* rand, random, srand, srandom, initstate, setstate */
    char rbuf[128];           /* glibc's default state size (TYPE_3) */
    char *rstate;             /* the state array in use (rbuf or one given to initstate) */
    struct drand48_data d48;  /* drand48, lrand48, mrand48, srand48, seed48, lcong48 */
    unsigned short seed48_old[3];
    char *strtok_save;
};

static _Atomic(struct rank_libc *) rank_libcs[MAX_RANK_STATES];

/* The calling rank's state, or NULL outside ranks (then libc's own state is used). */
static struct rank_libc *rank_libc(void)
{
    init();
    if (processes_rank)
        return NULL; /* a process of its own: libc's state is the rank's */
    int ctx = hook_current ? hook_current() : -1;
    if (ctx < 0 || ctx >= MAX_RANK_STATES)
        return NULL;
    struct rank_libc *s = atomic_load_explicit(&rank_libcs[ctx], memory_order_acquire);
    if (s)
        return s;
    struct rank_libc *n = calloc(1, sizeof *n);
    if (!n)
        return NULL;
    pthread_mutex_init(&n->lock, NULL);
    /* A fresh process's generators: srandom(1), and drand48's all-zero-then-initialised data. */
    n->rstate = n->rbuf;
    initstate_r(1, n->rbuf, sizeof n->rbuf, &n->rd);
    memset(&n->d48, 0, sizeof n->d48);
    struct rank_libc *expected = NULL;
    /* Release publishes the initialised state to every later acquire load. */
    if (atomic_compare_exchange_strong_explicit(&rank_libcs[ctx], &expected, n, memory_order_release, memory_order_acquire))
        return n;
    pthread_mutex_destroy(&n->lock);
    free(n);
    return expected;
}

/* libc's own functions, looked up once (the preload library serves processes-mode ranks too,
 * where every call goes to libc). */
static struct {
    long (*random)(void);
    int (*rand)(void);
    void (*srandom)(unsigned int);
    void (*srand)(unsigned int);
    char *(*initstate)(unsigned int, char *, size_t);
    char *(*setstate)(char *);
    double (*drand48)(void);
    long (*lrand48)(void);
    long (*mrand48)(void);
    void (*srand48)(long);
    unsigned short *(*seed48)(unsigned short *);
    void (*lcong48)(unsigned short *);
    char *(*strtok)(char *, const char *);
} libc_state_fns;
static pthread_once_t libc_state_once = PTHREAD_ONCE_INIT;

static void resolve_libc_state(void)
{
#define GET(f) libc_state_fns.f = (__typeof__(libc_state_fns.f))dlsym(RTLD_NEXT, #f)
    GET(random); GET(rand); GET(srandom); GET(srand); GET(initstate); GET(setstate);
    GET(drand48); GET(lrand48); GET(mrand48); GET(srand48); GET(seed48); GET(lcong48);
    GET(strtok);
#undef GET
}

#define REAL(name) (pthread_once(&libc_state_once, resolve_libc_state), libc_state_fns.name)

/* The rank's rand/random generator: draw and seed (the caller found the rank's state). */
static long rank_random(struct rank_libc *s)
{
    int32_t r;
    pthread_mutex_lock(&s->lock);
    random_r(&s->rd, &r);
    pthread_mutex_unlock(&s->lock);
    return r;
}

static void rank_srandom(struct rank_libc *s, unsigned int seed)
{
    pthread_mutex_lock(&s->lock);
    srandom_r(seed, &s->rd);
    pthread_mutex_unlock(&s->lock);
}

long random(void)
{
    struct rank_libc *s = rank_libc();
    return s ? rank_random(s) : REAL(random)();
}

/* glibc's rand is random on the same state. */
int rand(void)
{
    struct rank_libc *s = rank_libc();
    return s ? (int)rank_random(s) : REAL(rand)();
}

void srandom(unsigned int seed)
{
    struct rank_libc *s = rank_libc();
    if (s)
        rank_srandom(s, seed);
    else
        REAL(srandom)(seed);
}

void srand(unsigned int seed)
{
    struct rank_libc *s = rank_libc();
    if (s)
        rank_srandom(s, seed);
    else
        REAL(srand)(seed);
}

char *initstate(unsigned int seed, char *state, size_t n)
{
    struct rank_libc *s = rank_libc();
    if (!s)
        return REAL(initstate)(seed, state, n);
    pthread_mutex_lock(&s->lock);
    char *old = s->rstate;
    if (initstate_r(seed, state, n, &s->rd) == 0)
        s->rstate = state;
    else
        old = NULL;
    pthread_mutex_unlock(&s->lock);
    return old;
}

char *setstate(char *state)
{
    struct rank_libc *s = rank_libc();
    if (!s)
        return REAL(setstate)(state);
    pthread_mutex_lock(&s->lock);
    char *old = s->rstate;
    if (setstate_r(state, &s->rd) == 0)
        s->rstate = state;
    else
        old = NULL;
    pthread_mutex_unlock(&s->lock);
    return old;
}

/* The drand48 family's draws: the rank's generator through glibc's reentrant form. */
#define RANK_DRAW48(type, name)                      \
    type name(void)                                  \
    {                                                \
        struct rank_libc *s = rank_libc();           \
        if (!s)                                      \
            return REAL(name)();                     \
        type r;                                      \
        pthread_mutex_lock(&s->lock);                \
        name##_r(&s->d48, &r);                       \
        pthread_mutex_unlock(&s->lock);              \
        return r;                                    \
    }
RANK_DRAW48(double, drand48)
RANK_DRAW48(long, lrand48)
RANK_DRAW48(long, mrand48)

void srand48(long seed)
{
    struct rank_libc *s = rank_libc();
    if (!s) {
        REAL(srand48)(seed);
        return;
    }
    pthread_mutex_lock(&s->lock);
    srand48_r(seed, &s->d48);
    pthread_mutex_unlock(&s->lock);
}

unsigned short *seed48(unsigned short seed16v[3])
{
    struct rank_libc *s = rank_libc();
    if (!s)
        return REAL(seed48)(seed16v);
    pthread_mutex_lock(&s->lock);
    /* seed48 returns the previous seed in a buffer of its own: the rank's. */
    memcpy(s->seed48_old, s->d48.__x, sizeof s->seed48_old);
    seed48_r(seed16v, &s->d48);
    pthread_mutex_unlock(&s->lock);
    return s->seed48_old;
}

void lcong48(unsigned short param[7])
{
    struct rank_libc *s = rank_libc();
    if (!s) {
        REAL(lcong48)(param);
        return;
    }
    pthread_mutex_lock(&s->lock);
    lcong48_r(param, &s->d48);
    pthread_mutex_unlock(&s->lock);
}

char *strtok(char *str, const char *delim)
{
    struct rank_libc *s = rank_libc();
    if (!s)
        return REAL(strtok)(str, delim);
    /* Only this rank's threads use the position; strtok is not thread-safe within a process
     * either, so no lock. */
    return strtok_r(str, delim, &s->strtok_save);
}

/* Exit handlers: a rank's own (registered from its program instance) run when the rank exits;
 * oxmpi keeps them (oxmpi_threads_atexit). Everything else is libc's. */
typedef int (*atexit_hook_fn)(void (*)(void *), void *, void *);
typedef int (*cxa_atexit_fn)(void (*)(void *), void *, void *);

int __cxa_atexit(void (*func)(void *), void *arg, void *dso);
int __cxa_atexit(void (*func)(void *), void *arg, void *dso)
{
    static atexit_hook_fn hook;
    static cxa_atexit_fn real;
    static int resolved;
    if (!__atomic_load_n(&resolved, __ATOMIC_ACQUIRE)) {
        /* Called very early (constructors of libraries loaded before liboxmpi): both lookups are
         * plain dlsym, safe at any time; racing threads store the same values. */
        __atomic_store_n(&real, (cxa_atexit_fn)dlsym(RTLD_NEXT, "__cxa_atexit"), __ATOMIC_RELAXED);
        __atomic_store_n(&hook, (atexit_hook_fn)dlsym(RTLD_DEFAULT, "oxmpi_threads_atexit"), __ATOMIC_RELAXED);
        __atomic_store_n(&resolved, 1, __ATOMIC_RELEASE);
    }
    atexit_hook_fn h = __atomic_load_n(&hook, __ATOMIC_RELAXED);
    if (h && h(func, arg, dso))
        return 0;
    return __atomic_load_n(&real, __ATOMIC_RELAXED)(func, arg, dso);
}

int atexit(void (*func)(void))
{
    return __cxa_atexit((void (*)(void *))func, NULL, NULL);
}
