/*
 * Copyright (C) MPICH-CX contributors.
 * See COPYRIGHT in top-level directory
 */
#ifndef CX_OFI_PROVIDER_H_INCLUDED
#define CX_OFI_PROVIDER_H_INCLUDED

/* The MPI error for fi_getinfo's failure ret (negative) when libfabric
 * offers no provider: it names FI_PROVIDER, what that provider needs and
 * this machine lacks (an Omni-Path adapter for psm2, ...), and the fix. */
int MPIDI_CX_ofi_no_provider(int ret);

#endif /* CX_OFI_PROVIDER_H_INCLUDED */
