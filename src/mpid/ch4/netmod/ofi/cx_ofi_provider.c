/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 *
 * MPICH-CX: when libfabric offers no provider at all, MPI_Init's error names
 * the provider FI_PROVIDER asked for, what that provider needs and did not
 * find on this machine, and the fix. MPICH's own message ("OFI fi_getinfo()
 * failed ... No data available") names neither; the usual case is
 * FI_PROVIDER=psm2 on a node without Omni-Path.
 */
#include "mpidimpl.h"
#include <glob.h>
#include <rdma/fabric.h>
#include <rdma/fi_errno.h>
#include "cx_ofi_provider.h"

#define OPA "an Omni-Path adapter (no /dev/hfi1_* device: no hardware, or the hfi1 driver is not loaded)"
#define RDMA "an RDMA device (/sys/class/infiniband is empty)"

/* What each provider needs from the machine, and a path that exists when
 * the machine has it */
static const struct {
    const char *name, *pattern, *what;
} needs[] = {
    {"psm2", "/dev/hfi1_*", OPA}, {"opx", "/dev/hfi1_*", OPA},
    {"psm", "/dev/ipath*", "a True Scale adapter (no /dev/ipath* device)"},
    {"verbs", "/sys/class/infiniband/*", RDMA}, {"psm3", "/sys/class/infiniband/*", RDMA},
    {"efa", "/sys/class/infiniband/*", RDMA},
    {"cxi", "/dev/cxi*", "a Slingshot adapter (no /dev/cxi* device)"},
};

/* What provider name (one entry of FI_PROVIDER) needs and this machine
 * lacks; NULL if it needs nothing we know to look for, or has it. */
static const char *missing(const char *name)
{
    for (size_t i = 0; i < sizeof(needs) / sizeof(needs[0]); i++)
        if (!strcmp(name, needs[i].name)) {
            glob_t g;
            int found = glob(needs[i].pattern, 0, NULL, &g) == 0 && g.gl_pathc > 0;
            globfree(&g);
            return found ? NULL : needs[i].what;
        }
    return NULL;
}

int MPIDI_CX_ofi_no_provider(int ret)
{
    char msg[400];
    const char *prov = getenv("FI_PROVIDER");
    const char *what = NULL;

    if (prov && prov[0] != '^') {
        /* FI_PROVIDER is a comma-separated list; layered names (tcp;ofi_rxm)
         * are judged by their core provider, the first part */
        char list[128];
        MPL_strncpy(list, prov, sizeof(list));
        char *save = NULL;
        for (char *name = strtok_r(list, ",", &save); name && !what;
             name = strtok_r(NULL, ",", &save)) {
            name[strcspn(name, ";")] = '\0';
            what = missing(name);
        }
    }
    if (prov && what)
        snprintf(msg, sizeof(msg),
                 "FI_PROVIDER=%s, but this machine lacks %s. Run where that hardware is, "
                 "or unset FI_PROVIDER (or set FI_PROVIDER=tcp) to use what is here", prov, what);
    else if (prov)
        snprintf(msg, sizeof(msg),
                 "FI_PROVIDER=%s: libfabric has no provider of that name that works here "
                 "(fi_getinfo: %s). `fi_info -l` lists its providers; unset FI_PROVIDER, "
                 "or FI_PROVIDER=tcp works over any IP network", prov, fi_strerror(-ret));
    else
        snprintf(msg, sizeof(msg),
                 "libfabric found no provider that works here (fi_getinfo: %s). "
                 "`fi_info -l` lists its providers; FI_PROVIDER=tcp needs only an IP network",
                 fi_strerror(-ret));
    return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                MPI_ERR_OTHER, "**cx|ofi_noprov", "**cx|ofi_noprov %s", msg);
}
