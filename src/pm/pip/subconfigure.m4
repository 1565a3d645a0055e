[#] start of __file__
dnl MPICH-CX: PiP (process-in-process).  --enable-pip builds mpich-cx-piphost
dnl and makes the compiler wrappers build loadable programs; it needs
dnl glibc's dlmopen and memfd_create on x86_64 or aarch64 Linux.
dnl Default: on where those exist, off (with a notice) elsewhere.
dnl --enable-cx-steal (CAB-MPI), --enable-cx-daps (Daps) and --enable-cx-mcoll
dnl (PiP-MColl), default: with PiP and CH4 shared memory, are decided here too.

dnl PAC_CX_PIP_FEATURE(OPTION, VAR, DEFINE, DESCRIPTION): a feature of CH4's
dnl PiP module. VAR=default becomes yes where it can be built (no reason in
dnl cx_pip_feature_why), else no; yes where it cannot stops configure.
AC_DEFUN([PAC_CX_PIP_FEATURE],[
case "$$2" in
    default)
        if test -z "$cx_pip_feature_why" ; then $2=yes ; else $2=no ; fi ;;
    yes)
        if test -n "$cx_pip_feature_why" ; then
            AC_MSG_ERROR([--enable-$1 cannot be built: $cx_pip_feature_why. Drop --enable-$1.])
        fi ;;
    no) ;;
    *) AC_MSG_ERROR([--enable-$1=$$2: give yes or no (or --disable-$1)]) ;;
esac
if test "$$2" = "yes" ; then
    AC_DEFINE([$3], [1], [$4])
fi
])

AC_DEFUN([PAC_SUBCFG_PREREQ_]PAC_SUBCFG_AUTO_SUFFIX,[
])

AC_DEFUN([PAC_SUBCFG_BODY_]PAC_SUBCFG_AUTO_SUFFIX,[

AC_ARG_ENABLE([pip],
    [AS_HELP_STRING([--enable-pip],
        [MPICH-CX: PiP, local ranks as tasks of one process (mpiexec -pip);
         needs glibc (dlmopen, memfd_create) on x86_64 or aarch64 Linux
         (default: yes where available)])],
    [], [enable_pip=default])

cx_pip_why=
case "$host_os-$host_cpu" in
    linux-gnu*-x86_64|linux-gnu*-aarch64) ;;
    *) cx_pip_why="this host is $host_os on $host_cpu, not glibc Linux on x86_64 or aarch64" ;;
esac
if test -z "$cx_pip_why" ; then
    cx_pip_save_LIBS=$LIBS
    AC_SEARCH_LIBS([dlmopen], [dl], [], [cx_pip_why="the C library has no dlmopen"])
    AC_CHECK_FUNC([memfd_create], [], [cx_pip_why="the C library has no memfd_create"])
    LIBS=$cx_pip_save_LIBS
fi
case "$enable_pip" in
    yes)
        if test -n "$cx_pip_why" ; then
            AC_MSG_ERROR([--enable-pip: PiP cannot be built: $cx_pip_why. Configure with --disable-pip.])
        fi ;;
    no) ;;
    default)
        if test -n "$cx_pip_why" ; then
            AC_MSG_NOTICE([PiP disabled: $cx_pip_why])
            enable_pip=no
        else
            enable_pip=yes
        fi ;;
    *) AC_MSG_ERROR([--enable-pip=$enable_pip: give yes or no (or --disable-pip)]) ;;
esac
AM_CONDITIONAL([BUILD_CX_PIP], [test "$enable_pip" = "yes"])
dnl The compiler wrappers build what PiP can load: position-independent code
dnl without copy relocations, linked as a PIE that exports main.
CX_PIP_CFLAGS=
CX_PIP_LDFLAGS=
if test "$enable_pip" = "yes" ; then
    AC_DEFINE([MPICH_CX_HAVE_PIP], [1], [Define if the PiP runtime (mpich-cx-piphost) is built])
    CX_PIP_CFLAGS="-fPIC"
    CX_PIP_LDFLAGS="-pie -rdynamic"
fi
AC_SUBST([CX_PIP_CFLAGS])
AC_SUBST([CX_PIP_LDFLAGS])

dnl CAB-MPI, Daps and PiP-MColl live in CH4's PiP module (shm/ipc/pip), which
dnl is compiled with CH4's shared memory: ch4:ucx builds none by default.
cx_pip_module_why=
if test "$device_name" != "ch4" ; then
    cx_pip_module_why="the device is $device_name, not ch4"
elif test "$with_ch4_shmmods" = "none" -o "$with_ch4_shmmods" = "no" ; then
    cx_pip_module_why="this build has no CH4 shared memory (--with-ch4-shmmods=$with_ch4_shmmods, ch4:ucx's default)"
fi
AM_CONDITIONAL([BUILD_CX_PIP_MODULE], [test -z "$cx_pip_module_why"])
cx_pip_feature_why=$cx_pip_module_why
if test "$enable_pip" != "yes" ; then
    cx_pip_feature_why="PiP is disabled${cx_pip_why:+ ($cx_pip_why)}"
fi

dnl CAB-MPI: ranks idle in MPI steal copy and reduction work from PiP peers
dnl (MPIR_CVAR_CH4_CX_STEAL picks the strategy at run time).
AC_ARG_ENABLE([cx-steal],
    [AS_HELP_STRING([--enable-cx-steal],
        [MPICH-CX: CAB-MPI work stealing between PiP tasks (default: with PiP
         and CH4 shared memory)])],
    [], [enable_cx_steal=default])
PAC_CX_PIP_FEATURE([cx-steal], [enable_cx_steal], [MPIDI_CX_STEAL],
    [Define to compile in CAB-MPI work stealing])

dnl Daps: ranks idle in MPI run the progress of PiP peers that compute
dnl (MPIR_CVAR_CH4_CX_DAPS turns it on at run time).
AC_ARG_ENABLE([cx-daps],
    [AS_HELP_STRING([--enable-cx-daps],
        [MPICH-CX: Daps progress stealing between PiP tasks (default: with PiP
         and CH4 shared memory)])],
    [], [enable_cx_daps=default])
PAC_CX_PIP_FEATURE([cx-daps], [enable_cx_daps], [MPIDI_CX_DAPS],
    [Define to compile in Daps progress stealing])

dnl PiP-MColl: collectives between PiP tasks by posted addresses
dnl (MPIR_CVAR_CH4_CX_MCOLL and the pip_mcoll algorithm CVAR values).
AC_ARG_ENABLE([cx-mcoll],
    [AS_HELP_STRING([--enable-cx-mcoll],
        [MPICH-CX: PiP-MColl collectives between PiP tasks (default: with PiP
         and CH4 shared memory)])],
    [], [enable_cx_mcoll=default])
PAC_CX_PIP_FEATURE([cx-mcoll], [enable_cx_mcoll], [MPIDI_CX_MCOLL],
    [Define to compile in PiP-MColl collectives])

if test "$enable_pip" = "yes" -a -n "$cx_pip_module_why" ; then
    AC_MSG_NOTICE([CAB-MPI, Daps and PiP-MColl not built: $cx_pip_module_why])
fi

])dnl end _BODY

[#] end of __file__
