#!/bin/sh
# tfdoctor as a Slurm HealthCheckProgram (or Prolog): drain a node TensorFlow cannot use, with
# the root cause as the reason, and resume it once it is healthy again (docs/integrations.md).
#
#   slurm.conf:  HealthCheckProgram=/usr/local/sbin/tfdoctor-slurm.sh
#                HealthCheckInterval=600
#
# slurmd runs a HealthCheckProgram with no environment but SLURMD_NODENAME (no PATH, none of
# your variables), so everything this script needs is an absolute path or comes from the
# settings file below, a shell fragment of VAR=value lines (integrations/slurm/tfdoctor.default).
#
# tfdoctor's exit codes (docs/exit-codes.md) decide what happens to this node:
#   0 healthy          a node that THIS script drained is resumed (never one drained by others)
#   1 problems         drain the node; the reason is the root cause id, e.g. "driver-not-loaded"
#   3 could not check  leave the node alone, log it (a hung probe is not a broken GPU)
#   2, 124 (timed out), 126/127 (cannot run tfdoctor), others
#                      tfdoctor failed: log it at error priority and exit 1, so slurmd logs
#                      "error: health_check failed"; never read as healthy (no resume), and
#                      drained too with TFDOCTOR_ON_ERROR=drain
# As a HealthCheckProgram it exits 0 unless tfdoctor failed. As a Prolog (SLURM_JOB_ID set) it
# drains and exits 1 on problems: Slurm keeps that reason and requeues a batch job, HELD unless
# SchedulerParameters=nohold_on_prolog_fail (docs/integrations.md, "Prolog").
set -u
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export PATH
umask 077  # the saved report names paths and devices

# The settings file; edit this line to keep it elsewhere.
TFDOCTOR_CONFIG=${TFDOCTOR_CONFIG:-/etc/default/tfdoctor}

TFDOCTOR=${TFDOCTOR:-}              # default: /opt/tfdoctor/bin/tfdoctor, /usr/local/bin/tfdoctor, PATH
TFDOCTOR_ARGS=${TFDOCTOR_ARGS:---quick}
TFDOCTOR_TIMEOUT=${TFDOCTOR_TIMEOUT:-50}  # slurmd kills a HealthCheckProgram after 60 s
TFDOCTOR_STATE_DIR=${TFDOCTOR_STATE_DIR:-/var/lib/tfdoctor}
TFDOCTOR_RESUME=${TFDOCTOR_RESUME:-1}
TFDOCTOR_ON_ERROR=${TFDOCTOR_ON_ERROR:-log}  # log | drain
TFDOCTOR_PROMETHEUS_TEXTFILE=${TFDOCTOR_PROMETHEUS_TEXTFILE:-}
SCONTROL=${SCONTROL:-}
if [ -r "$TFDOCTOR_CONFIG" ]; then
    # shellcheck disable=SC1090
    . "$TFDOCTOR_CONFIG"
fi
[ -n "${SLURM_CONF:-}" ] && export SLURM_CONF

NODE=${SLURMD_NODENAME:-$(hostname -s)}
if [ -n "${TFDOCTOR_SLURM_MODE:-}" ]; then MODE=$TFDOCTOR_SLURM_MODE
elif [ -n "${SLURM_JOB_ID:-}" ]; then MODE=prolog
else MODE=healthcheck; fi

log() {  # log PRIORITY MESSAGE: syslog and stderr (slurmd keeps a failing check's stdout)
    logger -p "daemon.$1" -t tfdoctor-slurm -- "$2" 2>/dev/null
    echo "tfdoctor-slurm: $2" >&2
}

if [ -z "$TFDOCTOR" ]; then
    for candidate in /opt/tfdoctor/bin/tfdoctor /usr/local/bin/tfdoctor "$(command -v tfdoctor)"; do
        if [ -n "$candidate" ] && [ -x "$candidate" ]; then TFDOCTOR=$candidate; break; fi
    done
fi
[ -n "$SCONTROL" ] || SCONTROL=$(command -v scontrol) || SCONTROL=/usr/bin/scontrol

