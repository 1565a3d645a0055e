dnl Copyright (C) MPICH-CX contributors. See COPYRIGHT in top-level directory.
dnl
dnl MPICH-CX's constant-time matching at configure time: the default of
dnl MPIR_CVAR_CH4_CX_MATCHING (included by src/mpid/ch4/subconfigure.m4).
AC_ARG_WITH(ch4-matching,
    [--with-ch4-matching=hash|list
       MPICH-CX: how MPIDIG matches messages to receives by default
       (MPIR_CVAR_CH4_CX_MATCHING overrides it at MPI_Init):
         hash - constant-time matching, NewMadeleine's design (default)
         list - MPICH's linear posted and unexpected queues
    ],,with_ch4_matching=hash)
case $with_ch4_matching in
    hash|list) ;;
    *) AC_MSG_ERROR([--with-ch4-matching=${with_ch4_matching} is not a matching scheme: use hash or list]) ;;
esac
AC_DEFINE_UNQUOTED([MPIDIG_CX_DEFAULT_MATCHING], ["$with_ch4_matching"], [MPICH-CX default tag matching])
