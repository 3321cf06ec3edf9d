"""Installed Jupyter kernelspecs and how a kernel's start differs from the shell's.

A kernel is started from its kernel.json: `argv` (the interpreter is argv[0], resolved on the
PATH of the process that starts it) and `env`, which Jupyter lays over the server's own
environment (jupyter_client KernelManager; `${VAR}` is expanded from that environment). Nothing
of a shell's activation happens: no `bin/activate`, no conda `activate.d`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

COMPARED = ("LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "PATH", "XLA_FLAGS",
            "TF_FORCE_GPU_ALLOW_GROWTH", "CONDA_PREFIX", "VIRTUAL_ENV")
"""Variables whose difference between the shell and the kernel changes what TensorFlow sees."""
NATIVE = ("python", "python3", f"python{sys.version_info[0]}.{sys.version_info[1]}")
"""argv[0] values jupyter_client replaces with the launching Jupyter's sys.executable."""
NAME = re.compile(r"^[A-Za-z0-9._-]+$")
"""What Jupyter accepts as a kernel name (jupyter_client.kernelspec._is_valid_kernel_name)."""


@dataclass(frozen=True, slots=True)
class KernelSpec:
    """One kernelspec: the directory it was found in, and its argv and env block."""

    name: str
    resource_dir: str
    display_name: str
    language: str
    argv: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)
    error: str | None = None
    """Why kernel.json could not be used (unreadable, not JSON, no argv)."""

    @property
    def kernel_json(self) -> str:
        return os.path.join(self.resource_dir, "kernel.json")


@dataclass(frozen=True, slots=True)
class Difference:
    """A variable (or the interpreter) that is not the same in the kernel as in this shell."""

    name: str
    shell: str | None
    kernel: str | None
    source: str
    """Where the kernel's value comes from: "kernel.json env", "inherited" or "argv"."""


def search_path(env: Mapping[str, str], prefixes: Sequence[str] = ()) -> tuple[str, ...]:
    """Kernel directories in Jupyter's order (jupyter_core.paths.jupyter_path("kernels")):
    $JUPYTER_PATH, the user data dir, each environment's share/jupyter, then the system dirs."""
    dirs = [p for p in env.get("JUPYTER_PATH", "").split(os.pathsep) if p]
    data = env.get("JUPYTER_DATA_DIR") or os.path.join(
        env.get("XDG_DATA_HOME") or os.path.join(env.get("HOME", "~"), ".local", "share"),
        "jupyter")
    dirs.append(data)
    dirs += [os.path.join(p, "share", "jupyter") for p in prefixes if p]
    dirs += ["/usr/local/share/jupyter", "/usr/share/jupyter"]
    return tuple(dict.fromkeys(os.path.join(d, "kernels") for d in dirs))


def default_prefixes(env: Mapping[str, str]) -> tuple[str, ...]:
    """The environments whose share/jupyter Jupyter would read: the active ones and tfdoctor's."""
    return tuple(dict.fromkeys(p for p in (env.get("VIRTUAL_ENV"), env.get("CONDA_PREFIX"),
                                           sys.prefix) if p))


def find_specs(kernel_dirs: Sequence[str]) -> tuple[KernelSpec, ...]:
    """Every kernelspec under these dirs; the first of a name wins, as in Jupyter."""
    found: dict[str, KernelSpec] = {}
    for directory in kernel_dirs:
        try:
            names = sorted(os.listdir(directory))
        except OSError:
            continue
        for name in names:
            resource = os.path.join(directory, name)
            key = name.lower()
            if key in found or not NAME.match(name) or not os.path.isfile(
                    os.path.join(resource, "kernel.json")):
                continue
            found[key] = read_spec(key, resource)
    return tuple(found.values())


def read_spec(name: str, resource_dir: str) -> KernelSpec:
    """One kernel.json; a broken one is a spec with `error`, never an exception."""
    path = os.path.join(resource_dir, "kernel.json")
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        argv = data["argv"]
        if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
            raise ValueError("argv is not a non-empty list of strings")
        env = data.get("env") or {}
        if not isinstance(env, dict):
            raise ValueError("env is not an object")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return KernelSpec(name, resource_dir, name, "", (), error=f"{path}: {exc}")
    return KernelSpec(name=name, resource_dir=resource_dir,
                      display_name=str(data.get("display_name") or name),
                      language=str(data.get("language") or ""), argv=tuple(argv),
                      env={str(k): str(v) for k, v in env.items()})


def kernel_env(spec: KernelSpec, launcher_env: Mapping[str, str]) -> dict[str, str]:
    """The environment the kernel process gets: the launcher's, then kernel.json's env block
    with `${VAR}` expanded from the launcher's (jupyter_client does the same)."""
    env = dict(launcher_env)
    for key, value in spec.env.items():
        env[key] = re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}",
                          lambda m: launcher_env.get(m.group(1), ""), value)
    return env


def interpreter(spec: KernelSpec, env: Mapping[str, str]) -> str | None:
    """The kernel's Python: argv[0], found on the kernel's PATH when it is a bare name; None when
    the spec is broken, it is not found, or the kernel is not a Python one."""
    if not spec.argv:
        return None
    first = spec.argv[0]
    if first in NATIVE:
        # jupyter_client runs these with the server's own sys.executable: for a spec that an
        # environment ships (<prefix>/share/jupyter/kernels), that environment's Python.
        parts = Path(spec.resource_dir).parts
        if parts[-4:-1] == ("share", "jupyter", "kernels"):
            own = Path(*parts[:-4], "bin", "python")
            if os.access(own, os.X_OK):
                return str(own)
    if os.sep not in first:
        return shutil.which(first, path=env.get("PATH", os.defpath))
    return first if os.access(first, os.X_OK) else None


def differences(spec: KernelSpec, shell_env: Mapping[str, str], shell_python: str,
                launcher_env: Mapping[str, str] | None = None) -> tuple[Difference, ...]:
    """What the kernel sees differently from this shell: the compared variables and Python."""
    launcher = shell_env if launcher_env is None else launcher_env
    env = kernel_env(spec, launcher)
    out = []
    for var in COMPARED:
        if shell_env.get(var) != env.get(var):
            source = "kernel.json env" if var in spec.env else "inherited"
            out.append(Difference(var, shell_env.get(var), env.get(var), source))
    python = interpreter(spec, env)
    if python is None or os.path.realpath(python) != os.path.realpath(shell_python):
        out.append(Difference("python", shell_python, python, "argv"))
    return tuple(out)


def describe(diff: Difference) -> str:
    """One line: `LD_LIBRARY_PATH: shell /a, kernel (unset) [kernel.json env]`."""
    def show(value: str | None) -> str:
        return "(unset)" if value is None else (value or "(empty)")

    return f"{diff.name}: shell {show(diff.shell)}, kernel {show(diff.kernel)} [{diff.source}]"
