/*
 * MPICH-CX: `mpiexec -pip` in the proxy.  Instead of forking a process per
 * local rank, the proxy starts mpich-cx-piphost (src/pm/pip) for each group
 * of up to 15 ranks of one executable; every rank becomes a task of it (its
 * program in a dlmopen namespace of its own, one address space for the
 * group).  Each task still gets what HYDU_create_process gives a process:
 * its own stdout/stderr pipes (so stdoe_cb labels its output with its rank),
 * stdin for rank 0, its environment, its PMI socket, its binding.  The host
 * reports "INDEX exit CODE" on a status pipe as each task ends; when the
 * host is reaped, every rank of it gets that status (or the host's own
 * when it died before reporting, e.g. of a task's crash).
 */
#include "hydra.h"
#include "pmip.h"
#include "pmip_pip.h"
#include "demux.h"
#include "topo.h"
#if defined HAVE_HWLOC
#include "hwloc/topo_hwloc.h"
#endif /* HAVE_HWLOC */

struct pip_host {
    int pid;
    int status_fd;              /* HYD_FD_CLOSED once drained */
    int first, n;               /* local process ids first .. first + n - 1 */
    int reported[HYD_PMCD_PIP_MAX_GROUP];       /* exit status reported, or -1 */
    char buf[256];
    int len;
    struct pip_host *next;
};

static struct pip_host *hosts;

/* the group being assembled */
static struct HYD_string_stash group_args;
static int group_first = -1, group_n;
static int group_child_fds[HYD_PMCD_PIP_MAX_GROUP * 4], group_nfds;

static HYD_status stash_fd_option(struct HYD_string_stash *s, const char *opt, int fd)
{
    HYD_status status = HYD_SUCCESS;
    HYD_STRING_STASH(*s, MPL_strdup(opt), status);
    HYD_STRING_STASH(*s, HYDU_int_to_str(fd), status);
  fn_exit:
    return status;
  fn_fail:
    goto fn_exit;
}

/* A pipe: our end close-on-exec, the task's end inherited by the host. */
static HYD_status task_pipe(int *ours, int *theirs, int task_reads)
{
    int p[2];
    HYD_status status = HYD_SUCCESS;
    if (pipe(p) < 0)
        HYDU_ERR_SETANDJUMP(status, HYD_SOCK_ERROR, "pipe error (%s)\n", MPL_strerror(errno));
    *ours = task_reads ? p[1] : p[0];
    *theirs = task_reads ? p[0] : p[1];
    if (fcntl(*ours, F_SETFD, FD_CLOEXEC) < 0)
        HYDU_ERR_SETANDJUMP(status, HYD_SOCK_ERROR, "fcntl error (%s)\n", MPL_strerror(errno));
    group_child_fds[group_nfds++] = *theirs;
  fn_exit:
    return status;
  fn_fail:
    goto fn_exit;
}

/* The CPUs HYDT_topo_bind(idx) binds a process to, as a list ("0,2-3", to be
 * freed), or NULL when it does not bind: the host binds the task to them. */
static HYD_status topo_cpus_str(int idx, char **str)
{
    HYD_status status = HYD_SUCCESS;

    *str = NULL;
    if (idx < 0 || !HYDT_topo_binds())
        goto fn_exit;

#if defined HAVE_HWLOC
    if (!strcmp(HYDT_topo_info.topolib, "hwloc")) {
        /* as HYDT_topo_hwloc_bind */
        if (!HYDT_topo_hwloc_info.user_binding || (idx < HYDT_topo_hwloc_info.num_bitmaps)) {
            int id = idx % HYDT_topo_hwloc_info.num_bitmaps;
            if (hwloc_bitmap_list_asprintf(str, HYDT_topo_hwloc_info.bitmap[id]) < 0)
                HYDU_ERR_SETANDJUMP(status, HYD_INTERNAL_ERROR, "out of memory\n");
        }
        goto fn_exit;
    }
#endif /* HAVE_HWLOC */

    HYDU_ERR_SETANDJUMP(status, HYD_INTERNAL_ERROR, "no topology library available\n");

  fn_exit:
    return status;

  fn_fail:
    goto fn_exit;
}

