##
## MPICH-CX: PiP single-copy transfers, an IPC type of CH4 shm/ipc
##

noinst_HEADERS += src/mpid/ch4/shm/ipc/pip/pip_pre.h \
                  src/mpid/ch4/shm/ipc/pip/pip_post.h \
                  src/mpid/ch4/shm/ipc/pip/pip_rma.h \
                  src/mpid/ch4/shm/ipc/pip/pip_win_reach.h \
                  src/mpid/ch4/shm/ipc/pip/pip_steal.h \
                  src/mpid/ch4/shm/ipc/pip/pip_steal_victim.h \
                  src/mpid/ch4/shm/ipc/pip/pip_steal_hooks.h \
                  src/mpid/ch4/shm/ipc/pip/pip_daps.h \
                  src/mpid/ch4/shm/ipc/pip/pip_daps_hooks.h \
                  src/mpid/ch4/shm/ipc/pip/pip_mcoll.h \
                  src/mpid/ch4/shm/ipc/pip/pip_mcoll_sync.h \
                  src/mpid/ch4/shm/ipc/pip/pip_mcoll_vec.h \
                  src/mpid/ch4/shm/ipc/pip/pip_mcoll_hooks.h

mpi_core_sources += src/mpid/ch4/shm/ipc/pip/pip_init.c \
                    src/mpid/ch4/shm/ipc/pip/pip_steal.c \
                    src/mpid/ch4/shm/ipc/pip/pip_win.c \
                    src/mpid/ch4/shm/ipc/pip/pip_daps.c \
                    src/mpid/ch4/shm/ipc/pip/pip_mcoll_comm.c \
                    src/mpid/ch4/shm/ipc/pip/pip_mcoll_intra.c \
                    src/mpid/ch4/shm/ipc/pip/pip_mcoll_nodes.c
