/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 */
/* The errors MPI_Init returns for a bad value of one of our CVARs: they name
 * the variable, the value and the valid values (message **cx|cvar).  Every
 * MPICH-CX module checks its CVARs with these; they depend on nothing of ours. */
#ifndef CX_CVAR_H_INCLUDED
#define CX_CVAR_H_INCLUDED

int MPIDI_CX_cvar_invalid(const char *cvar, const char *value, const char *valid);
int MPIDI_CX_cvar_invalid_int(const char *cvar, int value, const char *valid);
/* MPI_SUCCESS and *out = value when value >= 1, else the error */
int MPIDI_CX_cvar_positive(const char *cvar, int value, unsigned *out);

#endif /* CX_CVAR_H_INCLUDED */
