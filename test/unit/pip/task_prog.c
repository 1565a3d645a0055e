/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * A program the PiP runtime tests load as tasks (test/unit/pip.sh).  What
 * it does is chosen by its arguments:
 *   info                 print index, the address and value of a global
 *   return N | exit N | _exit N | quick_exit N | errx N
 *                        end with code N that way (exit runs an atexit
 *                        handler, quick_exit an at_quick_exit one; all print a
 *                        buffered line first)
 *   lib-exit N | lib-_exit N | lib-quick_exit N
 *                        the same, called in libtask_lib.so (linked with it)
 *   dlopen-exit N LIB    the same, in LIB, dlopen'ed by the task
 *   fork-exit N          a child process calls exit(N); print its status
 *   thread-exit N        a thread it starts calls exit(N)
 *   env NAME             print the variable
 *   publish DIR          write the address of a filled global buffer to DIR/ptr
 *   deref DIR            wait for DIR/ptr, read the peer's buffer through it
 *   threads N            start and join N threads that bump a global counter
 *   crash                dereference NULL
 *   streams              one line on stdout, one on stderr
 *   late-exit N          sleep a little, then exit(N)
 *   cpus                 print the CPUs this task may run on
 *   fd-open N            after a pause: whether fd N is open in the process
 *   pid                  print getpid(), from main and from a thread it starts
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dlfcn.h>
#include <err.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/wait.h>

#ifdef TASK_LIB
void task_lib_end(const char *how, int code);   /* libtask_lib.so */
#endif

static int counter;             /* private per task */
static char buffer[64];
static atomic_int bumps;

static int my_index(void)
{
    const char *s = getenv("MPICH_CX_PIP_TASK");
    return s ? atoi(s) : -1;
}

static void at_exit_handler(void)
{
    printf("task %d: atexit handler ran\n", my_index());
}

static void at_quick_exit_handler(void)
{
    printf("task %d: at_quick_exit handler ran\n", my_index());
    fflush(stdout);     /* quick_exit does not flush */
}

static void *exit_in_thread(void *arg)
{
    exit(*(int *) arg);
}

static void *bump(void *arg)
{
    (void) arg;
    for (int i = 0; i < 1000; i++)
        atomic_fetch_add(&bumps, 1);
    return NULL;
}

static void *pid_of_thread(void *arg)
{
    *(pid_t *) arg = getpid();
    return NULL;
}

