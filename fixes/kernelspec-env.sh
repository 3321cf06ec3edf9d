#!/bin/sh
# fix-id: kernelspec-env
# summary: Correct the env block of a Jupyter kernel's kernel.json (a kernel runs no activation script).
# needs-root: no
# reversible: yes
# covers: unset-cuda-visible-devices remove-stub-libcuda-from-path remove-from-ld-library-path
# usage: kernelspec-env.sh [--unset VAR]... [--set VAR VALUE]... KERNEL_JSON
#   --unset VAR        remove VAR from the env block (the kernel then inherits the server's)
#   --set VAR VALUE    set VAR to VALUE in the env block
#
# Jupyter lays a kernelspec's env block over the server's environment when it starts the kernel
# (jupyter_client), so a value set there (CUDA_VISIBLE_DEVICES=-1, a toolkit stubs dir on
# LD_LIBRARY_PATH) reaches the kernel however the server was started. JSON is edited with the
# python3 on PATH (json module: keys and every other field kept in order); the file's inode and
# mode are kept.
set -eu
[ "$#" -ge 1 ] || { echo "kernelspec-env: need KERNEL_JSON" >&2; exit 2; }
edits=
while [ "$#" -gt 1 ]; do
    case "$1" in
        --unset) edits="$edits
unset	$2"; shift 2 ;;
        --set) [ "$#" -gt 3 ] || { echo "kernelspec-env: --set needs VAR VALUE" >&2; exit 2; }
               edits="$edits
set	$2	$3"; shift 3 ;;
        *) echo "kernelspec-env: unknown option $1" >&2; exit 2 ;;
    esac
done
target=$1
[ -f "$target" ] || { echo "kernelspec-env: $target is not a file" >&2; exit 1; }
tmp="$target.tfdoctor-tmp"
printf '%s\n' "$edits" | python3 -c '
import json, sys
path, out = sys.argv[1], sys.argv[2]
with open(path, encoding="utf-8") as f:
    spec = json.load(f)
env = dict(spec.get("env") or {})
for line in sys.stdin.read().splitlines():
    parts = line.split("\t")
    if parts[0] == "unset":
        env.pop(parts[1], None)
    elif parts[0] == "set":
        env[parts[1]] = parts[2]
if env:
    spec["env"] = env
else:
    spec.pop("env", None)
with open(out, "w", encoding="utf-8") as f:
    json.dump(spec, f, indent=1)
    f.write("\n")
' "$target" "$tmp"
cat "$tmp" > "$target"
rm -f "$tmp"
