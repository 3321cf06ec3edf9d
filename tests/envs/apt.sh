#!/usr/bin/env bash
# The Debian packages tests/integrations runs for real (slurmctld/slurmd/munge, promtool,
# prometheus, node_exporter, cloud-init) and the shells tests/launch activates venvs in (zsh,
# fish, dash, tcsh), and chromium, which looks at the HTML report headless (tests/share).
# Idempotent and quick when all are there: nothing is asked of apt unless a
# program is missing. Installs only as root (CI); otherwise it names what is missing and
# exits 0, and those tests skip (locally) or fail (CI=true).
set -euo pipefail
packages=(slurmctld:slurmctld slurmd:slurmd munged:munge promtool:prometheus prometheus:prometheus
          prometheus-node-exporter:prometheus-node-exporter cloud-init:cloud-init scontrol:slurm-client
          zsh:zsh fish:fish dash:dash tcsh:tcsh chromium:chromium)
missing=()
for entry in "${packages[@]}"; do
  program=${entry%%:*} package=${entry#*:}
  if ! PATH="$PATH:/usr/sbin:/sbin" command -v "$program" > /dev/null 2>&1; then
    [[ " ${missing[*]-} " == *" $package "* ]] || missing+=("$package")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "tests/envs/apt.sh: integration programs ready" >&2
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get > /dev/null; then
  echo "tests/envs/apt.sh: missing ${missing[*]} (as root: apt-get install ${missing[*]}); their tests will skip, or fail under CI=true" >&2
  exit 0
fi
echo "tests/envs/apt.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq < /dev/null
# --no-install-recommends: no services pulled in beyond the programs; policy-rc.d keeps the
# packages' own units from starting (the tests start their daemons themselves, on 127.0.0.1).
policy=/usr/sbin/policy-rc.d
made_policy=0
if [ ! -e "$policy" ]; then printf '#!/bin/sh\nexit 101\n' > "$policy"; chmod 755 "$policy"; made_policy=1; fi
trap 'if [ "$made_policy" = 1 ]; then rm -f "$policy"; fi' EXIT
apt-get install -y -qq --no-install-recommends "${missing[@]}" < /dev/null > /dev/null
