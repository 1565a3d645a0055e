/*
 * MPICH-CX: `mpiexec -pip` in the proxy (see pmip_pip.c).
 */
#ifndef PMIP_PIP_H_INCLUDED
#define PMIP_PIP_H_INCLUDED

#include "hydra.h"

/* The host program, found next to the proxy. */
#define HYD_PMCD_PIP_HOST "mpich-cx-piphost"
/* Tasks per host: glibc's 16 link-map namespaces, less the host's own. */
#define HYD_PMCD_PIP_MAX_GROUP 15

/* Local rank `process_id` joins the current group as a task: its stdout and
 * stderr pipes (and stdin for rank 0), its environment and PMI socket are
 * made here as HYDU_create_process would make them for a process.  The
 * group's host is started when it is full or pmip_pip_launch is called. */
HYD_status HYD_pmcd_pmip_pip_add(int process_id, struct HYD_env *env, char **exec_argv,
                                 int pmi_child_fd, int want_stdin);

/* In place of HYDU_create_process (same arguments, idx the local process
 * id): without -pip, that; under -pip, the process joins the current group
 * as a task (pmip_pip_add) and the host keeps its PMI socket, so
 * *pmi_child_fd becomes HYD_FD_UNSET. */
HYD_status HYD_pmcd_pmip_pip_create_process(char **client_arg, struct HYD_env *env_list,
                                            int *in, int *out, int *err, int *pid, int idx,
                                            int *pmi_child_fd);

/* Starts a host for the ranks added since the last call (none: nothing, so
 * also without -pip). */
HYD_status HYD_pmcd_pmip_pip_launch(void);

/* After waitpid reported `pid` with `wait_status`: when it is a host, every
 * rank of it gets its exit status (as the host reported it for the task,
 * else the host's own) and the number of ranks is returned; 0 otherwise. */
int HYD_pmcd_pmip_pip_reaped(int pid, int wait_status, int forced_cleanup);

#endif /* PMIP_PIP_H_INCLUDED */
