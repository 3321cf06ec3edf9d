#!/bin/sh
# node-problem-detector custom plugin (docs/integrations.md, "Kubernetes"). It runs no
# TensorFlow and no tfdoctor: it reads the report the tfdoctor DaemonSet writes on the node
# (tfdoctor-node.sh), so NPD's own image needs nothing added, only the hostPath mounted.
# NPD's plugin protocol: exit 0 = OK, 1 = NonOK, anything else = Unknown; the first line of
# stdout is the condition message (cut to max_output_length).
#   healthy -> OK; problems -> NonOK with the root cause; incomplete, failed, missing or a
#   report older than TFDOCTOR_MAX_AGE seconds -> Unknown (an old verdict is not a current one).
set -u
DIR=${TFDOCTOR_STATE_DIR:-/var/lib/tfdoctor}
MAX_AGE=${TFDOCTOR_MAX_AGE:-1800}
report="$DIR/last.json"
if [ -f "$DIR/failed" ]; then echo "tfdoctor: did not run (exit $(cat "$DIR/failed"))"; exit 2; fi
if [ ! -f "$report" ]; then echo "tfdoctor: no report yet ($report)"; exit 2; fi
age=$(( $(date +%s) - $(stat -c %Y "$report") ))
if [ "$age" -gt "$MAX_AGE" ]; then echo "tfdoctor: report is stale (${age}s old)"; exit 2; fi
status=$(sed -n 's/^ *"status": *"\([a-z]*\)".*/\1/p' "$report" | head -n 1)
cause=$(sed -n 's/^ *"root_cause": *"\([a-z0-9-]*\)".*/\1/p' "$report" | head -n 1)
case $status in
healthy) echo "tfdoctor: healthy"; exit 0 ;;
problems) echo "tfdoctor: ${cause:-problems found}"; exit 1 ;;
incomplete) echo "tfdoctor: could not check"; exit 2 ;;
*) echo "tfdoctor: unreadable report"; exit 2 ;;
esac
