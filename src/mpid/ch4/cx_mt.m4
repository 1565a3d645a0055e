dnl Copyright (C) MPICH-CX contributors. See COPYRIGHT in top-level directory.
dnl
dnl MPICH-CX's thread-safety models and VCI locks, at configure time: included
dnl by src/mpid/ch4/subconfigure.m4 right after --enable-ch4-mt is read and
dnl before MPICH acts on it.  Our models (src/mpid/ch4/src/cx_mt_models.def,
dnl read here) build as MPICH's direct model plus a default model name.
dnl on one line: the case patterns below look for " name " (one name per line, none
dnl matched, and configure called every fixed model, even direct, unknown)
cx_mt_models=`sed -n 's/^ *CX_MT_MODEL("\([[^"]]*\)".*/\1/p' "$srcdir/src/mpid/ch4/src/cx_mt_models.def" | tr '\n' ' '`
test -n "$cx_mt_models" || AC_MSG_ERROR([no model names in $srcdir/src/mpid/ch4/src/cx_mt_models.def: reassemble the tree (scripts/assemble)])
cx_mt_list=`echo $cx_mt_models lockless runtime | sed 's/ /, /g'`
dnl the model a build uses when MPIR_CVAR_CH4_MT_MODEL is empty
cx_default_mt=direct
cx_mt_given=$enable_ch4_mt
case " $cx_mt_models handoff lockless runtime " in
    *" $enable_ch4_mt "*) ;;
    *) AC_MSG_ERROR([Multi-threading model ${enable_ch4_mt} is unknown: use ${cx_mt_list}]) ;;
esac
case " $cx_mt_models " in
    *" $enable_ch4_mt "*) cx_default_mt=$enable_ch4_mt; enable_ch4_mt=direct ;;
esac
AC_DEFINE_UNQUOTED([MPIDI_CX_DEFAULT_MT_NAME], ["$cx_default_mt"], [MPICH-CX default thread-safety model])
AC_DEFINE([MPIDI_CX_DEFAULT_MT], [1], [MPICH-CX thread-safety models are built])

AC_ARG_WITH(ch4-vci-lock,
    [--with-ch4-vci-lock=lock
       MPICH-CX: the lock under each VCI (MPIR_CVAR_CH4_CX_VCI_LOCK overrides it):
       mutex, futex, ticket, mcs, clh, clhub, hclhub; others than mutex need
       --enable-thread-cs=per-vci. Default: each model's own (mutex for direct,
       futex for lockq, hclhub for hclhub-usc/-ksc)
    ],,with_ch4_vci_lock=default)
case $with_ch4_vci_lock in
    default|mutex|futex|ticket|mcs|clh|clhub|hclhub) ;;
    *) AC_MSG_ERROR([--with-ch4-vci-lock=${with_ch4_vci_lock} is not a lock: use mutex, futex, ticket, mcs, clh, clhub or hclhub]) ;;
esac
AC_DEFINE_UNQUOTED([MPIDI_CX_DEFAULT_VCI_LOCK], ["$with_ch4_vci_lock"], [MPICH-CX default VCI lock])

dnl our models other than direct, runtime (which needs no izem here, unlike
dnl handoff) and other VCI locks than the mutex need per-VCI critical sections
if test "$cx_default_mt" != direct -o "$enable_ch4_mt" = runtime -o "$with_ch4_vci_lock" != mutex -a "$with_ch4_vci_lock" != default ; then
    if test "$thread_granularity" != "MPICH_THREAD_GRANULARITY__VCI" ; then
        AC_MSG_ERROR([--enable-ch4-mt=${cx_mt_given} --with-ch4-vci-lock=${with_ch4_vci_lock} requires `--enable-thread-cs=per-vci`.])
    fi
fi
