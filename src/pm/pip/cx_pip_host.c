/*
 * mpich-cx-piphost: runs up to 15 programs as PiP tasks of one process
 * (see cx_pip_task.h).  Hydra's proxy starts one per group of local ranks
 * under `mpiexec -pip`; it can also be run by hand:
 *
 *   mpich-cx-piphost [--check] [--status-fd FD] [--clean-env] TASK [: TASK]...
 *   TASK: [-n N] [--env NAME=VALUE]... [--stdin-fd FD] [--stdout-fd FD]
 *         [--stderr-fd FD] [--task-fd FD]... [--cpus LIST] PROGRAM [ARGS...]
 *
 * Every task's environment is the host's (none with --clean-env), plus its
 * --env settings, plus MPICH_CX_PIP_TASK (its index from 0) and
 * MPICH_CX_PIP_NTASKS.  A --task-fd (its PMI socket) is closed when the task
 * ends, as a process's would be, unless the task closed it itself.  With
 * --status-fd, a line "INDEX exit CODE" is written there as each task ends;
 * without it, a task that ends with a nonzero code is reported on stderr.
 * The host exits with 0 when every task did, else with the code of the
 * first task that ended nonzero.  --check only checks the programs.
 */
#define _GNU_SOURCE
#include "cx_pip_task.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

/* 16 link-map namespaces (15 tasks and the host), and no cache of ended
 * threads' stacks: a task's C library reusing a cached stack frees the ended
 * thread's dynamic TLS blocks with its own free(), but the dynamic linker
 * (one for every namespace) allocated them with the host's malloc; that
 * crashed a task that had created a few dozen threads that called MPI.
 * Without the cache the dynamic linker releases them, with the right
 * malloc. */
#define TUNABLE "glibc.rtld.nns=16:glibc.pthread.stack_cache_size=0"
#define ORIG_TUNABLES "MPICH_CX_PIP_ORIG_GLIBC_TUNABLES"

static _Noreturn void usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "mpich-cx-piphost: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nusage: mpich-cx-piphost [--check] [--status-fd FD] [--clean-env] "
            "TASK [: TASK]...\n"
            "  TASK: [-n N] [--env NAME=VALUE]... [--stdin-fd FD] [--stdout-fd FD]\n"
            "        [--stderr-fd FD] [--task-fd FD]... [--cpus LIST] PROGRAM [ARGS...]\n");
    exit(2);
}

static long parse_num(const char *opt, const char *s, long lo, long hi)
{
    char *end;
    errno = 0;
    long v = s ? strtol(s, &end, 10) : 0;
    if (!s || errno || end == s || *end || v < lo || v > hi) {
        char msg[96];
        snprintf(msg, sizeof(msg), "%s needs a number from %ld to %ld, not '%%s'", opt, lo, hi);
        usage_error(msg, s ? s : "");
    }
    return v;
}

/* "0,2-3" */
static void parse_cpus(const char *s, cpu_set_t * set)
{
    CPU_ZERO(set);
    char *copy = strdup(s), *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *dash = strchr(tok, '-');
        if (dash)
            *dash = '\0';
        long a = parse_num("--cpus", tok, 0, CPU_SETSIZE - 1);
        long b = dash ? parse_num("--cpus", dash + 1, a, CPU_SETSIZE - 1) : a;
        for (long c = a; c <= b; c++)
            CPU_SET((int) c, set);
    }
    free(copy);
}

/* glibc reads GLIBC_TUNABLES only at start-up: without ours (TUNABLE), run
 * again with them (the tasks get the original value back). */
static void ensure_tunables(char **argv)
{
    const char *t = getenv("GLIBC_TUNABLES");
    if ((t && strstr(t, TUNABLE)) || getenv(ORIG_TUNABLES))
        return;
    /* "" when unset, "=VALUE" when set (maybe to nothing) */
    char *orig;
    if (asprintf(&orig, "%s%s", t ? "=" : "", t ? t : "") < 0)
        exit(1);
    setenv(ORIG_TUNABLES, orig, 1);
    if (t) {
        char *v = malloc(strlen(t) + sizeof(TUNABLE) + 1);
        sprintf(v, "%s:%s", t, TUNABLE);
        setenv("GLIBC_TUNABLES", v, 1);
    } else {
        setenv("GLIBC_TUNABLES", TUNABLE, 1);
    }
    execv("/proc/self/exe", argv);
    fprintf(stderr, "mpich-cx-piphost: cannot re-execute itself with GLIBC_TUNABLES=%s: %s\n",
            TUNABLE, strerror(errno));
    exit(1);
}

static bool clean_env;          /* --clean-env */

