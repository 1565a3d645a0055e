/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 */
/* Errors for bad values of MPICH-CX CVARs (cx_cvar.h). */
#include "mpidimpl.h"
#include "cx_cvar.h"

int MPIDI_CX_cvar_invalid(const char *cvar, const char *value, const char *valid)
{
    return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                MPI_ERR_OTHER, "**cx|cvar", "**cx|cvar %s %s %s",
                                value, cvar, valid);
}

int MPIDI_CX_cvar_invalid_int(const char *cvar, int value, const char *valid)
{
    char buf[32];
    snprintf(buf, sizeof(buf), "%d", value);
    return MPIDI_CX_cvar_invalid(cvar, buf, valid);
}

int MPIDI_CX_cvar_positive(const char *cvar, int value, unsigned *out)
{
    if (value < 1)
        return MPIDI_CX_cvar_invalid_int(cvar, value, "an integer of 1 or more");
    *out = (unsigned) value;
    return MPI_SUCCESS;
}
