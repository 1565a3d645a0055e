[#] start of __file__
dnl MPICH-CX: PiP (process-in-process).  --enable-pip builds mpich-cx-piphost
dnl and makes the compiler wrappers build loadable programs; it needs
dnl glibc's dlmopen and memfd_create on x86_64 or aarch64 Linux.
dnl Default: on where those exist, off (with a notice) elsewhere.
dnl --enable-cx-steal (CAB-MPI), --enable-cx-daps (Daps) and --enable-cx-mcoll
dnl (PiP-MColl), default: with PiP, are decided here too.

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

dnl CAB-MPI: ranks idle in MPI steal copy and reduction work from PiP peers
dnl (MPIR_CVAR_CH4_CX_STEAL picks the strategy at run time).
AC_ARG_ENABLE([cx-steal],
    [AS_HELP_STRING([--enable-cx-steal],
        [MPICH-CX: CAB-MPI work stealing between PiP tasks (default: with PiP)])],
    [], [enable_cx_steal=$enable_pip])
case "$enable_cx_steal" in
    yes)
        if test "$enable_pip" != "yes" ; then
            AC_MSG_ERROR([--enable-cx-steal needs PiP, which is disabled${cx_pip_why:+ ($cx_pip_why)}: drop --enable-cx-steal or --disable-pip.])
        fi
        AC_DEFINE([MPIDI_CX_STEAL], [1], [Define to compile in CAB-MPI work stealing]) ;;
    no) ;;
    *) AC_MSG_ERROR([--enable-cx-steal=$enable_cx_steal: give yes or no (or --disable-cx-steal)]) ;;
esac

dnl Daps: ranks idle in MPI run the progress of PiP peers that compute
dnl (MPIR_CVAR_CH4_CX_DAPS turns it on at run time).
AC_ARG_ENABLE([cx-daps],
    [AS_HELP_STRING([--enable-cx-daps],
        [MPICH-CX: Daps progress stealing between PiP tasks (default: with PiP)])],
    [], [enable_cx_daps=$enable_pip])
case "$enable_cx_daps" in
    yes)
        if test "$enable_pip" != "yes" ; then
            AC_MSG_ERROR([--enable-cx-daps needs PiP, which is disabled${cx_pip_why:+ ($cx_pip_why)}: drop --enable-cx-daps or --disable-pip.])
        fi
        AC_DEFINE([MPIDI_CX_DAPS], [1], [Define to compile in Daps progress stealing]) ;;
    no) ;;
    *) AC_MSG_ERROR([--enable-cx-daps=$enable_cx_daps: give yes or no (or --disable-cx-daps)]) ;;
esac

dnl PiP-MColl: collectives between PiP tasks by posted addresses
dnl (MPIR_CVAR_CH4_CX_MCOLL and the pip_mcoll algorithm CVAR values).
AC_ARG_ENABLE([cx-mcoll],
    [AS_HELP_STRING([--enable-cx-mcoll],
        [MPICH-CX: PiP-MColl collectives between PiP tasks (default: with PiP)])],
    [], [enable_cx_mcoll=$enable_pip])
case "$enable_cx_mcoll" in
    yes)
        if test "$enable_pip" != "yes" ; then
            AC_MSG_ERROR([--enable-cx-mcoll needs PiP, which is disabled${cx_pip_why:+ ($cx_pip_why)}: drop --enable-cx-mcoll or --disable-pip.])
        fi
        AC_DEFINE([MPIDI_CX_MCOLL], [1], [Define to compile in PiP-MColl collectives]) ;;
    no) ;;
    *) AC_MSG_ERROR([--enable-cx-mcoll=$enable_cx_mcoll: give yes or no (or --disable-cx-mcoll)]) ;;
esac

])dnl end _BODY

[#] end of __file__
