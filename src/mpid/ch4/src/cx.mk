##
## Copyright (C) MPICH-CX contributors.
##     See COPYRIGHT in top-level directory
##
## MPICH-CX's files in CH4's src/ (included by its Makefile.mk).

# thread-safety models (cx_mt_*), their CVAR errors, selective reactivation
noinst_HEADERS += src/mpid/ch4/src/cx_cvar.h src/mpid/ch4/src/cx_mt.h \
    src/mpid/ch4/src/cx_mt_impl.h src/mpid/ch4/src/cx_mt_ops.h \
    src/mpid/ch4/src/cx_mt_models.def src/mpid/ch4/src/cx_mt_pt2pt.h src/mpid/ch4/src/cx_mt_rma.h
mpi_core_sources += src/mpid/ch4/src/cx_cvar.c src/mpid/ch4/src/cx_mt_select.c \
    src/mpid/ch4/src/cx_mt_descr.c src/mpid/ch4/src/cx_mt_lockq.c \
    src/mpid/ch4/src/cx_mt_csync.c src/mpid/ch4/src/cx_mt_issue.c \
    src/mpid/ch4/src/cx_mt_reactivation.c src/mpid/ch4/src/cx_mt_offload.c

# constant-time matching and the unexpected-message buffers
noinst_HEADERS += src/mpid/ch4/src/cx_recvq.h src/mpid/ch4/src/cx_unexp_buf.h
mpi_core_sources += src/mpid/ch4/src/cx_recvq.c src/mpid/ch4/src/cx_unexp_buf.c

# netmod poll skipping, ranks that yield their cores
noinst_HEADERS += src/mpid/ch4/src/cx_nm_poll.h src/mpid/ch4/src/cx_nm_poll_progress.h
mpi_core_sources += src/mpid/ch4/src/cx_nm_poll.c src/mpid/ch4/src/cx_rank_yield.c

# libfabric offering no provider: an error that names FI_PROVIDER and what it lacks
if BUILD_CH4_NETMOD_OFI
noinst_HEADERS += src/mpid/ch4/netmod/ofi/cx_ofi_provider.h
mpi_core_sources += src/mpid/ch4/netmod/ofi/cx_ofi_provider.c
endif