static void pause_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000,.tv_nsec = (ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "info";
    const char *arg = argc > 2 ? argv[2] : "0";
    counter += 1 + my_index();  /* a shared global would sum over the tasks */
    if (!strcmp(what, "info")) {
        printf("task %d of %s: counter %d at %p\n", my_index(), getenv("MPICH_CX_PIP_NTASKS"),
               counter, (void *) &counter);
        return 0;
    }
    const char *ends[] = { "return", "exit", "_exit", "quick_exit", "errx", "lib-exit",
        "lib-_exit", "lib-quick_exit", "dlopen-exit"
    };
    for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++) {
        if (strcmp(what, ends[i]))
            continue;
        int code = atoi(arg);
        atexit(at_exit_handler);
        at_quick_exit(at_quick_exit_handler);
        printf("task %d: buffered line before %s\n", my_index(), what); /* not flushed */
        if (!strcmp(what, "exit"))
            exit(code);
        if (!strcmp(what, "_exit"))
            _exit(code);
        if (!strcmp(what, "quick_exit"))
            quick_exit(code);
        if (!strcmp(what, "errx"))
            errx(code, "task %d: errx", my_index());    /* the C library calls exit */
#ifdef TASK_LIB
        if (!strncmp(what, "lib-", 4))
            task_lib_end(what + 4, code);
        if (!strcmp(what, "dlopen-exit")) {
            void *lib = dlopen(argc > 3 ? argv[3] : "", RTLD_NOW);
            void (*end)(const char *, int) = lib ? (void (*)(const char *, int))
                dlsym(lib, "task_lib_end") : NULL;
            if (!end) {
                fprintf(stderr, "task_prog: %s\n", dlerror());
                return 2;
            }
            end("exit", code);
        }
#endif
        return code;
    }
    if (!strcmp(what, "thread-exit")) {
        static int code;
        pthread_t t;
        code = atoi(arg);
        pthread_create(&t, NULL, exit_in_thread, &code);
        pthread_join(t, NULL);
        return 0;
    }
    if (!strcmp(what, "fork-exit")) {
        atexit(at_exit_handler);
        fflush(stdout);
        pid_t child = fork();
        if (child == 0)
            exit(atoi(arg));    /* the child's own end (its atexit handler prints) */
        int status = 0;
        waitpid(child, &status, 0);
        printf("task %d: child exited with %d\n", my_index(), WEXITSTATUS(status));
        return 0;
    }
    if (!strcmp(what, "late-exit")) {
        pause_ms(200);
        printf("task %d: still running after the others\n", my_index());
        exit(atoi(arg));
    }
    if (!strcmp(what, "ctype")) {
        /* the C library's per-thread character tables (isdigit, toupper) */
        int digits = 0;
        for (const char *c = arg; *c; c++)
            digits += isdigit((unsigned char) *c) != 0;
        printf("task %d: %d digits, %c\n", my_index(), digits, toupper('q'));
        return 0;
    }
    if (!strcmp(what, "env")) {
        const char *v = getenv(arg);
        printf("task %d: %s=%s\n", my_index(), arg, v ? v : "(unset)");
        return 0;
    }
    if (!strcmp(what, "publish") || !strcmp(what, "deref")) {
        char path[4096];
        snprintf(path, sizeof(path), "%s/ptr", arg);
        if (!strcmp(what, "publish")) {
            snprintf(buffer, sizeof(buffer), "written by task %d", my_index());
            char tmp[4200];
            snprintf(tmp, sizeof(tmp), "%s.tmp", path);
            FILE *f = fopen(tmp, "w");
            fprintf(f, "%p\n", (void *) buffer);
            fclose(f);
            rename(tmp, path);
            pause_ms(500);      /* stay alive while the peer reads */
            return 0;
        }
        for (int tries = 0; tries < 500; tries++) {
            FILE *f = fopen(path, "r");
            if (f) {
                void *p = NULL;
                int ok = fscanf(f, "%p", &p) == 1;
                fclose(f);
                if (ok && p) {
                    printf("task %d read through %p: %s (own buffer at %p)\n", my_index(), p,
                           (const char *) p, (void *) buffer);
                    return 0;
                }
            }
            pause_ms(10);
        }
        fprintf(stderr, "task %d: no pointer published\n", my_index());
        return 1;
    }
    if (!strcmp(what, "threads")) {
        int n = atoi(arg);
        pthread_t t[64];
        for (int i = 0; i < n && i < 64; i++)
            pthread_create(&t[i], NULL, bump, NULL);
        for (int i = 0; i < n && i < 64; i++)
            pthread_join(t[i], NULL);
        printf("task %d: %d bumps\n", my_index(), atomic_load(&bumps));
        return 0;
    }
    if (!strcmp(what, "crash")) {
        fflush(stdout);
        volatile int *p = NULL;
        return *p;
    }
    if (!strcmp(what, "cpus")) {
        cpu_set_t set;
        sched_getaffinity(0, sizeof(set), &set);
        printf("task %d cpus:", my_index());
        for (int i = 0; i < CPU_SETSIZE; i++)
            if (CPU_ISSET(i, &set))
                printf(" %d", i);
        printf("\n");
        return 0;
    }
    if (!strcmp(what, "pid")) {
        pthread_t t;
        pid_t from_thread = 0;
        pthread_create(&t, NULL, pid_of_thread, &from_thread);
        pthread_join(t, NULL);
        printf("task %d: pid %d, in a thread %d\n", my_index(), (int) getpid(), (int) from_thread);
        return 0;
    }
    if (!strcmp(what, "fd-open")) {
        pause_ms(300);
        printf("task %d: fd %s %s\n", my_index(), arg,
               fcntl(atoi(arg), F_GETFD) == -1 ? "closed" : "open");
        return 0;
    }
    if (!strcmp(what, "streams")) {
        printf("task %d: to stdout\n", my_index());
        fprintf(stderr, "task %d: to stderr\n", my_index());
        return 0;
    }
    fprintf(stderr, "task_prog: unknown action %s\n", what);
    return 2;
}