mkdir -p "$TFDOCTOR_STATE_DIR" 2>/dev/null
out="$TFDOCTOR_STATE_DIR/last.json"
err="$TFDOCTOR_STATE_DIR/last.stderr"
marker="$TFDOCTOR_STATE_DIR/drained-reason"
if ! ( : >"$out" ) 2>/dev/null; then out=$(mktemp); err=$(mktemp); fi

if [ -z "$TFDOCTOR" ]; then
    rc=127
    echo "tfdoctor not found (set TFDOCTOR in $TFDOCTOR_CONFIG)" >"$err"
else
    set -- $TFDOCTOR_ARGS  # a list of options on purpose
    if [ -n "$TFDOCTOR_PROMETHEUS_TEXTFILE" ]; then
        set -- "$@" --prometheus-textfile "$TFDOCTOR_PROMETHEUS_TEXTFILE"
    fi
    timeout -k 5 "$TFDOCTOR_TIMEOUT" "$TFDOCTOR" "$@" --redact --json >"$out" 2>"$err"
    rc=$?
fi

# The verdict's root cause is on its own line of the indented --json document.
cause=$(sed -n 's/^ *"root_cause": *"\([a-z0-9-]*\)".*/\1/p' "$out" | head -n 1)
node_line=$("$SCONTROL" -o show node "$NODE" 2>/dev/null)
reason_now=$(printf '%s\n' "$node_line" | sed -n 's/.* Reason=\(.*\) \[[^]]*\].*/\1/p')
drained=0
case $node_line in *State=*DRAIN*) drained=1 ;; esac

drain() {  # drain REASON, unless someone else drained the node already (their reason stays)
    if [ "$drained" = 1 ] && [ "$reason_now" != "$(cat "$marker" 2>/dev/null)" ]; then
        log warning "$NODE already drained by someone else (reason: $reason_now); left as it is"
        return
    fi
    if "$SCONTROL" update NodeName="$NODE" State=DRAIN Reason="$1"; then
        printf '%s\n' "$1" >"$marker"
    else
        log err "scontrol could not drain $NODE (reason $1)"
    fi
}

failed() {  # failed MESSAGE: tfdoctor did not produce a verdict
    tail=$(tail -n 3 "$err" 2>/dev/null | tr '\n' ' ')
    log err "$1; node NOT checked; stderr: ${tail:-none}"
    echo "tfdoctor-slurm: $1"
    if [ -n "$TFDOCTOR_PROMETHEUS_TEXTFILE" ] && [ -n "$TFDOCTOR" ]; then
        "$TFDOCTOR" integrations mark-failed "$TFDOCTOR_PROMETHEUS_TEXTFILE" --exit-code "$rc" \
            2>/dev/null
    fi
    [ "$TFDOCTOR_ON_ERROR" = drain ] && drain "tfdoctor-failed-$rc"
    [ "$MODE" = prolog ] && exit 0  # a broken doctor must not hold every job
    exit 1
}

case $rc in
0)
    if [ "$TFDOCTOR_RESUME" = 1 ] && [ -f "$marker" ]; then
        if [ "$drained" = 1 ] && [ "$reason_now" = "$(cat "$marker")" ]; then
            log info "healthy again: resuming $NODE (drained by tfdoctor: $reason_now)"
            "$SCONTROL" update NodeName="$NODE" State=RESUME && rm -f "$marker"
        else
            rm -f "$marker"  # resumed or re-drained by someone else: theirs now
        fi
    fi
    ;;
1)
    reason=${cause:-problems-found}
    log err "problems on $NODE (root cause: $reason); draining; report: $out"
    drain "$reason"
    [ "$MODE" = prolog ] && exit 1
    ;;
3) log warning "could not check $NODE (a probe timed out or crashed); node left alone; report: $out" ;;
2) failed "tfdoctor refused its arguments or input (exit 2; TFDOCTOR_ARGS='$TFDOCTOR_ARGS')" ;;
124 | 137) failed "tfdoctor did not finish within ${TFDOCTOR_TIMEOUT}s (exit $rc)" ;;
126 | 127) failed "cannot run tfdoctor '${TFDOCTOR:-not found}' (exit $rc)" ;;
*) failed "tfdoctor failed (exit $rc)" ;;
esac
exit 0
