#!/bin/sh
# Provisioning gate (cloud-init runcmd, an Ansible task, a Packer provisioner): run tfdoctor,
# keep its report, and fail the provisioning step only when the machine is broken.
#   exit 0  healthy, or could not check (tfdoctor exit 3) unless TFDOCTOR_STRICT=1
#   exit 1  tfdoctor found problems; the report says which (tfdoctor replay REPORT)
#   exit 2  tfdoctor could not run (missing, bad arguments)
set -u
umask 077
TFDOCTOR=${TFDOCTOR:-tfdoctor}
TFDOCTOR_ARGS=${TFDOCTOR_ARGS:---quick}
REPORT=${TFDOCTOR_REPORT:-/var/log/tfdoctor-provision.json}
# shellcheck disable=SC2086
"$TFDOCTOR" $TFDOCTOR_ARGS --redact --json >"$REPORT"
rc=$?
case $rc in
0) echo "tfdoctor: healthy (report: $REPORT)"; exit 0 ;;
1) echo "tfdoctor: problems found; see $REPORT or run: tfdoctor replay $REPORT" >&2; exit 1 ;;
3)
    echo "tfdoctor: could not check everything (report: $REPORT)" >&2
    [ "${TFDOCTOR_STRICT:-0}" = 1 ] && exit 1
    exit 0 ;;
*) echo "tfdoctor: did not run (exit $rc)" >&2; exit 2 ;;
esac
