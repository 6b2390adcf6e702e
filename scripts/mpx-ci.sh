#!/usr/bin/env bash
# scripts/mpx-ci.sh - run an Open MPI job across N emulated hosts on ONE Linux
# machine, so that CI exercises the cross-node path (TCP between hosts, no
# shared memory between them, osc pt2pt). Root only. The recipe, its
# measurements and its pitfalls are in shared/docs/multinode.md; how the
# project uses it is in docs/multinode-ci.md.
#
# usage:
#   scripts/mpx-ci.sh [OPTIONS] [--] MPIRUN_ARGS...
#       runs `mpirun MPIRUN_ARGS...` on host 1
#   scripts/mpx-ci.sh [OPTIONS] -c COMMAND [ARGS...]
#       runs COMMAND on host 1; every plain `mpirun -np K prog` inside it
#       spans the emulated hosts
#   scripts/mpx-ci.sh --check
#       exit 0 when this machine can run the emulation; otherwise exit 77 and
#       say why on stderr (not root, no `ip netns`, no veth/bridge, ...)
#
# options:
#   -n HOSTS    emulated hosts (default 2; 1..32)
#   -s SLOTS    slots per host in the hostfile (default 1). With -s 2 and
#               -np 2 both ranks land on host 1; add --map-by node to spread.
#   -t SECONDS  time limit of the job (default MPX_TIMEOUT, else 300). When it
#               expires mpirun gets SIGTERM (SIGKILL 10 s later); exit 124.
#
# What it builds (names start with MPX_PFX, default "mpx"):
#   netns PFX-sw        the "switch": bridge br0, no address, no uplink
#   netns PFX1..PFXn    one per host: lo, and eth0 = MPX_NET.i/24, a veth
#                       whose peer pI is a port of br0 in PFX-sw
#   /etc/netns/PFXi/    hosts (every emulated host) and resolv.conf
#                       (127.0.0.1), which `ip netns exec` binds over /etc
# Every process tree started on a host (mpirun or COMMAND on host 1; an orted
# through the ssh stand-in on the others) also gets its own UTS namespace
# (hostname PFXi: Open MPI's per-host shared-memory file names must not
# collide) and its own mount namespace with a private tmpfs on /dev/shm.
# Nothing is created in the root network namespace; the only addresses are the
# ones inside these namespaces, and the bridge has no way out.
#
# Teardown runs on every exit path (EXIT trap): it signals only processes
# inside the namespaces above (ip netns pids), deletes the namespaces and
# /etc/netns/PFX*, and the scratch directory. Leftovers of a run that was
# SIGKILLed (namespaces, processes in them, its scratch directory) are removed
# at the next start with the same prefix; a probe namespace (PFX-chk*) left by
# a killed probe, by the next probe once it is a minute old. Runs with the
# same prefix are serialised with flock; concurrent runs need different
# MPX_PFX.
#
# environment:
#   MPX_PFX        name prefix (default mpx; [a-z][a-z0-9]*, at most 8 chars)
#   MPX_NET        first three octets of the private /24 (default 10.250.0)
#   MPX_TIMEOUT    default of -t
#   MPX_WORK       scratch directory (default: mktemp -d, removed at exit)
#   MPX_MPIRUN     the mpirun to use (default: mpirun on PATH)
#   MPX_LOCK_WAIT  seconds to wait for a concurrent run with the same prefix
#                  (default 120)
# exported to the job (besides the OMPI_* settings below): MPX_CI_ACTIVE=1,
# MPX_HOSTS ("mpx1 mpx2 ..."), MPX_HOSTFILE.
#
# exit status: the job's; 124 time limit; 130 interrupted (INT/TERM/HUP);
#              77 the emulation is not possible here; 2 usage; 3 setup failed
set -u

usage() {
    sed -n '2,/^set -u/p' "$0" | sed -e '/^set -u/d' -e 's/^# \{0,1\}//' >&2
    exit 2
}
say() { echo "mpx-ci: $*" >&2; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }'; }

N=2
SLOTS=1
TMO=${MPX_TIMEOUT:-300}
MODE=mpirun
CHECK=0
while [ $# -gt 0 ]; do
    case "$1" in
        -n) [ $# -ge 2 ] || usage; N=$2; shift 2 ;;
        -s) [ $# -ge 2 ] || usage; SLOTS=$2; shift 2 ;;
        -t) [ $# -ge 2 ] || usage; TMO=$2; shift 2 ;;
        -c) MODE="command"; shift; break ;;
        --check) CHECK=1; shift ;;
        -h|--help) usage ;;
        --) shift; break ;;
        *) break ;;
    esac
done
PFX=${MPX_PFX:-mpx}
NET=${MPX_NET:-10.250.0}
LOCK_WAIT=${MPX_LOCK_WAIT:-120}
MPIRUN=${MPX_MPIRUN:-mpirun}

