## Copyright (C) MPICH-CX contributors. See COPYRIGHT in top-level directory.
## MPICH-CX: fork identification (MPI_Get_library_version, mpichversion)

mpi_core_sources += src/util/mpichcx/mpichcx_info.c src/util/mpichcx/mpichcx_pip.c \
                    src/util/mpichcx/mpichcx_daps.c
noinst_HEADERS += src/include/mpichcx_info.h src/include/mpichcx_pip.h src/include/mpichcx_daps.h \
                  src/include/mpichcx_mcoll.h

# PiP-MColl's entry points where CH4 shared memory (and so src/mpid/ch4/shm/ipc/pip) is not built
if !BUILD_CX_PIP_MODULE
mpi_core_sources += src/util/mpichcx/mpichcx_mcoll_absent.c
endif

# Initial-exec thread-local variables (Daps's per-thread slot pointer) live in
# a library of their own: glibc puts the whole TLS block of a library that
# has any into its static TLS, of which a PiP host keeps a few KiB for its 15
# namespaces. libmpi's own block is 3.5 KiB; this one is 16 bytes.
lib_LTLIBRARIES += lib/libmpichcx_tls.la
lib_libmpichcx_tls_la_SOURCES = src/util/mpichcx/mpichcx_tls.c
lib_libmpichcx_tls_la_LDFLAGS = -version-info 0:0:0
pmpi_convenience_libs += lib/libmpichcx_tls.la
