#!/usr/bin/env bash
# tests/mpi/test_mpx_probe.sh MPX_CI_SH - scripts/mpx-ci.sh's probe of named
# network namespaces must not mistake a leftover for an unusable machine.
#
# A probe killed between its `ip netns add` and `ip netns del` leaves its
# namespace behind. Named by PID alone, that leftover made a later probe with
# the same PID (PID reuse, another PID namespace) fail with "File exists", so
# every run of the emulation exited 77. This test plants, under its own
# prefix (MPX_PFX=mpxtp, so nothing else is touched):
#   - leftovers: an old-style name (PID only) and names created over a minute
#     ago: --check must remove them;
#   - a young probe of someone else: --check must leave it;
#   - names the probe itself will choose (our PID, this second and the next):
#     --check must still pass, by another name.
# Exit 77 (skipped) when the emulation is not possible here at all, with
# mpx-ci.sh's reason; in CI (environment CI=true, also 1 or yes) exit 1
# instead: there the emulation must work (tests/multinode.cmake).
set -u
MPX=${1:?usage: test_mpx_probe.sh path/to/mpx-ci.sh}
export MPX_PFX=mpxtp
P=$MPX_PFX-chk
if [ "$(id -u)" != 0 ] || ! bash "$MPX" --check 2>/dev/null; then
    why=$(bash "$MPX" --check 2>&1)
    case "$(echo "${CI:-}" | tr '[:upper:]' '[:lower:]')" in
        true|1|yes)
            echo "FAIL: the emulation is not possible here: ${why:-uid $(id -u), not root}" \
                 "(CI=true: multinode_mpx_probe fails instead of skipping)"
            exit 1 ;;
    esac
    echo "skipped: the emulation is not possible here: ${why:-uid $(id -u), not root}"
    exit 77
fi
fails=0
ours() { ip netns list 2>/dev/null | awk '{ print $1 }' | grep -E "^$P" | sort; }
cleanup() { local ns; for ns in $(ours); do ip netns del "$ns" 2>/dev/null; done; }
cleanup
t=$(date +%s)
stale="${P}4242 ${P}4243-$((t - 3600)) ${P}4244-$((t - 61))-17"
young="${P}4245-$((t - 2))"
for ns in $stale $young; do ip netns add "$ns" || { echo "FAIL: cannot plant $ns"; cleanup; exit 1; }; done
# the probe runs with this subshell's PID (exec keeps it)
out=$( (pid=$BASHPID; s=$(date +%s)
        ip netns add "${P}$pid" && ip netns add "${P}$pid-$s" && ip netns add "${P}$pid-$((s + 1))" || exit 99
        exec bash "$MPX" --check) 2>&1 )
rc=$?
left=$(ours | tr '\n' ' ')
echo "--check exit $rc; output: ${out:-(none)}"
echo "namespaces left under $P: ${left:-(none)}"
[ "$rc" = 0 ] || { echo "FAIL: --check exit $rc with leftovers present, expected 0"; fails=1; }
for ns in $stale; do
    case " $left " in *" $ns "*) echo "FAIL: leftover $ns was not removed"; fails=1 ;; esac
done
case " $left " in *" $young "*) ;; *) echo "FAIL: a young probe's $young was removed"; fails=1 ;; esac
cleanup
[ "$fails" = 0 ] && echo "ok: leftovers removed, a young probe kept, a taken name avoided"
exit "$fails"
