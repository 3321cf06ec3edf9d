#!/bin/sh
# Install tfdoctor (and the TensorFlow it checks) into /opt/tfdoctor from a source the operator
# pinned, never from a bare package name: "tfdoctor" is not published on PyPI, and whoever
# registered it would run code as root on every node that installs it by name.
#   TFDOCTOR_SOURCE  either a git URL at a full commit:
#                      git+https://github.com/ORG/tfdoctor@0123456789abcdef0123456789abcdef01234567
#                    or a wheel URL with its hash:
#                      https://files.example.com/tfdoctor-0.1.0-py3-none-any.whl#sha256=<64 hex>
#   TFDOCTOR_TENSORFLOW  the TensorFlow requirement, e.g. "tensorflow[and-cuda]==2.21.0" ("" for none)
#   TFDOCTOR_PREFIX  the venv (default /opt/tfdoctor); tfdoctor is linked into /usr/local/bin
set -eu
SOURCE=${TFDOCTOR_SOURCE:-}
TENSORFLOW=${TFDOCTOR_TENSORFLOW-tensorflow[and-cuda]==2.21.0}
PREFIX=${TFDOCTOR_PREFIX:-/opt/tfdoctor}

die() { echo "tfdoctor-install: $*" >&2; exit 1; }
hex() { printf '%s' "$1" | grep -Eq "^[0-9a-f]{$2}\$"; }

case $SOURCE in
git+https://*@*)
    commit=${SOURCE##*@}
    hex "$commit" 40 || die "TFDOCTOR_SOURCE must pin a full 40-hex commit (…@<commit>), not '$commit'"
    command -v git >/dev/null || die "git is needed for a git source (apt-get install git)"
    ;;
https://*.whl\#sha256=*)
    hex "${SOURCE##*#sha256=}" 64 || die "TFDOCTOR_SOURCE needs the wheel's sha256 (…whl#sha256=<64 hex>)"
    ;;
"") die "set TFDOCTOR_SOURCE to a git URL at a commit or a wheel URL with its sha256 (docs/integrations.md)" ;;
*) die "TFDOCTOR_SOURCE '$SOURCE' is not pinned: use git+https://…@<commit> or https://….whl#sha256=<hash>" ;;
esac
python3 -c 'import ensurepip, venv' 2>/dev/null || die "python3-venv is missing (apt-get install python3-venv)"

[ -x "$PREFIX/bin/python" ] || python3 -m venv "$PREFIX"
"$PREFIX/bin/python" -m pip install --quiet --disable-pip-version-check "tfdoctor @ $SOURCE"
if [ -n "$TENSORFLOW" ]; then
    "$PREFIX/bin/python" -m pip install --quiet --disable-pip-version-check "$TENSORFLOW"
fi
ln -sf "$PREFIX/bin/tfdoctor" /usr/local/bin/tfdoctor
echo "tfdoctor-install: $("$PREFIX/bin/tfdoctor" --version) from $SOURCE"