isnum() { case "$1" in ''|*[!0-9]*) return 1 ;; *) return 0 ;; esac; }
if ! { isnum "$N" && [ "$N" -ge 1 ] && [ "$N" -le 32 ]; }; then say "-n: 1..32 hosts, got '$N'"; exit 2; fi
if ! { isnum "$SLOTS" && [ "$SLOTS" -ge 1 ]; }; then say "-s: a positive slot count, got '$SLOTS'"; exit 2; fi
if ! { isnum "$TMO" && [ "$TMO" -ge 1 ]; }; then say "-t/MPX_TIMEOUT: positive seconds, got '$TMO'"; exit 2; fi
isnum "$LOCK_WAIT" || { say "MPX_LOCK_WAIT: seconds, got '$LOCK_WAIT'"; exit 2; }
[[ $PFX =~ ^[a-z][a-z0-9]{0,7}$ ]] || { say "MPX_PFX: [a-z][a-z0-9]*, at most 8 chars, got '$PFX'"; exit 2; }
# private ranges only: 10/8, 172.16/12, 192.168/16
if ! [[ $NET =~ ^(10\.[0-9]{1,3}|172\.(1[6-9]|2[0-9]|3[01])|192\.168)\.[0-9]{1,3}$ ]]; then
    say "MPX_NET: the first three octets of a private /24 (10.x.y, 172.16-31.y, 192.168.y), got '$NET'"
    exit 2