/* The host's environment as the tasks should see it, plus `extra`. */
static char **task_env(char **extra, int nextra, int index, int ntasks)
{
    int n = 0;
    while (!clean_env && environ[n])
        n++;
    char **env = calloc((size_t) (n + nextra + 3), sizeof(char *));
    int k = 0;
    const char *orig = getenv(ORIG_TUNABLES);
    for (int i = 0; i < n; i++) {
        if (!strncmp(environ[i], ORIG_TUNABLES "=", sizeof(ORIG_TUNABLES)))
            continue;
        if (!strncmp(environ[i], "GLIBC_TUNABLES=", 15) && orig) {
            if (*orig && asprintf(&env[k], "GLIBC_TUNABLES%s", orig) >= 0)
                k++;
            continue;
        }
        if (!strncmp(environ[i], "MPICH_CX_PIP_TASK=", 18) ||
            !strncmp(environ[i], "MPICH_CX_PIP_NTASKS=", 20))
            continue;
        /* a task's own --env setting wins */
        size_t len = strcspn(environ[i], "=");
        bool overridden = false;
        for (int j = 0; j < nextra && !overridden; j++)
            overridden = !strncmp(extra[j], environ[i], len + 1);
        if (!overridden)
            env[k++] = environ[i];
    }
    for (int j = 0; j < nextra; j++)
        env[k++] = extra[j];
    if (asprintf(&env[k++], "MPICH_CX_PIP_TASK=%d", index) < 0 ||
        asprintf(&env[k++], "MPICH_CX_PIP_NTASKS=%d", ntasks) < 0) {
        fprintf(stderr, "mpich-cx-piphost: out of memory\n");
        exit(1);
    }
    env[k] = NULL;
    return env;
}

/* Like execvp: a name without '/' is looked up in PATH. */
static const char *resolve_program(const char *name)
{
    if (strchr(name, '/'))
        return name;
    const char *path = getenv("PATH");
    char *copy = strdup(path ? path : "/usr/local/bin:/usr/bin:/bin"), *save = NULL;
    for (char *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
        char *full;
        if (asprintf(&full, "%s/%s", *dir ? dir : ".", name) < 0)
            break;
        if (access(full, X_OK) == 0) {
            free(copy);
            return full;
        }
        free(full);
    }
    free(copy);
    return name;        /* not found: loading it says so */
}

typedef struct {
    int first, count;           /* argv range of PROGRAM ARGS */
    int n;
    char *extra[64];
    int nextra;
    int fds[3];
    int own[4], nown;
    bool bind;
    cpu_set_t cpus;
} segment_t;

static cx_pip_task_t tasks[CX_PIP_MAX_TASKS];
static int ntasks;
static int status_fd = -1;
static pthread_mutex_t end_lock = PTHREAD_MUTEX_INITIALIZER;
static int first_failure;       /* exit code of the first task that ended nonzero */

static void task_ended(cx_pip_task_t * t)
{
    pthread_mutex_lock(&end_lock);
    if (t->exit_code && !first_failure)
        first_failure = t->exit_code;
    if (status_fd >= 0) {
        char line[64];
        int len = snprintf(line, sizeof(line), "%d exit %d\n", t->index, t->exit_code);
        if (write(status_fd, line, (size_t) len) != len)
            status_fd = -1;     /* the reader is gone; the exit status still tells */
    } else if (t->exit_code) {
        fprintf(stderr, "mpich-cx-piphost: task %d (%s) exited with code %d\n", t->index,
                t->path, t->exit_code);
    }
    pthread_mutex_unlock(&end_lock);
}

