#!/bin/sh
# tfdoctor as a Slurm HealthCheckProgram or Prolog (docs/report-and-fleet.md, "Slurm").
#
#   slurm.conf:  HealthCheckProgram=/usr/local/sbin/tfdoctor-slurm.sh
#                HealthCheckInterval=600
#   or:          Prolog=/usr/local/sbin/tfdoctor-slurm.sh
#
# tfdoctor's exit codes (docs/exit-codes.md) decide what happens to this node:
#   0 healthy        nothing; a node this script drained earlier is resumed
#   1 problems       drain the node, reason "tfdoctor: <root cause id>"
#   3 could not check  leave the node alone and log it (a hung probe is not a broken GPU)
#   2, others        leave the node alone and log it (bad arguments, tfdoctor missing, timeout)
# As a HealthCheckProgram it always exits 0 (it drains the node itself). As a Prolog it exits 1
# on problems, so Slurm requeues the job instead of starting it on a broken node.
set -u
umask 077  # the saved report names paths and devices

TFDOCTOR=${TFDOCTOR:-tfdoctor}
TFDOCTOR_ARGS=${TFDOCTOR_ARGS:---quick}
# slurmd kills a HealthCheckProgram that runs longer than 60 s (slurm.conf(5)).
TFDOCTOR_TIMEOUT=${TFDOCTOR_TIMEOUT:-50}
TFDOCTOR_STATE_DIR=${TFDOCTOR_STATE_DIR:-/var/lib/tfdoctor}
TFDOCTOR_RESUME=${TFDOCTOR_RESUME:-1}
SCONTROL=${SCONTROL:-scontrol}
NODE=${SLURMD_NODENAME:-$(hostname -s)}
if [ -n "${TFDOCTOR_SLURM_MODE:-}" ]; then MODE=$TFDOCTOR_SLURM_MODE
elif [ -n "${SLURM_JOB_ID:-}" ]; then MODE=prolog
else MODE=healthcheck; fi

log() {
    if command -v logger >/dev/null 2>&1; then logger -t tfdoctor-slurm -- "$*"
    else echo "tfdoctor-slurm: $*" >&2; fi
}

mkdir -p "$TFDOCTOR_STATE_DIR" 2>/dev/null
out="$TFDOCTOR_STATE_DIR/last.json"
( : > "$out" ) 2>/dev/null || out=$(mktemp)
extra=""
if [ -n "${TFDOCTOR_PROMETHEUS_TEXTFILE:-}" ]; then
    extra="--prometheus-textfile $TFDOCTOR_PROMETHEUS_TEXTFILE"
fi
if command -v timeout >/dev/null 2>&1; then
    # shellcheck disable=SC2086  # TFDOCTOR_ARGS is a list of options on purpose
    timeout "$TFDOCTOR_TIMEOUT" "$TFDOCTOR" $TFDOCTOR_ARGS $extra --json >"$out" 2>/dev/null
else
    # shellcheck disable=SC2086
    "$TFDOCTOR" $TFDOCTOR_ARGS $extra --json >"$out" 2>/dev/null
fi
rc=$?
# The verdict's root cause is on its own line in the indented --json document.
cause=$(sed -n 's/^ *"root_cause": *"\([a-z0-9-]*\)".*/\1/p' "$out" | head -n 1)

case $rc in
0)
    if [ "$TFDOCTOR_RESUME" = 1 ] && "$SCONTROL" -o show node "$NODE" 2>/dev/null \
            | grep -q 'Reason=tfdoctor:'; then
        log "healthy again: resuming $NODE (drained by tfdoctor)"
        "$SCONTROL" update NodeName="$NODE" State=RESUME
    fi
    ;;
1)
    log "problems on $NODE (root cause: ${cause:-none named}); draining; report: $out"
    "$SCONTROL" update NodeName="$NODE" State=DRAIN Reason="tfdoctor: ${cause:-problems found}"
    [ "$MODE" = prolog ] && exit 1
    ;;
3)
    log "could not check $NODE (a probe timed out or crashed); node left alone; report: $out"
    ;;
2)
    log "tfdoctor rejected its arguments or input (exit 2; TFDOCTOR_ARGS='$TFDOCTOR_ARGS'); node left alone"
    ;;
124)
    log "tfdoctor did not finish within ${TFDOCTOR_TIMEOUT}s; node left alone"
    ;;
*)
    log "tfdoctor failed to run (exit $rc); node left alone"
    ;;
esac
exit 0
