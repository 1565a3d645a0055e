/*
 * MPICH-CX PiP: loading and running tasks (see cx_pip_task.h).
 */
#define _GNU_SOURCE
#include "cx_pip_task.h"
#include "cx_pip_got.h"
#include "cx_pip_err.h"
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gnu/lib-names.h>      /* LIBC_SO */
#include <link.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>   /* memfd_create */
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

extern char **environ;

/* The task running on this thread (NULL on the host's own threads and on
 * threads a task created). */
static __thread cx_pip_task_t *current_task;

/* ---- the end of a task ------------------------------------------------- */

static pid_t host_pid;          /* the kernel's id of the host process */

static _Noreturn void end_task(cx_pip_task_t * t, int code)
{
    t->exit_code = code & 0xff;
    longjmp(t->end, 1);
}

/* Runs instead of the _exit of a task's C library, which its exit, _exit,
 * _Exit and quick_exit end in (after exit's atexit handlers and stdio flush,
 * quick_exit's at_quick_exit handlers), whichever object of the task called
 * them.  A child process of the task (fork, posix_spawn) ends as it would;
 * a thread the task created cannot unwind the task's main, so it ends the
 * host as it would end a process (after saying so). */
static _Noreturn void task_exit_hook(int code)
{
    if (syscall(SYS_getpid) != host_pid)
        _exit(code);
    cx_pip_task_t *t = current_task;
    if (t)
        end_task(t, code);
    fprintf(stderr, "mpich-cx-piphost: exit(%d) called on a thread a task created: "
            "ending every task of this host\n", code);
    fflush(NULL);
    _exit(code);
}

/* exit(code) for the task: its C library's own exit when its _exit is
 * diverted, else what that does (the atexit handlers, then stdio). */
static _Noreturn void task_exit(cx_pip_task_t * t, int code)
{
    if (t->ns_exit)
        t->ns_exit(code);
    if (t->ns_cxa_finalize)
        t->ns_cxa_finalize(NULL);
    if (t->ns_fflush)
        t->ns_fflush(NULL);
    task_exit_hook(code);
}

/* Where the C library's code cannot be changed (W+X refused), the GOT slots
 * of exit, _exit, _Exit and quick_exit of every object of the namespace are
 * redirected instead (libraries the task dlopens later, the C library's own
 * calls and at_quick_exit handlers are then missed). */
static _Noreturn void got_exit(int code)
{
    cx_pip_task_t *t = current_task;
    if (t)
        task_exit(t, code);
    task_exit_hook(code);
}

static const char *const exit_names[] = { "exit", "_exit", "_Exit", "quick_exit" };

/* Sends every way the task can end the process to task_exit_hook. */
static int hook_exits(cx_pip_task_t * t, char *err, size_t errlen)
{
    Lmid_t ns;
    void *libc = dlinfo(t->handle, RTLD_DI_LMID, &ns) ? NULL :
        dlmopen(ns, LIBC_SO, RTLD_NOW | RTLD_NOLOAD);
    void *ns_exit = libc ? dlsym(libc, "exit") : NULL;
    void *ns__exit = libc ? dlsym(libc, "_exit") : NULL;
    const char *mode = getenv("MPICH_CX_PIP_EXIT_HOOK");        /* "got": the fallback (tests) */
    char why[256];
    if (ns_exit && ns__exit && !(mode && !strcmp(mode, "got")) &&
        !cx_pip_code_divert(ns__exit, (void *) task_exit_hook, why, sizeof(why))) {
        t->ns_exit = (void (*)(int)) ns_exit;
        return 0;
    }
    for (size_t i = 0; i < sizeof(exit_names) / sizeof(exit_names[0]); i++) {
        void *hook = i ? (void *) task_exit_hook : (void *) got_exit;
        if (cx_pip_got_redirect(t->handle, exit_names[i], hook, err, errlen) < 0)
            return -1;
    }
    return 0;
}

/* ---- process ids ----------------------------------------------------------- */

