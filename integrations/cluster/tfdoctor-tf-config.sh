#!/bin/sh
# Entry point of each pod of the indexed Job in job.yaml: builds this pod's TF_CONFIG from its
# completion index (worker 0 is the chief) and runs `tfdoctor cluster --launcher tf-config`.
# The chief prints the cluster report (--json) in its log; the others print one line on stderr.
# Settings (the Job sets them): TFDOCTOR_WORKERS, TFDOCTOR_PORT, TFDOCTOR_HOST_PATTERN (one
# worker's host name with {i} for its index: the pods' DNS names under the headless Service).
set -eu
: "${JOB_COMPLETION_INDEX:?run as a pod of an Indexed Job}"
: "${TFDOCTOR_WORKERS:?}" "${TFDOCTOR_HOST_PATTERN:?}"
PORT=${TFDOCTOR_PORT:-23456}
PORT_STEP=${TFDOCTOR_PORT_STEP:-0}   # 0 in a pod (own IP each); 1 when workers share a host
workers=""
i=0
while [ "$i" -lt "$TFDOCTOR_WORKERS" ]; do
    host=$(printf '%s' "$TFDOCTOR_HOST_PATTERN" | sed "s/{i}/$i/g")
    workers="$workers${workers:+,}\"$host:$((PORT + i * PORT_STEP))\""
    i=$((i + 1))
done
TF_CONFIG="{\"cluster\": {\"worker\": [$workers]}, \"task\": {\"type\": \"worker\", \"index\": $JOB_COMPLETION_INDEX}}"
export TF_CONFIG
exec "${TFDOCTOR:-tfdoctor}" cluster --launcher tf-config --python "${TFDOCTOR_PYTHON:-python3}" \
    --timeout "${TFDOCTOR_TIMEOUT:-300}" --json "$@"
