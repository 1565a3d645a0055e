/*
 * MPICH-CX PiP: a task is one rank's program loaded into a dlmopen
 * namespace of the hosting process and run as a thread of it (thread mode).
 * It has its own globals, its own C library (own environ, own stdio
 * streams), libmpi and libfabric; all tasks share one address space.
 *
 * Process-wide effects a task must not have are redirected: exit, _exit,
 * _Exit and quick_exit, called by any object of its namespace (the program,
 * libgfortran, a library it dlopens), end the task only, as they would end
 * a process (its C library's _exit is diverted, cx_pip_got.h), and so does
 * returning from main; a crash (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT)
 * is reported with the task's index before the host dies of it; getpid()
 * in every object of the task's namespace (cx_pip_got.h) returns a value
 * unique to the task, so names derived from it do not collide.
 *
 * At most CX_PIP_MAX_TASKS tasks per host: glibc has 16 namespaces and the
 * host's is one of them (and the host must start with
 * GLIBC_TUNABLES=glibc.rtld.nns=16, see cx_pip_host.c).
 */
#ifndef CX_PIP_TASK_H_INCLUDED
#define CX_PIP_TASK_H_INCLUDED

/* needs _GNU_SOURCE (cpu_set_t) before the first system header */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>
#include "cx_pip_elf.h"

#define CX_PIP_MAX_TASKS 15

typedef struct cx_pip_task {
    /* set by the caller */
    int index;
    const char *path;
    char **argv;                /* NULL-terminated */
    char **envp;                /* NULL-terminated: the task's whole environment */
    int stdin_fd, stdout_fd, stderr_fd; /* the task's streams on these (-1: the host's) */
    int own_fds[4];             /* fds that are the task's alone (its PMI socket): closed at */
    int nown;                   /* its end unless it closed them itself, so the peer sees EOF */
    bool bind;                  /* run on `cpus` */
    cpu_set_t cpus;
    void (*on_end)(struct cx_pip_task *);       /* called on the task's thread as it ends */

    /* set by cx_pip_task_load / _run */
    cx_pip_image_t image;
    void *handle;
    int (*main)(int, char **, char **);
    void (*ns_exit)(int);       /* its C library's exit, once its _exit is diverted */
    int (*ns_fflush)(FILE *);
    int (*ns_fclose)(FILE *);
    FILE *streams[3];           /* the task's stdin/stdout/stderr streams we opened */
    dev_t own_dev[4];
    ino_t own_ino[4];
    void (*ns_cxa_finalize)(void *);
    void (*ns_ctype_init)(void);        /* the namespace libc's per-thread ctype set-up */
    pthread_t thread;
    pid_t vpid;                 /* what the task's getpid() returns (its thread id) */
    jmp_buf end;
    int exit_code;              /* 0-255, as a process's exit status */
    char crash_msg[256];        /* written by the crash handler */
} cx_pip_task_t;

/* Loads the program (checked first, see cx_pip_elf.h) into a new namespace
 * and sets up its environment, stdio streams and exit hooks.  Call from one
 * thread, before any task runs.  0, or -1 with a message in err. */
int cx_pip_task_load(cx_pip_task_t * t, char *err, size_t errlen);

/* Starts main(argc, argv, envp) on a thread of its own. */
int cx_pip_task_start(cx_pip_task_t * t, char *err, size_t errlen);

/* Waits for the task's end; its exit code. */
int cx_pip_task_join(cx_pip_task_t * t);

/* Reports crashes with the crashing task's index (once per host). */
void cx_pip_install_crash_handlers(void);

#endif /* CX_PIP_TASK_H_INCLUDED */