fi
if [ "$CHECK" = 0 ] && [ $# -eq 0 ]; then
    usage
fi

# ---- can the emulation run here? (--check, and before every run) ---------------
# Prints the reason and returns 1 when it cannot. Probes the kernel features in
# an anonymous network namespace, which vanishes with the probe: nothing named
# is created.
probe() {
    local c
    if [ "$(id -u)" != 0 ]; then
        say "needs root (CAP_SYS_ADMIN and CAP_NET_ADMIN for network, UTS and mount namespaces); uid is $(id -u)"
        return 1
    fi
    for c in ip unshare timeout flock awk "$MPIRUN"; do
        command -v "$c" >/dev/null 2>&1 || { say "'$c' not found (iproute2, util-linux, coreutils, openmpi-bin)"; return 1; }
    done
    if ! ip netns list >/dev/null 2>&1; then
        say "'ip netns' is unavailable (iproute2 without netns support?)"
        return 1
    fi
    local out
    if ! out=$(unshare --net --uts --mount --propagation private sh -c '
            ip link add mpxprobe0 type veth peer name mpxprobe1 &&
            ip link add mpxprobebr type bridge &&
            ip link set mpxprobe0 master mpxprobebr &&
            hostname mpxprobe &&
            mount -t tmpfs -o mode=1777 mpxprobe /dev/shm' 2>&1); then
        say "network/UTS/mount namespaces with veth and bridge are unavailable here: $out"
        return 1
    fi
    # named namespaces (bind mounts under /run/netns), as the run creates them.
    # The probe's name carries its creation time; a probe lives for
    # milliseconds, so one older than a minute was left by a killed probe
    # (SIGKILL between add and del) and is removed here. Its PID alone is not
    # a unique name: a later run, in another PID namespace or after PID
    # reuse, gets the same PID and `ip netns add` then fails with "File
    # exists" on a machine that can run the emulation.
    local chk t ns born
    t=$(date +%s)
    for ns in $(ip netns list 2>/dev/null | awk '{ print $1 }' | grep -E "^${PFX}-chk[0-9]+(-[0-9]+){0,2}\$" || true); do
        born=${ns#"$PFX"-chk*-}
        born=${born%%-*}
        # names without a time (earlier versions of this script) are stale too
        if [[ $ns =~ ^${PFX}-chk[0-9]+$ ]] || [ $((t - born)) -gt 60 ]; then
            ip netns del "$ns" 2>/dev/null || true
        fi
    done
    chk=$PFX-chk$$-$t
    if ! out=$(ip netns add "$chk" 2>&1); then
        chk=$chk-$RANDOM             # a concurrent probe with our PID and second
        if ! out=$(ip netns add "$chk" 2>&1); then
            say "'ip netns add' fails here: $out"
            return 1
        fi
    fi
    ip netns del "$chk" 2>/dev/null || say "could not delete the probe namespace $chk"
    return 0
}

if [ "$CHECK" = 1 ]; then
    probe || exit 77
    exit 0
fi
if [ -n "${MPX_CI_ACTIVE:-}" ]; then
    say "already inside an emulated cluster (MPX_CI_ACTIVE is set); not nesting"
    exit 77
fi
probe || exit 77

IP=$(command -v ip)
UNSHARE=$(command -v unshare)
MPIRUN=$(command -v "$MPIRUN")

# ---- one run per prefix at a time -------------------------------------------------
lockdir=/run/lock
[ -d "$lockdir" ] && [ -w "$lockdir" ] || lockdir=/tmp
LOCK=$lockdir/mpx-ci.$PFX.lock
exec 9>>"$LOCK" || { say "cannot open $LOCK"; exit 3; }
if ! flock -w "$LOCK_WAIT" 9; then
    say "another mpx-ci run with prefix '$PFX' still holds $LOCK after ${LOCK_WAIT} s (use another MPX_PFX/MPX_NET)"
    exit 3
fi

# ---- teardown (only our namespaces, only processes inside them) -----------------
ours() { "$IP" netns list 2>/dev/null | awk '{ print $1 }' | grep -E "^${PFX}([0-9]+|-sw)\$" || true; }
inside() {
    local ns
    for ns in $(ours); do "$IP" netns pids "$ns" 2>/dev/null || true; done
}
teardown() {
    local pids k ns
    pids=$(inside)
    if [ -n "$pids" ]; then
        # shellcheck disable=SC2086  # one PID per word
        kill -TERM $pids 2>/dev/null || true
        k=0
        while [ -n "$(inside)" ] && [ "$k" -lt 30 ]; do sleep 0.1; k=$((k + 1)); done
        pids=$(inside)
        # shellcheck disable=SC2086
        [ -z "$pids" ] || kill -KILL $pids 2>/dev/null || true
    fi
    for ns in $(ours); do
        "$IP" netns del "$ns" 2>/dev/null || say "could not delete netns $ns"
        rm -rf "/etc/netns/$ns"
    done
    rmdir /etc/netns 2>/dev/null || true   # only when no one else has entries there
}

# The scratch directory of a run killed by SIGKILL (no trap ran) is recorded
# here and removed by the next run with the same prefix.
RECORD=$lockdir/mpx-ci.$PFX.work
stale=$(cat "$RECORD" 2>/dev/null || true)
if [[ $stale == /tmp/mpx-ci.?????? ]] && [ -d "$stale" ]; then rm -rf "$stale"; fi
rm -f "$RECORD"
WORK=${MPX_WORK:-}
own_work=0
if [ -z "$WORK" ]; then
    WORK=$(mktemp -d /tmp/mpx-ci.XXXXXX) || { say "mktemp failed"; exit 3; }
    own_work=1
    echo "$WORK" >"$RECORD" || true
fi
mkdir -p "$WORK/tmp" || { say "cannot create $WORK/tmp"; exit 3; }

# shellcheck disable=SC2317  # called through the EXIT trap
finish() {
    local rc=$? t
    trap - EXIT INT TERM HUP
    t=$(now)
    teardown
    if [ "$own_work" = 1 ]; then rm -rf "$WORK" "$RECORD"; else rm -rf "$WORK/tmp" "$WORK/nsexec" "$WORK/hostfile"; fi
    say "teardown $(since "$t") s, exit $rc"
    exit "$rc"
}
fail() { say "setup failed: $*"; exit 3; }

teardown                              # leftovers of a killed earlier run
trap finish EXIT
trap 'exit 130' INT TERM HUP

# ---- setup ------------------------------------------------------------------------
t0=$(now)
SW=$PFX-sw
"$IP" netns add "$SW" || fail "ip netns add $SW"
"$IP" -n "$SW" link set lo up || fail "lo up in $SW"
"$IP" -n "$SW" link add br0 type bridge || fail "bridge in $SW"
"$IP" -n "$SW" link set br0 up || fail "br0 up"
hosts=()
: >"$WORK/hostfile"
for ((i = 1; i <= N; i++)); do
    h=$PFX$i
    hosts+=("$h")
    "$IP" netns add "$h" || fail "ip netns add $h"
    # both ends are created inside namespaces: nothing appears in the root one
    "$IP" -n "$SW" link add "p$i" type veth peer name eth0 netns "$h" || fail "veth p$i/$h:eth0"
    "$IP" -n "$SW" link set "p$i" master br0 up || fail "p$i on br0"
    "$IP" netns exec "$h" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 >/dev/null 2>&1 || true
    "$IP" -n "$h" link set lo up || fail "lo up in $h"
    "$IP" -n "$h" addr add "$NET.$i/24" dev eth0 || fail "address $NET.$i on $h"
    "$IP" -n "$h" link set eth0 up || fail "eth0 up in $h"
    echo "$h slots=$SLOTS" >>"$WORK/hostfile"
done
for h in "${hosts[@]}"; do
    mkdir -p "/etc/netns/$h" || fail "mkdir /etc/netns/$h"
    {
        echo "127.0.0.1 localhost"
        for ((j = 1; j <= N; j++)); do echo "$NET.$j $PFX$j"; done
    } >"/etc/netns/$h/hosts"
    echo "nameserver 127.0.0.1" >"/etc/netns/$h/resolv.conf"
done

# The ssh stand-in Open MPI's rsh launcher calls as `AGENT [opts] HOST CMD...`
# (ssh semantics: the words after HOST are joined and run by a shell). A clean
# environment as after an ssh login; MCA settings still reach the orted on its
# command line (plm_rsh_pass_environ_mca_params).
rpath=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin
case ":$rpath:" in *":$(dirname "$MPIRUN"):"*) ;; *) rpath=$(dirname "$MPIRUN"):$rpath ;; esac
cat >"$WORK/nsexec" <<EOF || fail "writing $WORK/nsexec"
#!/bin/sh
# nsexec [-opts] HOST CMD... (written by mpx-ci.sh; ssh stand-in for plm_rsh_agent)
while [ \$# -gt 0 ]; do case "\$1" in -*) shift ;; *) break ;; esac; done
host=\$1; shift
case "\$host" in ${PFX}[0-9]*) ;; *) echo "nsexec: unknown host \$host" >&2; exit 255 ;; esac
[ -e "/run/netns/\$host" ] || { echo "nsexec: unknown host \$host" >&2; exit 255; }
exec $IP netns exec "\$host" $UNSHARE --uts --mount --propagation private \\
    env -i PATH=$rpath HOME=\${HOME:-/root} LANG=C \\
    sh -c 'hostname "\$1" && mount -t tmpfs -o mode=1777 mpxshm /dev/shm || exit 255
           shift; exec sh -c "\$*"' nsexec "\$host" "\$@"
