# Copyright (C) MPICH-CX contributors. See COPYRIGHT in top-level directory.
# Shared helpers of the MPICH-CX test sections. Sourced.
#
# Every test reports one line: PASS, FAIL, XFAIL (a known failure, listed with
# its reason) or SKIP (with the reason), then its name. Results are also
# appended to $T_RESULTS so that run-all can total them.

: "${T_RESULTS:=/dev/null}"
: "${T_LOGDIR:=${TMPDIR:-/tmp}/mpich-cx-test-logs}"
mkdir -p "$T_LOGDIR"

# CX_VERSION (from VERSION) and cx_mt_models (the model names of
# src/mpid/ch4/src/cx_mt_models.def): the build scripts' readers of their one
# sources.
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/cx-common.sh"

t_result() {   # STATUS NAME [DETAIL]
    local line="$1 $2${3:+ -- $3}"
    printf '%s\n' "$line"
    printf '%s\n' "$line" >> "$T_RESULTS"
}

# t_run NAME TIMEOUT_SECONDS COMMAND...: PASS when the command exits 0 within
# the time limit; otherwise FAIL with the tail of its output (full log kept).
t_run() {
    local name=$1 limit=$2; shift 2
    local log="$T_LOGDIR/${name//\//_}.log" start rc
    start=$(date +%s)
    timeout --kill-after=10 "$limit" "$@" > "$log" 2>&1 && rc=0 || rc=$?
    local secs=$(( $(date +%s) - start ))
    if [ $rc = 0 ]; then
        t_result PASS "$name" "${secs}s"
    else
        [ $rc = 124 ] && echo "timed out after ${limit}s" >> "$log"
        t_result FAIL "$name" "exit $rc after ${secs}s; log: $log"
        tail -n 15 "$log" | sed 's/^/    | /'
    fi
    return 0
}

# t_check NAME MESSAGE COMMAND...: PASS when the command succeeds, else FAIL with MESSAGE.
t_check() {
    local name=$1 msg=$2; shift 2
    if "$@" >/dev/null 2>&1; then t_result PASS "$name"; else t_result FAIL "$name" "$msg"; fi
}

# Loopback only: Hydra on localhost, libfabric's tcp provider on lo.
t_mpi_env() {
    export FI_TCP_IFACE=lo FI_SOCKETS_IFACE=lo
    export HYDRA_HOST_FILE=/dev/null
}

# The ranks of a node talk through the network module (libfabric's tcp
# provider on loopback), not shared memory: "netmod" tests.
T_NETMOD_ENV=(MPIR_CVAR_NOLOCAL=1 FI_PROVIDER=tcp)
# The same through OFI's active-message path (tagged messages off), where
# MPIDIG's matching does the matching instead of the provider: "ofi-am" tests.
T_OFI_AM_ENV=(MPIR_CVAR_NOLOCAL=1 MPIR_CVAR_CH4_OFI_ENABLE_TAGGED=0 FI_PROVIDER=tcp)

# "direct, lockq, ...": the model names as MPI_Init's error message lists them
# (MPICH's lockless follows them there).
t_mt_model_list() { cx_mt_models | paste -sd, - | sed 's/,/, /g'; }

# The thread-safety configurations the tests cover: "LABEL|CVAR=VALUE ...".
# A build configured with --enable-ch4-mt=runtime selects each at MPI_Init.
# Every model of cx_mt_models.def is among them (test/unit/scripts.sh checks).
T_MODELS=(
    "direct-mutex|"
    "direct-ticket|MPIR_CVAR_CH4_CX_VCI_LOCK=ticket"
    "direct-mcs|MPIR_CVAR_CH4_CX_VCI_LOCK=mcs"
    "direct-clh|MPIR_CVAR_CH4_CX_VCI_LOCK=clh"
    "direct-clhub|MPIR_CVAR_CH4_CX_VCI_LOCK=clhub"
    "direct-hclhub|MPIR_CVAR_CH4_CX_VCI_LOCK=hclhub MPICH_CX_FAKE_NUMA_NODES=2"
    "direct-futex|MPIR_CVAR_CH4_CX_VCI_LOCK=futex"
    "lockq|MPIR_CVAR_CH4_MT_MODEL=lockq"
    "lockq-poll|MPIR_CVAR_CH4_MT_MODEL=lockq MPIR_CVAR_CH4_CX_WAIT=poll"
    "lockq-ksc|MPIR_CVAR_CH4_MT_MODEL=lockq MPIR_CVAR_CH4_CX_WAIT=ksc"
    "lockq-mutex|MPIR_CVAR_CH4_MT_MODEL=lockq MPIR_CVAR_CH4_CX_VCI_LOCK=mutex"
    "lockq-mcs|MPIR_CVAR_CH4_MT_MODEL=lockq MPIR_CVAR_CH4_CX_VCI_LOCK=mcs"
    "csync|MPIR_CVAR_CH4_MT_MODEL=csync"
    "lockq-4vci|MPIR_CVAR_CH4_MT_MODEL=lockq MPIR_CVAR_CH4_NUM_VCIS=4"
    "lockq-idle|MPIR_CVAR_CH4_MT_MODEL=lockq MPIR_CVAR_CH4_CX_SERVER_IDLE=auto"
    "hclhub-usc|MPIR_CVAR_CH4_MT_MODEL=hclhub-usc MPICH_CX_FAKE_NUMA_NODES=2"
    "hclhub-ksc|MPIR_CVAR_CH4_MT_MODEL=hclhub-ksc"
    "offload|MPIR_CVAR_CH4_MT_MODEL=offload"
    "offload-static|MPIR_CVAR_CH4_MT_MODEL=offload MPIR_CVAR_CH4_CX_OFFLOAD=static"
)

# t_device PREFIX: the installed MPICH's device, e.g. ch4:ofi or ch4:ucx.
t_device() {
    "$1/bin/mpichversion" 2>/dev/null | sed -n 's/^MPICH Device:[[:space:]]*//p'
}

# t_no_ch4_shm PREFIX: why the installed MPICH-CX has no CH4 shared memory
# (and so no PiP single copy, CAB-MPI, Daps, PiP-MColl or netmod poll
# skipping), or nothing where it has it. ch4:ucx builds none unless
# --with-ch4-shmmods names one.
t_no_ch4_shm() {
    local opts; opts=$("$1/bin/mpichversion" 2>/dev/null | sed -n 's/^MPICH configure:[[:space:]]*//p')
    case " $opts " in
    *" --with-ch4-shmmods=none "*|*" --with-ch4-shmmods=no "*|*" --without-ch4-shmmods "*)
        echo "this build has no CH4 shared memory (--with-ch4-shmmods=none)" ;;
    *" --with-ch4-shmmods="*) ;;
    *" --with-device=ch4:ucx"*) echo "this build has no CH4 shared memory (ch4:ucx's default)" ;;
    esac
}

# t_runtime_build PREFIX: true when the installed MPICH-CX selects models at run time.
t_runtime_build() {
    "$1/bin/mpichversion" 2>/dev/null | grep -q -- '--enable-ch4-mt=runtime'
}