HYD_status HYD_pmcd_pmip_pip_add(int process_id, struct HYD_env *env, char **exec_argv,
                                 int pmi_child_fd, int want_stdin)
{
    int ours, theirs;
    char *cpus = NULL;
    struct HYD_env *e;
    HYD_status status = HYD_SUCCESS;

    if (group_n == HYD_PMCD_PIP_MAX_GROUP) {
        status = HYD_pmcd_pmip_pip_launch();
        HYDU_ERR_POP(status, "unable to start a PiP host\n");
    }
    if (group_n == 0) {
        HYD_STRING_STASH_INIT(group_args);
        group_first = process_id;
    } else {
        HYD_STRING_STASH(group_args, MPL_strdup(":"), status);
    }
    HYDU_ASSERT(process_id == group_first + group_n, status);

    for (e = env; e; e = e->next) {
        char *kv = NULL;
        HYDU_MALLOC_OR_JUMP(kv, char *, strlen(e->env_name) + strlen(e->env_value) + 2, status);
        sprintf(kv, "%s=%s", e->env_name, e->env_value);
        HYD_STRING_STASH(group_args, MPL_strdup("--env"), status);
        HYD_STRING_STASH(group_args, kv, status);
    }
    status = task_pipe(&HYD_pmcd_pmip.downstream.out[process_id], &theirs, 0);
    HYDU_ERR_POP(status, "unable to create the stdout pipe\n");
    status = stash_fd_option(&group_args, "--stdout-fd", theirs);
    HYDU_ERR_POP(status, "out of memory\n");
    status = task_pipe(&HYD_pmcd_pmip.downstream.err[process_id], &theirs, 0);
    HYDU_ERR_POP(status, "unable to create the stderr pipe\n");
    status = stash_fd_option(&group_args, "--stderr-fd", theirs);
    HYDU_ERR_POP(status, "out of memory\n");
    if (want_stdin) {
        status = task_pipe(&ours, &theirs, 1);
        HYDU_ERR_POP(status, "unable to create the stdin pipe\n");
        HYD_pmcd_pmip.downstream.in = ours;
        status = stash_fd_option(&group_args, "--stdin-fd", theirs);
        HYDU_ERR_POP(status, "out of memory\n");
    }
    if (pmi_child_fd >= 0) {
        /* the task's alone: closed when it ends, so pmi_cb sees an early exit */
        group_child_fds[group_nfds++] = pmi_child_fd;
        status = stash_fd_option(&group_args, "--task-fd", pmi_child_fd);
        HYDU_ERR_POP(status, "out of memory\n");
    }
    status = topo_cpus_str(process_id, &cpus);
    HYDU_ERR_POP(status, "unable to get the CPUs to bind to\n");
    if (cpus) {
        HYD_STRING_STASH(group_args, MPL_strdup("--cpus"), status);
        HYD_STRING_STASH(group_args, cpus, status);
    }
    HYD_STRING_STASH(group_args, MPL_strdup("--"), status);
    for (int j = 0; exec_argv[j]; j++)
        HYD_STRING_STASH(group_args, MPL_strdup(exec_argv[j]), status);
    group_n++;

  fn_exit:
    return status;
  fn_fail:
    goto fn_exit;
}

HYD_status HYD_pmcd_pmip_pip_create_process(char **client_arg, struct HYD_env *env_list,
                                            int *in, int *out, int *err, int *pid, int idx,
                                            int *pmi_child_fd)
{
    HYD_status status = HYD_SUCCESS;

    if (!HYD_pmcd_pmip.user_global.pip)
        return HYDU_create_process(client_arg, env_list, in, out, err, pid, idx);

    /* a task of a PiP host, which keeps the PMI socket */
    status = HYD_pmcd_pmip_pip_add(idx, env_list, client_arg,
                                   HYD_pmcd_pmip.user_global.pmi_port ? -1 : *pmi_child_fd,
                                   HYD_pmcd_pmip.downstream.pmi_rank[idx] == 0);
    HYDU_ERR_POP(status, "unable to add a PiP task\n");
    *pmi_child_fd = HYD_FD_UNSET;

  fn_exit:
    return status;
  fn_fail:
    goto fn_exit;
}

/* "INDEX exit CODE" lines from a host. */
static void parse_status_lines(struct pip_host *h)
{
    char *line = h->buf, *nl;
    while ((nl = memchr(line, '\n', h->len - (line - h->buf)))) {
        int idx, code;
        *nl = '\0';
        if (sscanf(line, "%d exit %d", &idx, &code) == 2 && idx >= 0 && idx < h->n)
            h->reported[idx] = (code & 0xff) << 8;      /* as waitpid reports exit(code) */
        line = nl + 1;
    }
    h->len -= (int) (line - h->buf);
    memmove(h->buf, line, h->len);
}

/* Reads what the host wrote; 1 at EOF (the fd is closed then). */
static int read_status(struct pip_host *h, int block)
{
    for (;;) {
        if (h->len == (int) sizeof(h->buf))
            h->len = 0; /* a line that long is not ours: drop it */
        ssize_t r = read(h->status_fd, h->buf + h->len, sizeof(h->buf) - h->len);
        if (r > 0) {
            h->len += (int) r;
            parse_status_lines(h);
            if (!block)
                return 0;
        } else if (r < 0 && errno == EINTR) {
            continue;
        } else if (r < 0 && errno == EAGAIN && !block) {
            return 0;
        } else {
            HYDT_dmx_deregister_fd(h->status_fd);
            close(h->status_fd);
            h->status_fd = HYD_FD_CLOSED;
            return 1;
        }
    }
}

