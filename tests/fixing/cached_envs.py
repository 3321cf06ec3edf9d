"""Copies of the cached real TensorFlow venvs (tests/envs/setup.sh) that a test may break.

A copy costs about a second and no download: lib/ is hard-linked (pip and tfdoctor replace
files by unlinking them first, never writing into them, so the cache is never touched) and bin/
and pyvenv.cfg are real copies (the activation hook edits bin/activate in place).

`add_pause` puts a small module into a copy that stops a chosen moment of a real pip run until
the test says so, so real signals can be sent at exact moments of an apply:
  TFDOCTOR_TEST_PAUSE=start    the first package listing of the apply (before pip starts)
  TFDOCTOR_TEST_PAUSE=install  pip's first write into google/protobuf/ (the old protobuf is
                               already moved aside by pip: mid-install); the next package
                               listing after that (the rollback's) then waits ROLLBACK_PAUSE s
  TFDOCTOR_TEST_PAUSE=judge    the first target probe after pip wrote into google/protobuf/
                               (pip has finished: the apply's judge, before the apply returns)
It writes `paused` (pid inside) and `rollback-paused` into TFDOCTOR_TEST_PAUSE_DIR and waits
for a `release` file there.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

from helpers import need

ENVS = Path(os.environ.get("TFDOCTOR_TEST_ENVS",
                           Path.home() / ".cache" / "tfdoctor" / "test-envs"))
ROLLBACK_PAUSE = 2.0
PAUSE = f'''
import os, sys, time
_mode, _dir = os.environ.get("TFDOCTOR_TEST_PAUSE"), os.environ.get("TFDOCTOR_TEST_PAUSE_DIR", "")


def _mark(name):
    with open(os.path.join(_dir, name), "w") as f:
        f.write(str(os.getpid()))


def _pause():
    _mark("paused")
    while not os.path.exists(os.path.join(_dir, "release")):
        time.sleep(0.05)


_listing = sys.argv[:1] and sys.argv[0].endswith("_dists_child.py")
if _mode and _listing and os.path.exists(os.path.join(_dir, "paused")) \\
        and not os.path.exists(os.path.join(_dir, "rollback-paused")):
    _mark("rollback-paused")
    time.sleep({ROLLBACK_PAUSE})
elif _mode == "start" and _listing and not os.path.exists(os.path.join(_dir, "paused")):
    _pause()
elif _mode == "install":
    def _hook(event, args):
        if event == "open" and isinstance(args[0], str) and "/google/protobuf/" in args[0] \\
                and "w" in str(args[1]) and not os.path.exists(os.path.join(_dir, "paused")):
            _pause()
    sys.addaudithook(_hook)
elif _mode == "judge" and sys.argv[:1] and sys.argv[0].endswith("_target_child.py"):
    if os.path.exists(os.path.join(_dir, "pip-wrote")) \\
            and not os.path.exists(os.path.join(_dir, "paused")):
        _pause()
elif _mode == "judge":
    def _hook(event, args):
        if event == "open" and isinstance(args[0], str) and "/google/protobuf/" in args[0] \\
                and "w" in str(args[1]) and not os.path.exists(os.path.join(_dir, "pip-wrote")):
            _mark("pip-wrote")
    sys.addaudithook(_hook)
'''


def cached_env(name: str) -> Path:
    """The cached venv `name` (tf-cpu, tf-cuda); skips when tests/envs/setup.sh has not run."""
    src = ENVS / name
    if not (src / "bin" / "python").exists():
        need(False, f"no cached {name} venv: run tests/envs/setup.sh (./install.sh --dev)")
    return src


WHEELS = Path(os.environ.get("TFDOCTOR_TEST_WHEELS",
                             Path.home() / ".cache" / "tfdoctor" / "test-wheels"))


def cached_wheels(python: str, *requirements: str) -> Path:
    """A directory holding a wheel for each exact `name==version` (no dependencies; for the
    interpreter `python`), downloaded the first time only: the big ones (a cuDNN wheel is 600+ MB)
    would otherwise be fetched by every run wherever pip's own cache is cold, off or not kept
    between CI runs."""
    WHEELS.mkdir(parents=True, exist_ok=True)
    for req in requirements:
        name, version = req.split("==")
        stem = f"{name.replace('-', '_')}-{version}-"
        if not any(p.name.startswith(stem) for p in WHEELS.glob("*.whl")):
            done = subprocess.run([python, "-m", "pip", "download", "--quiet", "--no-deps",
                                   "--only-binary", ":all:", "--disable-pip-version-check",
                                   "-d", str(WHEELS), req], capture_output=True, text=True)
            need(done.returncode == 0, f"cannot download {req}: {done.stderr.strip()[-300:]}")
    return WHEELS


def copy_env(src: Path, dest: Path) -> Path:
    """A private, breakable copy of venv `src` at `dest`; returns dest."""
    dest.mkdir(parents=True)
    for item in src.iterdir():
        if item.name in ("bin", "pyvenv.cfg") or item.is_symlink():
            if item.is_dir() and not item.is_symlink():
                shutil.copytree(item, dest / item.name, symlinks=True)
            else:
                shutil.copy2(item, dest / item.name, follow_symlinks=False)
            continue
        done = subprocess.run(["cp", "-al", str(item), str(dest / item.name)],
                              capture_output=True)
        if done.returncode != 0:  # another file system: a real copy
            subprocess.run(["cp", "-a", str(item), str(dest / item.name)], check=True)
    return dest


def site_packages(env: Path) -> Path:
    return next(env.glob("lib/python3*/site-packages"))


def add_pause(env: Path) -> None:
    """Install the pause module (inert unless TFDOCTOR_TEST_PAUSE is set) and compile it, so
    it is part of the state before the test and no later run adds its .pyc."""
    site = site_packages(env)
    (site / "tfdoctor_test_pause.py").write_text(PAUSE)
    (site / "tfdoctor_test_pause.pth").write_text("import tfdoctor_test_pause\n")
    subprocess.run([str(env / "bin" / "python"), "-I", "-c", "pass"], check=True)  # -I: writes .pyc


def wait_for(path: Path, timeout: float = 180.0) -> None:
    end = time.monotonic() + timeout
    while not path.exists():
        if time.monotonic() > end:
            raise AssertionError(f"{path} never appeared")
        time.sleep(0.05)


def processes_using(env: Path) -> list[str]:
    """Command lines of running processes that mention this venv (an orphaned pip would)."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            cmd = Path(entry.path, "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = Path(entry.path, "stat").read_text().split(") ", 1)[1][0]
        except (OSError, IndexError):
            continue
        if str(env) in cmd and state != "Z":
            found.append(f"{entry.name}: {cmd}")
    return found


def tree(root: Path) -> dict[str, tuple[str, str]]:
    """Every path under root -> (mode, sha256 of its bytes or link target): file hashes."""
    import hashlib

    found = {}
    for dirpath, _dirnames, filenames in os.walk(root):
        for name in filenames:
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            if os.path.islink(p):
                digest = "link:" + os.readlink(p)
            else:
                h = hashlib.sha256()
                with open(p, "rb") as f:
                    for chunk in iter(lambda: f.read(1 << 20), b""):
                        h.update(chunk)
                digest = h.hexdigest()
            found[os.path.relpath(p, root)] = (oct(st.st_mode), digest)
    return found


def differences(root: Path, before: dict[str, tuple[str, str]]) -> list[str]:
    """What differs from `before` (added, missing, changed paths); [] when identical."""
    now = tree(root)
    out = [f"added {p}" for p in sorted(set(now) - set(before))]
    out += [f"missing {p}" for p in sorted(set(before) - set(now))]
    out += [f"changed {p}" for p in sorted(set(now) & set(before)) if now[p] != before[p]]
    return out