/* All tasks share the host's pid, but names derived from it (shared-memory
 * segments of libfabric's shm provider, temporary files) must stay unique
 * per rank.  So a task's getpid() returns the thread id of its main thread:
 * unique on the node while the task lives, and a valid target for kill(),
 * which delivers to the host as it would to the process.  One hook per task
 * slot, so that threads the task starts get the same answer. */
static cx_pip_task_t *task_slots[CX_PIP_MAX_TASKS];

static pid_t task_getpid(int slot)
{
    cx_pip_task_t *t = task_slots[slot];
    pid_t p = t ? __atomic_load_n(&t->vpid, __ATOMIC_ACQUIRE) : 0;
    return p ? p : getpid();
}

#define GETPID_HOOK(i) static pid_t getpid_hook_##i(void) { return task_getpid(i); }
GETPID_HOOK(0) GETPID_HOOK(1) GETPID_HOOK(2) GETPID_HOOK(3) GETPID_HOOK(4)
    GETPID_HOOK(5) GETPID_HOOK(6) GETPID_HOOK(7) GETPID_HOOK(8) GETPID_HOOK(9)
    GETPID_HOOK(10) GETPID_HOOK(11) GETPID_HOOK(12) GETPID_HOOK(13) GETPID_HOOK(14)
static pid_t(*const getpid_hooks[CX_PIP_MAX_TASKS]) (void) = {
    getpid_hook_0, getpid_hook_1, getpid_hook_2, getpid_hook_3, getpid_hook_4,
    getpid_hook_5, getpid_hook_6, getpid_hook_7, getpid_hook_8, getpid_hook_9,
    getpid_hook_10, getpid_hook_11, getpid_hook_12, getpid_hook_13, getpid_hook_14
};

/* ---- loading ------------------------------------------------------------- */

/* The task's stdin/stdout/stderr: streams of its own C library on the fds
 * it was given (dup'ed: the caller keeps its own). */
static int setup_stdio(cx_pip_task_t * t, char *err, size_t errlen)
{
    static const char *const names[3] = { "stdin", "stdout", "stderr" };
    static const char *const modes[3] = { "r", "w", "w" };
    const int fds[3] = { t->stdin_fd, t->stdout_fd, t->stderr_fd };
    FILE *(*ns_fdopen)(int, const char *) =
        (FILE * (*)(int, const char *)) dlsym(t->handle, "fdopen");
    int (*ns_setvbuf)(FILE *, char *, int, size_t) =
        (int (*)(FILE *, char *, int, size_t)) dlsym(t->handle, "setvbuf");
    for (int i = 0; i < 3; i++) {
        if (fds[i] < 0)
            continue;
        FILE **stream = (FILE **) dlsym(t->handle, names[i]);
        if (!stream || !ns_fdopen || !ns_setvbuf)
            return cx_pip_fail(err, errlen, "%s: its C library has no %s", t->path, names[i]);
        int fd = fcntl(fds[i], F_DUPFD_CLOEXEC, 3);
        FILE *f = fd >= 0 ? ns_fdopen(fd, modes[i]) : NULL;
        if (!f) {
            int e = errno;
            if (fd >= 0)
                close(fd);
            return cx_pip_fail(err, errlen, "%s: cannot open its %s on fd %d: %s", t->path,
                               names[i], fds[i], strerror(e));
        }
        if (i == 2)
            ns_setvbuf(f, NULL, _IONBF, 0);     /* stderr stays unbuffered */
        *stream = f;
        t->streams[i] = f;
    }
    return 0;
}

/* Remembers what the task's own fds are, to close them at its end only if
 * they still are (the task may have closed one, and the number been reused
 * by another task since). */
static int record_own_fds(cx_pip_task_t * t, char *err, size_t errlen)
{
    for (int i = 0; i < t->nown; i++) {
        struct stat st;
        if (fstat(t->own_fds[i], &st) != 0)
            return cx_pip_fail(err, errlen, "task %d: fd %d: %s", t->index, t->own_fds[i],
                               strerror(errno));
        t->own_dev[i] = st.st_dev;
        t->own_ino[i] = st.st_ino;
    }
    return 0;
}

