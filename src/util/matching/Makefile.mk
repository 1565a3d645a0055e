## Copyright (C) MPICH-CX contributors. See COPYRIGHT in top-level directory.
## MPICH-CX: constant-time tag matching (NewMadeleine design) behind MPIDIG's
## posted and unexpected queues.

AM_CPPFLAGS += -I$(top_srcdir)/src/util/matching

mpi_core_sources += src/util/matching/cx_match.c

noinst_HEADERS += src/util/matching/cx_match.h
