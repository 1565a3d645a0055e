/*
 * MPICH-CX: mpiexec's -pip option (utils_pip.c).
 */
#ifndef UTILS_PIP_H_INCLUDED
#define UTILS_PIP_H_INCLUDED

#include "hydra.h"

/* -pip's help text (mpiexec -pip --help). */
void HYD_uii_mpx_pip_help_fn(void);

/* -pip on the command line (reading_config_file: from the configuration
 * file, where an option already set is ignored). */
HYD_status HYD_uii_mpx_pip_fn(int reading_config_file);

/* At the end of option parsing: HYDRA_PIP when -pip was not given, and a
 * refusal when PiP is on but this build has no PiP host. */
HYD_status HYD_uii_mpx_pip_set_default(void);

#endif /* UTILS_PIP_H_INCLUDED */