/* The end of a task, as the end of a process: its streams and its own fds
 * closed, so whoever reads them sees EOF now, not when the host ends. */
static void close_task_files(cx_pip_task_t * t)
{
    for (int i = 0; i < 3; i++) {
        if (t->streams[i] && t->ns_fclose)
            t->ns_fclose(t->streams[i]);
        t->streams[i] = NULL;
    }
    for (int i = 0; i < t->nown; i++) {
        struct stat st;
        if (fstat(t->own_fds[i], &st) == 0 && st.st_dev == t->own_dev[i] &&
            st.st_ino == t->own_ino[i])
            close(t->own_fds[i]);
    }
}

int cx_pip_task_load(cx_pip_task_t * t, char *err, size_t errlen)
{
    if (cx_pip_image_load(t->path, &t->image, err, errlen))
        return -1;
    int fd = memfd_create("mpich-cx-pip-task", MFD_CLOEXEC);
    if (fd < 0) {
        cx_pip_image_free(&t->image);
        return cx_pip_fail(err, errlen, "memfd_create: %s", strerror(errno));
    }
    size_t done = 0;
    while (done < t->image.size) {
        ssize_t n = write(fd, t->image.data + done, t->image.size - done);
        if (n <= 0) {
            int e = n < 0 ? errno : EIO;
            close(fd);
            cx_pip_image_free(&t->image);
            return cx_pip_fail(err, errlen, "writing the copy of %s: %s", t->path, strerror(e));
        }
        done += (size_t) n;
    }
    char mem_path[64];
    snprintf(mem_path, sizeof(mem_path), "/proc/self/fd/%d", fd);
    /* the namespace's C library takes its environ from the caller's at
     * initialisation, so constructors already see the task's environment */
    char **host_env = environ;
    environ = t->envp;
    t->handle = dlmopen(LM_ID_NEWLM, mem_path, RTLD_NOW | RTLD_LOCAL);
    environ = host_env;
    close(fd);
    if (!t->handle) {
        const char *e = dlerror();
        int rc = cx_pip_fail(err, errlen, "%s: cannot be loaded as a PiP task: %s%s", t->path, e,
                             strstr(e, "TLS") || strstr(e, "namespace") ?
                             " (too many tasks in one process? at most 15, with "
                             "GLIBC_TUNABLES=glibc.rtld.nns=16)" : "");
        cx_pip_image_free(&t->image);
        return rc;
    }
    t->main = (int (*)(int, char **, char **)) dlsym(t->handle, "main");
    t->ns_fflush = (int (*)(FILE *)) dlsym(t->handle, "fflush");
    t->ns_fclose = (int (*)(FILE *)) dlsym(t->handle, "fclose");
    t->ns_cxa_finalize = (void (*)(void *)) dlsym(t->handle, "__cxa_finalize");
    t->ns_ctype_init = (void (*)(void)) dlsym(t->handle, "__ctype_init");
    char ***ns_environ = (char ***) dlsym(t->handle, "environ");
    if (!t->main) {
        cx_pip_fail(err, errlen,
                    "%s: does not export 'main' (linked without -rdynamic); rebuild it "
                    "with mpich-cx's mpicc (or compile with -fPIC and link with -pie -rdynamic)",
                    t->path);
        goto fn_fail;
    }
    if (ns_environ)
        *ns_environ = t->envp;
    /* error messages of its C library name the task's program, not the host */
    char **ns_name = (char **) dlsym(t->handle, "program_invocation_name");
    char **ns_short = (char **) dlsym(t->handle, "program_invocation_short_name");
    if (ns_name && t->argv[0])
        *ns_name = t->argv[0];
    if (ns_short && t->argv[0])
        *ns_short = strrchr(t->argv[0], '/') ? strrchr(t->argv[0], '/') + 1 : t->argv[0];
    if (t->index < 0 || t->index >= CX_PIP_MAX_TASKS) {
        cx_pip_fail(err, errlen, "task index %d: at most %d tasks", t->index, CX_PIP_MAX_TASKS);
        goto fn_fail;
    }
    task_slots[t->index] = t;
    if (host_pid == 0)
        host_pid = (pid_t) syscall(SYS_getpid);
    if (hook_exits(t, err, errlen) || setup_stdio(t, err, errlen) ||
        record_own_fds(t, err, errlen) ||
        cx_pip_got_redirect(t->handle, "getpid", (void *) getpid_hooks[t->index], err, errlen) < 0)
        goto fn_fail;
    /* under mpiexec the MPI rank says more than the task's index */
    const char *rank = NULL;
    for (char **e = t->envp; *e && !rank; e++) {
        if (!strncmp(*e, "PMI_RANK=", 9))
            rank = *e + 9;
        else if (!strncmp(*e, "PMI_ID=", 7))
            rank = *e + 7;
    }
    if (rank)
        snprintf(t->crash_msg, sizeof(t->crash_msg),
                 "mpich-cx-piphost: task %d (rank %s, %s) crashed: ", t->index, rank, t->path);
    else
        snprintf(t->crash_msg, sizeof(t->crash_msg), "mpich-cx-piphost: task %d (%s) crashed: ",
                 t->index, t->path);
    return 0;
  fn_fail:
    /* the namespace stays: glibc cannot unload it safely once its
     * constructors ran; the host exits on this error anyway */
    cx_pip_image_free(&t->image);
    return -1;
}

