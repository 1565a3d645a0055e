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
