## MPICH-CX: the PiP runtime, mpich-cx-piphost (local ranks as tasks of one
## process, see cx_pip_task.h).  A plain C program: no libmpi, no MPICH
## headers, so it builds with its own flags.

if BUILD_CX_PIP
bin_PROGRAMS += mpich-cx-piphost
mpich_cx_piphost_SOURCES = src/pm/pip/cx_pip_host.c src/pm/pip/cx_pip_task.c \
    src/pm/pip/cx_pip_elf.c src/pm/pip/cx_pip_got.c
mpich_cx_piphost_CPPFLAGS = -I$(top_srcdir)/src/pm/pip
mpich_cx_piphost_LDADD = -ldl -lpthread
noinst_HEADERS += src/pm/pip/cx_pip_elf.h src/pm/pip/cx_pip_task.h src/pm/pip/cx_pip_got.h \
    src/pm/pip/cx_pip_err.h
endif BUILD_CX_PIP
