"""How much a test run downloads: bytes received on the network interfaces, and what pip fetched.

Issue 12 asks that a warm CI run (tests/envs' cached venvs already made) downloads well under
1 GB; it used to be about 6.8 GB, because the real-venv fix tests installed fresh TensorFlow
venvs. This runs a command (by default the README's test command on the given test paths) and
reports two figures:

- `interfaces`: bytes received on every non-loopback interface (/proc/net/dev, before and
  after). Exact, but it counts the whole machine's traffic (another process downloading at the
  same time adds to it) and misses a package index or mirror reached over loopback.
- `pip`: what every pip the command started fetched over HTTP(S), summed from pip's own log:
  PIP_LOG is set for the command, every pip child inherits it and appends its debug log, which
  names each request with its Content-Length (urllib3: `"GET /path HTTP/1.1" 200 1694939`).
  Files pip reads from a `file://` index or a find-links directory are not downloads and are
  not counted; a pip started with an environment that drops PIP_LOG is not seen either.

usage: python benchmarks/ci_download.py [--json] [--command CMD] [TEST-PATH...]
  e.g. python benchmarks/ci_download.py tests/fixing tests/launch
Exit status: the command's own (2 for a bad command line, in one line).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

TEST_COMMAND = ".venv/bin/python -m pytest -q -x -p no:cacheprovider"
"""The README's test command (as run on CI), to which the test paths are appended."""
GET = re.compile(r'"(?:GET|POST) (\S+) HTTP/[\d.]+" (\d{3}) (\d+|None)')
HOST = re.compile(r"(https?://[^\s\"]+?:\d+) \"(?:GET|POST) ")


def received_bytes(dev: str = "/proc/net/dev") -> int | None:
    """Bytes received so far on every interface but loopback; None where the file is missing."""
    try:
        lines = Path(dev).read_text().splitlines()[2:]
    except OSError:
        return None
    total = 0
    for line in lines:
        name, _, counters = line.partition(":")
        if name.strip() != "lo" and counters.split():
            total += int(counters.split()[0])
    return total


def pip_fetches(log: str) -> list[tuple[str, int]]:
    """(URL, bytes) of every HTTP(S) response pip logged; a response without a length counts 0."""
    fetched = []
    for line in log.splitlines():
        match = GET.search(line)
        if match is None:
            continue
        host = HOST.search(line)
        size = 0 if match.group(3) == "None" else int(match.group(3))
        fetched.append(((host.group(1) if host else "") + match.group(1), size))
    return fetched


def measure(argv: list[str], cwd: Path) -> dict[str, object]:
    """Run argv with PIP_LOG set; the figures, the command and its exit status."""
    with tempfile.TemporaryDirectory(prefix="tfdoctor-ci-download-") as tmp:
        log = Path(tmp, "pip.log")
        env = dict(os.environ, PIP_LOG=str(log))
        before = received_bytes()
        done = subprocess.run(argv, cwd=cwd, env=env, check=False)
        after = received_bytes()
        fetches = pip_fetches(log.read_text(errors="replace") if log.exists() else "")
    largest = sorted(fetches, key=lambda f: -f[1])[:10]
    return {
        "command": shlex.join(argv),
        "returncode": done.returncode,
        "interfaces_bytes": None if before is None or after is None else after - before,
        "pip_bytes": sum(size for _url, size in fetches),
        "pip_requests": len(fetches),
        "pip_largest": [{"url": url, "bytes": size} for url, size in largest],
    }


def render(result: dict[str, object]) -> str:
    def mb(n: object) -> str:
        return "unknown" if not isinstance(n, int) else f"{n / 1e6:.1f} MB"

    lines = [f"command: {result['command']} (exit {result['returncode']})",
             f"received on non-loopback interfaces: {mb(result['interfaces_bytes'])} "
             "(the whole machine's traffic)",
             f"fetched by pip over HTTP(S): {mb(result['pip_bytes'])} "
             f"in {result['pip_requests']} request(s)"]
    largest = result["pip_largest"]
    assert isinstance(largest, list)
    lines += [f"  {mb(item['bytes']):>10}  {item['url']}" for item in largest if item["bytes"]]
    return "\n".join(lines) + "\n"


def main(args: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", help="test paths appended to the test command")
    parser.add_argument("--command", default=TEST_COMMAND,
                        help=f"the command, shell-quoted (default: {TEST_COMMAND!r})")
    parser.add_argument("--json", action="store_true", help="one JSON document on stdout")
    opts = parser.parse_args(args)
    try:
        argv = shlex.split(opts.command) + opts.paths
    except ValueError as exc:
        parser.exit(2, f"ci_download.py: error: --command: {exc}\n")
    if not argv:
        parser.exit(2, "ci_download.py: error: an empty command\n")
    try:
        result = measure(argv, Path(__file__).resolve().parent.parent)
    except OSError as exc:
        parser.exit(2, f"ci_download.py: error: cannot run {argv[0]}: {exc.strerror or exc}\n")
    sys.stdout.write(json.dumps(result, indent=2) + "\n" if opts.json else render(result))
    code = result["returncode"]
    return code if isinstance(code, int) else 1


if __name__ == "__main__":
    sys.exit(main())
