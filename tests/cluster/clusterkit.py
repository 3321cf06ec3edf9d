"""Helpers of the cluster tests: a real `tfdoctor cluster` run through the CLI, process checks."""

from __future__ import annotations

import json
import time
from pathlib import Path

from click.testing import CliRunner
from tfdoctor.cli import cli

SITE = '''"""Make this interpreter's TensorFlow say it is FAKE: a stand-in for a node with another TF."""
import importlib.abc
import importlib.machinery
import sys

FAKE = "2.20.0"


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != "tensorflow":
            return None
        sys.meta_path.remove(self)
        try:
            spec = importlib.machinery.PathFinder.find_spec(name, path)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return spec
        real_exec = spec.loader.exec_module

        def exec_module(module):
            real_exec(module)
            module.__version__ = FAKE

        spec.loader.exec_module = exec_module
        return spec


sys.meta_path.insert(0, _Finder())
'''


def run_cluster(*args: str, hook: str | None = None, monkeypatch=None) -> tuple[dict, int, float, str]:
    """`tfdoctor cluster --json ARGS` in-process: (document, exit code, seconds, stderr)."""
    if monkeypatch is not None:
        if hook:
            monkeypatch.setenv("TFDOCTOR_CLUSTER_HOOK", hook)
        else:
            monkeypatch.delenv("TFDOCTOR_CLUSTER_HOOK", raising=False)
    start = time.monotonic()
    result = CliRunner().invoke(cli, ["cluster", "--json", *args], catch_exceptions=False)
    seconds = time.monotonic() - start
    return json.loads(result.stdout), result.exit_code, seconds, result.stderr


def gone(pid: int | None) -> bool:
    """No such process (a reaped child), or only a zombie that is not ours to reap."""
    if pid is None:
        return True
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0]
    except OSError:
        return True
    return state == "Z"


def no_workers_left(doc: dict) -> bool:
    return all(gone(w["pid"]) for w in doc["workers"]) and not any(
        w["survivors"] for w in doc["workers"]
    )

