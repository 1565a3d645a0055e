/*
 * MPICH-CX: mpiexec's -pip option: local ranks as tasks of PiP hosts
 * (the proxy's side is pm/pmiserv/pmip_pip.c).
 */

#include "hydra_server.h"
#include "hydra.h"
#include "utils_pip.h"

void HYD_uii_mpx_pip_help_fn(void)
{
    printf("\n");
    printf("-pip: MPICH-CX: start the local ranks of each node as PiP tasks: up to 15 ranks\n");
    printf("   share one process (mpich-cx-piphost) and its address space, each with its own\n");
    printf("   globals and libraries, so shared memory transfers copy once. Programs must be\n");
    printf("   built with MPICH-CX's compiler wrappers. Also: HYDRA_PIP=1\n");
}

HYD_status HYD_uii_mpx_pip_fn(int reading_config_file)
{
    HYD_status status = HYD_SUCCESS;

    if (reading_config_file && HYD_server_info.user_global.pip != -1) {
        /* global variable already set; ignore */
        goto fn_exit;
    }

    HYDU_ERR_CHKANDJUMP(status, HYD_server_info.user_global.pip != -1,
                        HYD_INTERNAL_ERROR, "PiP option already set\n");

    HYD_server_info.user_global.pip = 1;

  fn_exit:
    return status;

  fn_fail:
    goto fn_exit;
}

HYD_status HYD_uii_mpx_pip_set_default(void)
{
    HYD_status status = HYD_SUCCESS;

    if (HYD_server_info.user_global.pip == -1 &&
        MPL_env2bool("HYDRA_PIP", &HYD_server_info.user_global.pip) == 0)
        HYD_server_info.user_global.pip = 0;
    if (HYD_server_info.user_global.pip) {
        /* refuse now, not in every proxy, when this build has no PiP host */
        char *host = NULL;
        HYDU_MALLOC_OR_JUMP(host, char *, strlen(HYD_server_info.base_path) + 32, status);
        sprintf(host, "%smpich-cx-piphost", HYD_server_info.base_path);
        if (access(host, X_OK) != 0) {
            HYDU_error_printf("-pip: %s not found: this MPICH-CX was configured without PiP "
                              "(--disable-pip, or a system without glibc's dlmopen)\n", host);
            MPL_free(host);
            HYDU_ERR_SETANDJUMP(status, HYD_INVALID_PARAM, "PiP not available\n");
        }
        MPL_free(host);
    }

  fn_exit:
    return status;

  fn_fail:
    goto fn_exit;
}
