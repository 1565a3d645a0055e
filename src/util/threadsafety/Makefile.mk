## Copyright (C) MPICH-CX contributors. See COPYRIGHT in top-level directory.
## MPICH-CX: the synchronization library (locks, queues, combining,
## selective reactivation) under CH4's per-VCI critical sections.

AM_CPPFLAGS += -I$(top_srcdir)/src/util/threadsafety

mpi_core_sources += src/util/threadsafety/cx_topology.c

noinst_HEADERS += \
    src/util/threadsafety/cx_sync_common.h \
    src/util/threadsafety/cx_node_cache.h \
    src/util/threadsafety/cx_ticket.h \
    src/util/threadsafety/cx_mcs.h \
    src/util/threadsafety/cx_clh.h \
    src/util/threadsafety/cx_clhub.h \
    src/util/threadsafety/cx_hclhub.h \
    src/util/threadsafety/cx_topology.h \
    src/util/threadsafety/cx_swpq.h \
    src/util/threadsafety/cx_dsmsync.h \
    src/util/threadsafety/cx_lockq.h \
    src/util/threadsafety/cx_offload_q.h \
    src/util/threadsafety/cx_issued.h \
    src/util/threadsafety/cx_reactivation.h \
    src/util/threadsafety/cx_park.h \
    src/util/threadsafety/cx_poll_skip.h \
    src/util/threadsafety/cx_oversub.h