static HYD_status status_cb(int fd, HYD_event_t events, void *userp)
{
    struct pip_host *h = userp;
    if (h->status_fd == fd)
        read_status(h, 0);
    return HYD_SUCCESS;
}

HYD_status HYD_pmcd_pmip_pip_launch(void)
{
    int sp[2] = { -1, -1 };
    char *host = NULL, exe[PATH_MAX];
    struct pip_host *h = NULL;
    HYD_status status = HYD_SUCCESS;

    if (group_n == 0)
        goto fn_exit;

    /* the host is installed next to this proxy */
    ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    HYDU_ERR_CHKANDJUMP(status, len <= 0, HYD_INTERNAL_ERROR,
                        "PiP: cannot find the proxy's own path (%s)\n", MPL_strerror(errno));
    exe[len] = '\0';
    *strrchr(exe, '/') = '\0';
    HYDU_MALLOC_OR_JUMP(host, char *, strlen(exe) + sizeof(HYD_PMCD_PIP_HOST) + 2, status);
    sprintf(host, "%s/%s", exe, HYD_PMCD_PIP_HOST);
    HYDU_ERR_CHKANDJUMP(status, access(host, X_OK) != 0, HYD_INTERNAL_ERROR,
                        "mpiexec -pip: %s not found: this MPICH-CX was built without PiP "
                        "(configure --enable-pip)\n", host);

    if (pipe(sp) < 0 || fcntl(sp[0], F_SETFD, FD_CLOEXEC) < 0)
        HYDU_ERR_SETANDJUMP(status, HYD_SOCK_ERROR, "pipe error (%s)\n", MPL_strerror(errno));

    struct HYD_string_stash argv;
    HYD_STRING_STASH_INIT(argv);
    HYD_STRING_STASH(argv, MPL_strdup(host), status);
    status = stash_fd_option(&argv, "--status-fd", sp[1]);
    HYDU_ERR_POP(status, "out of memory\n");
    /* each task's environment is what the proxy gives a process, exactly */
    HYD_STRING_STASH(argv, MPL_strdup("--clean-env"), status);
    for (int i = 0; i < group_args.cur_count; i++)
        HYD_STRING_STASH(argv, MPL_strdup(group_args.strlist[i]), status);

    int pid = fork();
    if (pid < 0)
        HYDU_ERR_SETANDJUMP(status, HYD_INTERNAL_ERROR, "fork error (%s)\n", MPL_strerror(errno));
    if (pid == 0) {
        /* as HYDU_create_process: a process group of its own (killpg) */
        setsid();
        int null = open("/dev/null", O_RDONLY);
        if (null >= 0 && null != STDIN_FILENO) {
            dup2(null, STDIN_FILENO);
            close(null);
        }
        execv(host, argv.strlist);
        fprintf(stderr, "mpiexec -pip: cannot execute %s (%s)\n", host, MPL_strerror(errno));
        _exit(127);
    }
    HYD_STRING_STASH_FREE(argv);

    /* the tasks' ends are the host's now */
    close(sp[1]);
    for (int i = 0; i < group_nfds; i++)
        close(group_child_fds[i]);

    HYDU_MALLOC_OR_JUMP(h, struct pip_host *, sizeof(*h), status);
    h->pid = pid;
    h->status_fd = sp[0];
    h->first = group_first;
    h->n = group_n;
    h->len = 0;
    for (int i = 0; i < group_n; i++) {
        h->reported[i] = -1;
        HYD_pmcd_pmip.downstream.pid[group_first + i] = pid;
    }
    h->next = hosts;
    hosts = h;
    status = HYDU_sock_set_nonblock(h->status_fd);
    HYDU_ERR_POP(status, "unable to set the status pipe non-blocking\n");
    status = HYDT_dmx_register_fd(1, &h->status_fd, HYD_POLLIN, h, status_cb);
    HYDU_ERR_POP(status, "unable to register the status pipe\n");

    HYD_STRING_STASH_FREE(group_args);
    group_n = group_nfds = 0;
    group_first = -1;

  fn_exit:
    MPL_free(host);
    return status;
  fn_fail:
    goto fn_exit;
}

int HYD_pmcd_pmip_pip_reaped(int pid, int wait_status, int forced_cleanup)
{
    struct pip_host *h;
    for (h = hosts; h && h->pid != pid; h = h->next);
    if (!h)
        return 0;
    if (h->status_fd != HYD_FD_CLOSED) {
        /* the host is gone: what it wrote is all there is */
        fcntl(h->status_fd, F_SETFL, fcntl(h->status_fd, F_GETFL) & ~O_NONBLOCK);
        read_status(h, 1);
    }
    for (int i = 0; i < h->n; i++) {
        int *es = &HYD_pmcd_pmip.downstream.exit_status[h->first + i];
        if (h->reported[i] != -1)
            *es = h->reported[i];
        else if (forced_cleanup && *es == -1)
            *es = 0;
        else
            *es = wait_status;
    }
    h->pid = -1;        /* reaped: no second count */
    return h->n;
}