EOF
chmod 755 "$WORK/nsexec" || fail "chmod nsexec"
say "setup of $N hosts ($SLOTS slots each, $NET.0/24) $(since "$t0") s"

# ---- Open MPI settings of the emulated cluster ----------------------------------
# They override a single-host environment (scripts/mpi_env.sh: btl self,vader,
# osc sm,rdma, oob on lo), which cannot work across hosts.
export OMPI_MCA_plm_rsh_agent="$WORK/nsexec"
export OMPI_MCA_orte_default_hostfile="$WORK/hostfile"
export OMPI_MCA_oob_tcp_if_include="$NET.0/24"   # launcher traffic on the private /24
export OMPI_MCA_btl_tcp_if_include="$NET.0/24"
export OMPI_MCA_btl=self,vader,tcp               # vader within a host, tcp between hosts
export OMPI_MCA_pml=ob1
export OMPI_MCA_osc=^ucx                         # brings back osc pt2pt (Debian: osc = ^ucx,pt2pt)
export OMPI_MCA_hwloc_base_binding_policy=none   # every "host" sees the same cores
export OMPI_MCA_mpi_yield_when_idle=1            # fewer cores than ranks + daemons
export OMPI_MCA_orte_tmpdir_base="$WORK/tmp"     # session dirs go with the scratch dir
# Shared-memory backing files on each host's private /dev/shm (gone with its
# mount namespace). An outer run's per-run directory (scripts/mpi_rundir.sh)
# does not exist inside the hosts: vader could not create its segments there.
export OMPI_MCA_btl_vader_backing_directory=/dev/shm
export OMPI_MCA_osc_sm_backing_directory=/dev/shm
export OMPI_MCA_osc_rdma_backing_directory=/dev/shm
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export MPX_CI_ACTIVE=1 MPX_HOSTS="${hosts[*]}" MPX_HOSTFILE="$WORK/hostfile"

# ---- the job, on host 1 ------------------------------------------------------------
if [ "$MODE" = mpirun ]; then
    set -- "$MPIRUN" "$@"
    what=mpirun
else
    what="command"
fi
t1=$(now)
# In the background, so that INT/TERM/HUP reach this shell at once; they are
# passed on to timeout, which signals the job (and SIGKILLs it 10 s later).
# The lock descriptor is not inherited.
# shellcheck disable=SC2016  # $1/$@ are expanded by the inner sh
timeout -k 10 "$TMO" "$IP" netns exec "${PFX}1" "$UNSHARE" --uts --mount --propagation private \
    sh -c 'hostname "$1" && mount -t tmpfs -o mode=1777 mpxshm /dev/shm || exit 3
           shift; exec "$@"' sh "${PFX}1" "$@" 9>&- &
job=$!
sig=0
trap 'sig=1; kill -TERM "$job" 2>/dev/null || true' INT TERM HUP
rc=0
wait "$job" || rc=$?
while kill -0 "$job" 2>/dev/null; do rc=0; wait "$job" || rc=$?; done
[ "$sig" = 0 ] || rc=130
if [ "$rc" = 124 ] && [ "$sig" = 0 ]; then
    say "$what hit the ${TMO} s time limit"
fi
say "$what exit $rc after $(since "$t1") s"
exit "$rc"
