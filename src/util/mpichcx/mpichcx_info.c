/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * MPICH-CX: what MPI_Get_library_version and mpichversion report about the fork.
 */

#include "mpiimpl.h"
#include "mpichcx_info.h"

/* One row per MPICH-CX extension compiled into this library; each extension
 * adds its row under its own configure macro. is_active reports the run-time
 * choice (CVARs), and is called only after MPI_Init has read them (NULL:
 * always active); describe, when set, says what is active instead of the
 * word "active". */
typedef struct {
    const char *name;
    int (*is_active)(void);
    const char *(*describe)(void);
} MPIR_CX_extension_t;

#ifdef MPIDI_CX_DEFAULT_MT
/* CH4's thread-safety models and VCI locks (src/mpid/ch4/src/cx_mt_select.c) */
const char *MPIDI_CX_mt_describe(void);
#endif

#ifdef MPIDIG_CX_DEFAULT_MATCHING
/* MPIDIG's constant-time matching (src/mpid/ch4/src/cx_recvq.c) */
int MPIDIG_cx_matching_is_active(void);
const char *MPIDIG_cx_matching_describe(void);
#endif

#ifdef MPICH_CX_HAVE_PIP
/* PiP: this rank is a task of mpich-cx-piphost (src/pm/pip), which says so
 * in its environment */
static int pip_is_active(void)
{
    return getenv("MPICH_CX_PIP_TASK") != NULL;
}

#if defined(MPIDIG_CX_DEFAULT_MATCHING) && !defined(MPIDI_CH4_DIRECT_NETMOD)
/* CH4's PiP single-copy IPC type (src/mpid/ch4/shm/ipc/pip) */
const char *MPIDI_PIP_describe(void);
#define PIP_SINGLE_COPY() MPIDI_PIP_describe()
#else
#define PIP_SINGLE_COPY() "single copy not built"
#endif

static const char *pip_describe(void)
{
    static char buf[400];       /* MPIDI_PIP_describe's 320, and the task */
    const char *n = getenv("MPICH_CX_PIP_NTASKS");
    snprintf(buf, sizeof(buf), "task %s of %s in this process, %s", getenv("MPICH_CX_PIP_TASK"),
             n ? n : "?", PIP_SINGLE_COPY());
    return buf;
}
#endif

static const MPIR_CX_extension_t cx_extensions[] = {
#ifdef MPIDI_CX_DEFAULT_MT
    {"thread-safety", NULL, MPIDI_CX_mt_describe},
#endif
#ifdef MPIDIG_CX_DEFAULT_MATCHING
    {"matching", MPIDIG_cx_matching_is_active, MPIDIG_cx_matching_describe},
#endif
#ifdef MPICH_CX_HAVE_PIP
    {"pip", pip_is_active, pip_describe},
#endif
    {NULL, NULL, NULL}  /* sentinel: keeps the array non-empty */
};

int MPIR_CX_info_string(char *buf, int len)
{
    int used = 0;

#define CX_APPEND(...) \
    do { \
        if (used < len) { \
            int n_ = snprintf(buf + used, len - used, __VA_ARGS__); \
            used = (n_ < 0) ? used : MPL_MIN(used + n_, len - 1); \
        } \
    } while (0)

    if (len <= 0)
        return 0;
    buf[0] = '\0';
    CX_APPEND("MPICH-CX Version:\t%s\n", MPICHCX_VERSION);
    CX_APPEND("MPICH-CX Base:\tMPICH %s\n", MPICHCX_BASE_VERSION);
    CX_APPEND("MPICH-CX Extensions:\t");
    if (cx_extensions[0].name == NULL)
        CX_APPEND("none");
    for (int i = 0; cx_extensions[i].name != NULL; i++) {
        int active =
            MPL_atomic_load_int(&MPIR_Process.mpich_state) != MPICH_MPI_STATE__UNINITIALIZED &&
            (!cx_extensions[i].is_active || cx_extensions[i].is_active());
        CX_APPEND("%s%s (%s)", i ? ", " : "", cx_extensions[i].name,
                  !active ? "inactive" : cx_extensions[i].
                  describe ? cx_extensions[i].describe() : "active");
    }
    CX_APPEND("\n");
#undef CX_APPEND
    return used;
}
