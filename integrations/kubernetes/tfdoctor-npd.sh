#!/bin/sh
# node-problem-detector custom plugin (docs/report-and-fleet.md, "Kubernetes").
# NPD's plugin protocol: exit 0 = OK, 1 = NonOK, anything else = Unknown; the first line of
# stdout is the condition message (cut to max_output_length). tfdoctor's codes map as:
#   0 healthy -> OK, 1 problems -> NonOK, 3 could not check -> Unknown, 2/other -> Unknown.
set -u
TFDOCTOR=${TFDOCTOR:-tfdoctor}
TFDOCTOR_ARGS=${TFDOCTOR_ARGS:---quick}
TFDOCTOR_TIMEOUT=${TFDOCTOR_TIMEOUT:-50}
if command -v timeout >/dev/null 2>&1; then
    # shellcheck disable=SC2086
    out=$(timeout "$TFDOCTOR_TIMEOUT" "$TFDOCTOR" $TFDOCTOR_ARGS --json 2>/dev/null)
else
    # shellcheck disable=SC2086
    out=$("$TFDOCTOR" $TFDOCTOR_ARGS --json 2>/dev/null)
fi
rc=$?
cause=$(printf '%s\n' "$out" | sed -n 's/^ *"root_cause": *"\([a-z0-9-]*\)".*/\1/p' | head -n 1)
case $rc in
0) echo "tfdoctor: healthy"; exit 0 ;;
1) echo "tfdoctor: ${cause:-problems found}"; exit 1 ;;
3) echo "tfdoctor: could not check"; exit 2 ;;
*) echo "tfdoctor: did not run (exit $rc)"; exit 2 ;;
esac
