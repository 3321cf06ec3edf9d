#!/bin/sh
# The DaemonSet's loop (integrations/kubernetes/daemonset.yaml): every TFDOCTOR_INTERVAL
# seconds, diagnose this node and publish the verdict three ways, each file written whole:
#   $TFDOCTOR_STATE_DIR/last.json   the --redact --json report (node-problem-detector's plugin reads it)
#   $TFDOCTOR_TEXTFILE              node_exporter textfile metrics
#   $TFDOCTOR_FEATURES              Node Feature Discovery features.d labels:
#       feature.node.kubernetes.io/tfdoctor.verdict=healthy|problems|incomplete|failed
#       feature.node.kubernetes.io/tfdoctor.usable-gpus=<count TensorFlow can use>
#       feature.node.kubernetes.io/tfdoctor.root-cause=<finding id> (when there is one)
# TFDOCTOR_ONCE=1 runs once and exits with tfdoctor's exit code.
set -u
TFDOCTOR=${TFDOCTOR:-tfdoctor}
TFDOCTOR_ARGS=${TFDOCTOR_ARGS:---quick}
TFDOCTOR_INTERVAL=${TFDOCTOR_INTERVAL:-600}
TFDOCTOR_TIMEOUT=${TFDOCTOR_TIMEOUT:-300}
TFDOCTOR_STATE_DIR=${TFDOCTOR_STATE_DIR:-/var/lib/tfdoctor}
TFDOCTOR_TEXTFILE=${TFDOCTOR_TEXTFILE:-/textfile/tfdoctor.prom}
TFDOCTOR_FEATURES=${TFDOCTOR_FEATURES:-/features.d/tfdoctor}

publish() {  # publish FILE CONTENT: write beside, then rename (readers never see half a file)
    printf '%s\n' "$2" >"$1.tmp.$$" && mv -f "$1.tmp.$$" "$1"
}

once() {
    mkdir -p "$TFDOCTOR_STATE_DIR"
    # shellcheck disable=SC2086  # a list of options on purpose
    timeout -k 5 "$TFDOCTOR_TIMEOUT" "$TFDOCTOR" $TFDOCTOR_ARGS \
        --prometheus-textfile "$TFDOCTOR_TEXTFILE" --redact --json >"$TFDOCTOR_STATE_DIR/report.tmp.$$"
    rc=$?
    case $rc in
    0 | 1 | 3)
        mv -f "$TFDOCTOR_STATE_DIR/report.tmp.$$" "$TFDOCTOR_STATE_DIR/last.json"
        verdict=$(sed -n 's/^ *"status": *"\([a-z]*\)".*/\1/p' "$TFDOCTOR_STATE_DIR/last.json" | head -n 1)
        cause=$(sed -n 's/^ *"root_cause": *"\([a-z0-9-]*\)".*/\1/p' "$TFDOCTOR_STATE_DIR/last.json" | head -n 1)
        usable=$(sed -n 's/^tfdoctor_gpus_usable{.*} \([0-9]*\)$/\1/p' "$TFDOCTOR_TEXTFILE" | head -n 1)
        labels="tfdoctor.verdict=${verdict:-unknown}
tfdoctor.usable-gpus=${usable:-0}"
        [ -n "$cause" ] && labels="$labels
tfdoctor.root-cause=$cause"
        rm -f "$TFDOCTOR_STATE_DIR/failed"
        ;;
    *)
        # No verdict: say so everywhere; the last report stays as evidence, marked stale.
        rm -f "$TFDOCTOR_STATE_DIR/report.tmp.$$"
        echo "tfdoctor-node: tfdoctor failed (exit $rc); verdict withdrawn" >&2
        publish "$TFDOCTOR_STATE_DIR/failed" "$rc"
        "$TFDOCTOR" integrations mark-failed "$TFDOCTOR_TEXTFILE" --exit-code "$rc" || true
        labels="tfdoctor.verdict=failed"
        ;;
    esac
    mkdir -p "$(dirname "$TFDOCTOR_FEATURES")"
    publish "$TFDOCTOR_FEATURES" "$labels"
    echo "tfdoctor-node: exit $rc; labels: $(printf '%s' "$labels" | tr '\n' ' ')" >&2
    return "$rc"
}

if [ "${TFDOCTOR_ONCE:-0}" = 1 ]; then once; exit $?; fi
while true; do
    once
    sleep "$TFDOCTOR_INTERVAL"
done