int main(int argc, char **argv)
{
    bool check = false;
    int i = 1;
    for (; i < argc && argv[i][0] == '-' && argv[i][1] == '-'; i++) {
        if (!strcmp(argv[i], "--check"))
            check = true;
        else if (!strcmp(argv[i], "--status-fd") && i + 1 < argc)
            status_fd = (int) parse_num("--status-fd", argv[++i], 0, INT_MAX);
        else if (!strcmp(argv[i], "--clean-env"))
            clean_env = true;
        else if (!strcmp(argv[i], "--"))
            break;
        else
            break;      /* a task option */
    }
    segment_t seg[CX_PIP_MAX_TASKS + 1];
    int nseg = 0;
    while (i < argc) {
        if (nseg == CX_PIP_MAX_TASKS + 1)
            usage_error("more than %s tasks", "15");
        segment_t *s = &seg[nseg++];
        memset(s, 0, sizeof(*s));
        s->n = 1;
        s->fds[0] = s->fds[1] = s->fds[2] = -1;
        for (; i < argc && argv[i][0] == '-'; i++) {
            const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
            if (!strcmp(o, "--")) {
                i++;
                break;
            } else if (!strcmp(o, "-n"))
                s->n = (int) parse_num("-n", v, 1, CX_PIP_MAX_TASKS);
            else if (!strcmp(o, "--env")) {
                if (!v || !strchr(v, '=') || s->nextra == 64)
                    usage_error("--env needs NAME=VALUE (at most 64), not '%s'", v ? v : "");
                s->extra[s->nextra++] = (char *) v;
            } else if (!strcmp(o, "--stdin-fd"))
                s->fds[0] = (int) parse_num(o, v, 0, INT_MAX);
            else if (!strcmp(o, "--stdout-fd"))
                s->fds[1] = (int) parse_num(o, v, 0, INT_MAX);
            else if (!strcmp(o, "--stderr-fd"))
                s->fds[2] = (int) parse_num(o, v, 0, INT_MAX);
            else if (!strcmp(o, "--task-fd")) {
                if (s->nown == 4)
                    usage_error("at most 4 --task-fd per task%s", "");
                s->own[s->nown++] = (int) parse_num(o, v, 0, INT_MAX);
            } else if (!strcmp(o, "--cpus")) {
                if (!v)
                    usage_error("--cpus needs a list like 0,2-3%s", "");
                parse_cpus(v, &s->cpus);
                s->bind = true;
            } else
                usage_error("unknown option '%s'", o);
            i++;
        }
        if (i >= argc || !strcmp(argv[i], ":"))
            usage_error("a task without a program%s", "");
        s->first = i;
        while (i < argc && strcmp(argv[i], ":"))
            i++;
        s->count = i - s->first;
        if (i < argc)
            i++;        /* ':' */
        ntasks += s->n;
    }
    if (!nseg)
        usage_error("no task given%s", "");
    if (ntasks > CX_PIP_MAX_TASKS) {
        char n[16];
        snprintf(n, sizeof(n), "%d", ntasks);
        usage_error("%s tasks asked for: a host runs at most 15 (glibc has 16 link-map "
                    "namespaces); mpiexec -pip starts one host per 15 local ranks", n);
    }

    char err[1024];
    if (check) {
        int bad = 0;
        for (int k = 0; k < nseg; k++) {
            cx_pip_image_t img;
            const char *path = resolve_program(argv[seg[k].first]);
            if (cx_pip_image_load(path, &img, err, sizeof(err))) {
                fprintf(stderr, "mpich-cx-piphost: %s\n", err);
                bad = 1;
            } else {
                printf("%s: can run as a PiP task\n", path);
                cx_pip_image_free(&img);
            }
        }
        return bad;
    }
    ensure_tunables(argv);
    if (status_fd >= 0 && fcntl(status_fd, F_SETFD, FD_CLOEXEC) != 0) {
        fprintf(stderr, "mpich-cx-piphost: --status-fd %d: %s\n", status_fd, strerror(errno));
        return 2;
    }

    int index = 0;
    for (int k = 0; k < nseg; k++) {
        for (int r = 0; r < seg[k].n; r++, index++) {
            cx_pip_task_t *t = &tasks[index];
            t->index = index;
            t->path = resolve_program(argv[seg[k].first]);
            t->argv = calloc((size_t) seg[k].count + 1, sizeof(char *));
            memcpy(t->argv, &argv[seg[k].first], (size_t) seg[k].count * sizeof(char *));
            t->envp = task_env(seg[k].extra, seg[k].nextra, index, ntasks);
            t->stdin_fd = seg[k].fds[0];
            t->stdout_fd = seg[k].fds[1];
            t->stderr_fd = seg[k].fds[2];
            t->bind = seg[k].bind;
            if (seg[k].nown && seg[k].n > 1)
                usage_error("--task-fd belongs to one task: not with -n%s", "");
            memcpy(t->own_fds, seg[k].own, sizeof(seg[k].own));
            t->nown = seg[k].nown;
            t->cpus = seg[k].cpus;
            t->on_end = task_ended;
            if (cx_pip_task_load(t, err, sizeof(err))) {
                fprintf(stderr, "mpich-cx-piphost: %s\n", err);
                return 1;       /* nothing has run yet */
            }
        }
    }
    /* the tasks hold their own copies of the stream fds now */
    for (int k = 0; k < nseg; k++)
        for (int f = 0; f < 3; f++)
            if (seg[k].fds[f] > 2)
                close(seg[k].fds[f]);
    cx_pip_install_crash_handlers();
    for (int k = 0; k < ntasks; k++) {
        if (cx_pip_task_start(&tasks[k], err, sizeof(err))) {
            fprintf(stderr, "mpich-cx-piphost: %s\n", err);
            _exit(1);   /* tasks already run: no orderly way to stop them */
        }
    }
    for (int k = 0; k < ntasks; k++)
        cx_pip_task_join(&tasks[k]);
    return first_failure;
}