/* ---- running --------------------------------------------------------------- */

static void *task_thread(void *arg)
{
    cx_pip_task_t *t = arg;
    current_task = t;
    __atomic_store_n(&t->vpid, (pid_t) gettid(), __ATOMIC_RELEASE);
    /* The host's C library started this thread, so only its own per-thread
     * ctype tables are set; without the namespace's, isdigit() and friends
     * in the task dereference NULL.  (Threads the task creates get them
     * from its own C library.) */
    if (t->ns_ctype_init)
        t->ns_ctype_init();
    if (!setjmp(t->end)) {
        int argc = 0;
        while (t->argv[argc])
            argc++;
        task_exit(t, t->main(argc, t->argv, t->envp));  /* return from main = exit */
    }
    current_task = NULL;
    close_task_files(t);
    if (t->on_end)
        t->on_end(t);
    return NULL;
}

int cx_pip_task_start(cx_pip_task_t * t, char *err, size_t errlen)
{
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    /* a process's main thread gets the stack rlimit (8 MiB); so does a task */
    pthread_attr_setstacksize(&attr, 8 << 20);
    if (t->bind)
        pthread_attr_setaffinity_np(&attr, sizeof(t->cpus), &t->cpus);
    int rc = pthread_create(&t->thread, &attr, task_thread, t);
    pthread_attr_destroy(&attr);
    if (rc)
        return cx_pip_fail(err, errlen, "task %d (%s): cannot start its thread: %s", t->index,
                           t->path, strerror(rc));
    return 0;
}

int cx_pip_task_join(cx_pip_task_t * t)
{
    pthread_join(t->thread, NULL);
    return t->exit_code;
}

/* ---- crashes ------------------------------------------------------------------ */

static void crash_handler(int sig)
{
    cx_pip_task_t *t = current_task;
    char buf[320];
    size_t n = 0;
    const char *head = t ? t->crash_msg : "mpich-cx-piphost: crashed: ";
    const char *name = sigabbrev_np(sig);
    n = strlen(head);
    memcpy(buf, head, n);
    memcpy(buf + n, "signal SIG", 10);
    n += 10;
    size_t l = name ? strlen(name) : 0;
    memcpy(buf + n, name ? name : "", l);
    n += l;
    buf[n++] = '\n';
    ssize_t w = write(2, buf, n);
    (void) w;
    signal(sig, SIG_DFL);
    raise(sig);
}

void cx_pip_install_crash_handlers(void)
{
    static const int sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = crash_handler;
    sa.sa_flags = SA_RESETHAND | SA_NODEFER;
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
        sigaction(sigs[i], &sa, NULL);
}
