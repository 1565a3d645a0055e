##
## MPICH-CX: PiP single-copy transfers, an IPC type of CH4 shm/ipc
##

noinst_HEADERS += src/mpid/ch4/shm/ipc/pip/pip_pre.h \
                  src/mpid/ch4/shm/ipc/pip/pip_post.h \
                  src/mpid/ch4/shm/ipc/pip/pip_share.h

mpi_core_sources += src/mpid/ch4/shm/ipc/pip/pip_init.c \
                    src/mpid/ch4/shm/ipc/pip/pip_share.c \
                    src/mpid/ch4/shm/ipc/pip/pip_win.c
